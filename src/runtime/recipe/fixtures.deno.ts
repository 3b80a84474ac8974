// Test fixtures of the recipe (Deno): a tiny text-to-SQL dataset with its SQLite database, and a
// tiny random model whose completions vary in length. A random model never writes SQL, so the
// only reward that varies between its samples is the length penalty; two end-of-sequence rows of
// the untied lm head are made opposite along one hidden dimension, so one of them always scores
// high and completions end after a few tokens, at random.
import { ChatTemplate } from "../../core/chat-template.ts";
import { buildPrompt } from "../../core/prompts.ts";
import type { RewardSpec } from "../../core/rewards.ts";
import { introspectSchema, type SqlQueryable } from "../../core/schema.ts";
import {
  CHATML_TEMPLATE,
  makeTinyModel,
  TINY_SPECIALS,
  TINY_VOCAB_SIZE,
  tinyTokenizerFiles,
} from "../../model/tiny.ts";
import { writeHfFolder } from "../../model/tiny.deno.ts";
import { loadSqlJs, loadSqlJsDeno } from "../sql-wasm.ts";

/** Writes `dir/pets/pets.sqlite`, `dir/train.jsonl` (8 questions) and `dir/test.jsonl` (4). */
export async function writeTinyDataset(dir: string): Promise<void> {
  const SQL = await loadSqlJsDeno();
  const db = new SQL.Database();
  db.exec("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, age INTEGER)");
  const rows: [string, string, number | null][] = [["Rex", "dog", 3], ["Tom", "cat", 5], ["Bo", "dog", 1], [
    "Kiki",
    "bird",
    null,
  ], ["Mia", "cat", 2]];
  rows.forEach(([n, k, a], i) => db.exec(`INSERT INTO pets VALUES (${i + 1}, '${n}', '${k}', ${a ?? "NULL"})`));
  await Deno.mkdir(`${dir}/pets`, { recursive: true });
  await Deno.writeFile(`${dir}/pets/pets.sqlite`, db.export());
  db.close();
  const q = (id: string, question: string, gold: string, difficulty: string) =>
    JSON.stringify({ id, db_id: "pets", question, gold_sql: gold, difficulty });
  const kinds = ["dog", "cat", "bird", "fish"];
  const train = kinds.flatMap((k, i) => [
    q(`t${2 * i}`, `How many ${k}s?`, `SELECT COUNT(*) FROM pets WHERE kind = '${k}'`, "simple"),
    q(`t${2 * i + 1}`, `Names of ${k}s?`, `SELECT name FROM pets WHERE kind = '${k}'`, "moderate"),
  ]);
  const test = [
    q("s0", "Oldest pet?", "SELECT name FROM pets ORDER BY age DESC LIMIT 1", "moderate"),
    q("s1", "How many pets?", "SELECT COUNT(*) FROM pets", "simple"),
    q("s2", "Pets with no age?", "SELECT name FROM pets WHERE age IS NULL", "simple"),
    q("s3", "Mean age?", "SELECT AVG(age) FROM pets", "challenging"),
  ];
  await Deno.writeTextFile(`${dir}/train.jsonl`, train.join("\n") + "\n");
  await Deno.writeTextFile(`${dir}/test.jsonl`, test.join("\n") + "\n");
}

// Qwen2's pre-tokenizer split (as tiny.ts's tokenizer uses it).
const SPLIT =
  /(?:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+/giu;

function byteChars(): string[] {
  const keep: number[] = [];
  for (let b = 0x21; b <= 0x7e; b++) keep.push(b);
  for (let b = 0xa1; b <= 0xac; b++) keep.push(b);
  for (let b = 0xae; b <= 0xff; b++) keep.push(b);
  const map: string[] = new Array(256);
  for (const b of keep) map[b] = String.fromCodePoint(b);
  let n = 0;
  for (let b = 0; b < 256; b++) if (map[b] === undefined) map[b] = String.fromCodePoint(256 + n++);
  return map;
}

/**
 * The tiny tokenizer plus BPE merges trained on `corpus` (at most `maxMerges`), new tokens from
 * id TINY_VOCAB_SIZE on: prompts of the fixture's domain shrink about
 * five-fold, which keeps trainer steps on lavapipe short. Returns the files and the vocabulary size.
 */
export function wordTokenizer(
  corpus: readonly string[],
  maxMerges = 600,
): { files: ReturnType<typeof tinyTokenizerFiles>; vocabSize: number } {
  const files = tinyTokenizerFiles();
  const model = files.tokenizerJson.model;
  if (typeof model !== "object" || model === null || !("vocab" in model) || !("merges" in model)) {
    throw new Error("tiny tokenizer has no BPE model");
  }
  const vocab: Record<string, number> = { ...(model.vocab as Record<string, number>) };
  const merges: string[] = [...(model.merges as string[])];
  const b2u = byteChars();
  const enc = new TextEncoder();
  let next = TINY_VOCAB_SIZE;
  // Plain BPE training on the corpus: merge the most frequent adjacent pair until none repeats.
  const words = new Map<string, { parts: string[]; count: number }>();
  for (const text of corpus) {
    for (const m of text.matchAll(SPLIT)) {
      const w = words.get(m[0]) ?? { parts: [...enc.encode(m[0])].map((b) => b2u[b]), count: 0 };
      w.count++;
      words.set(m[0], w);
    }
  }
  for (let round = 0; round < maxMerges; round++) {
    const pairs = new Map<string, number>();
    for (const w of words.values()) {
      for (let i = 0; i + 1 < w.parts.length; i++) {
        const k = `${w.parts[i]} ${w.parts[i + 1]}`;
        pairs.set(k, (pairs.get(k) ?? 0) + w.count);
      }
    }
    let best = "", bestCount = 1;
    for (const [k, c] of pairs) if (c > bestCount || (c === bestCount && c > 1 && k < best)) [best, bestCount] = [k, c];
    if (best === "") break;
    const [a, b] = best.split(" ");
    if (!(a + b in vocab)) vocab[a + b] = next++;
    merges.push(best);
    for (const w of words.values()) {
      const out: string[] = [];
      for (let i = 0; i < w.parts.length; i++) {
        if (i + 1 < w.parts.length && w.parts[i] === a && w.parts[i + 1] === b) {
          out.push(a + b);
          i++;
        } else out.push(w.parts[i]);
      }
      w.parts = out;
    }
  }
  return {
    files: { ...files, tokenizerJson: { ...files.tokenizerJson, model: { ...model, vocab, merges } } },
    vocabSize: next,
  };
}

/** Writes a tiny Qwen2 folder (untied head) whose completions end after a random few tokens; `corpus` words become single tokens. */
export async function writeVaryingLengthModel(
  dir: string,
  o: { seed: number; eosStrength?: number; corpus?: readonly string[] },
): Promise<void> {
  const tok = wordTokenizer(o.corpus ?? []);
  const tiny = makeTinyModel("qwen2", { seed: o.seed, tieWordEmbeddings: false, vocabSize: tok.vocabSize });
  const H = tiny.config.hiddenSize;
  const norm = tiny.weights.get("model.norm.weight");
  const head = tiny.weights.get("lm_head.weight");
  if (!norm || !head) throw new Error("tiny model lacks model.norm.weight or lm_head.weight");
  // Flatter logits (as the trainer's learning test does), so samples differ.
  norm.data.forEach((x, i) => (norm.data[i] = 0.3 * x));
  norm.data[0] = 1;
  const c = o.eosStrength ?? 4;
  for (const [id, sign] of [[TINY_SPECIALS["<|im_end|>"], 1], [TINY_SPECIALS["<|endoftext|>"], -1]] as const) {
    head.data.fill(0, id * H, (id + 1) * H);
    head.data[id * H] = sign * c;
  }
  await writeHfFolder(dir, tiny, tok.files);
}

/** The chat-rendered prompts of the tiny dataset's questions under `templates` (the corpus of `wordTokenizer`). */
export async function tinyPromptCorpus(dir: string, templates: readonly string[]): Promise<string[]> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(await Deno.readFile(`${dir}/pets/pets.sqlite`));
  const q: SqlQueryable = {
    exec: (sql) => {
      const r: unknown = db.exec(sql);
      if (!Array.isArray(r)) throw new Error("sql.js exec: unexpected result");
      return r.map((x: { columns: string[]; values: unknown[][] }) => ({ columns: x.columns, values: x.values }));
    },
  };
  const schema = introspectSchema(q, "pets");
  db.close();
  const chat = new ChatTemplate(CHATML_TEMPLATE);
  const out: string[] = [];
  for (const file of ["train.jsonl", "test.jsonl"]) {
    for (const line of (await Deno.readTextFile(`${dir}/${file}`)).split("\n").filter((l) => l.trim())) {
      const t: { question: string } = JSON.parse(line);
      for (const template of templates) {
        out.push(chat.render(buildPrompt({ question: t.question }, schema, { template }).messages));
      }
    }
  }
  return out;
}

/**
 * The tiny recipe tests' reward: execution, the error penalty and a length component that splits completions of up to
 * `maxTokens` tokens from longer ones, the one reward a random model's samples differ in.
 */
export function tinyLengthSpec(maxTokens: number): RewardSpec {
  return {
    components: [{ name: "execution", weight: 1 }, { name: "error_penalty", weight: 1 }, {
      name: "length",
      weight: 1,
      params: { maxTokens },
    }],
  };
}

/** The dataset cell of a tiny recipe notebook over writeTinyDataset's `data/` (its train split), with `params` added. */
export function tinyDatasetCell(params: Record<string, unknown> = {}) {
  return {
    id: "data",
    type: "dataset",
    params: {
      source: "url",
      questionsUrl: "data/train.jsonl",
      dbRoot: "data",
      format: "rlvr",
      split: "train",
      ...params,
    },
  };
}

/**
 * The setup cells of a tiny recipe notebook over writeTinyDataset's `data/` and a model folder `model/` (f32, LoRA
 * rank 4, alpha 8): the dataset (its dev share `devFraction` where given), the model, the prompt, the reward.
 */
export function tinySetupCells(template: string, reward: Record<string, unknown> = {}, devFraction?: number) {
  return [
    tinyDatasetCell(devFraction !== undefined ? { devFraction } : {}),
    { id: "model", type: "model", params: { source: "url", url: "model", dtype: "f32", loraRank: 4, loraAlpha: 8 } },
    { id: "prompt", type: "prompt", params: { template, maxPromptTokens: 1024 } },
    { id: "reward", type: "reward", params: reward },
  ];
}
