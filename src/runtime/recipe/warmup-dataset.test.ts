// The warm-up's dataset export (no GPU): completions scored on the demo shop database, then the
// records: only correct samples, one per distinct normalised SQL per question, the rlvr fields and
// the extra ones, round numbering; "all" and "none"; and the file loads back through the dataset
// loader (parseQuestions, denoEnv's loadDataset and buildSplits) as an "rlvr" dataset.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { parseQuestions } from "../../core/loaders.ts";
import { defaultParams, validateParams } from "../../core/notebook.ts";
import { REWARD_PRESETS } from "../../core/rewards.ts";
import type { Task } from "../../core/types.ts";
import { DEFAULT_LIMITS, GuardedDatabase } from "../sql-exec.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import { buildSplits } from "./data.ts";
import { denoEnv } from "./env.deno.ts";
import { Scorer } from "./scoring.ts";
import {
  encodeWarmupDataset,
  normalizeSql,
  sampleReasoning,
  warmupDatasetPath,
  type WarmupDatasetRecord,
  warmupDatasetRecords,
  type WarmupScoredSample,
} from "./warmup-dataset.ts";

const SQL = await loadSqlJs();
const demo = new URL("../../../public/demo/", import.meta.url);
const shop = new GuardedDatabase(SQL, await Deno.readFile(new URL("shop/shop.sqlite", demo)));
const runner = { query: (_db: string, sql: string) => Promise.resolve(shop.query(sql, DEFAULT_LIMITS)) };
// The generic demo questions (a concept-free template with evidence: "a product is active when is_active = 1").
const train: Task[] = parseQuestions(await Deno.readTextFile(new URL("generic.jsonl", demo))).items.map((i) => i.task);
const books = train.find((t) => t.id === "shop.products_in_category.0.0");
const electronics = train.find((t) => t.id === "shop.products_in_category.1.0");
assert(books && electronics && books.evidence && books.difficulty, "demo questions present");

Deno.test("warmup-dataset: normalizeSql ignores case, spacing and trailing semicolons outside quotes", () => {
  const a = "SELECT name FROM products WHERE category = 'Books' AND is_active = 1";
  assertEquals(normalizeSql(a), "select name from products where category='Books' and is_active=1");
  assertEquals(
    normalizeSql("select  name\nFROM products where category='Books'   and is_active=1 ;;"),
    normalizeSql(a),
  );
  assertEquals(normalizeSql("SELECT COUNT( * ) FROM t"), normalizeSql("select count(*) from t"));
  // Quoted parts keep their case and spaces; a doubled quote stays inside its string.
  assert(
    normalizeSql(a) !== normalizeSql(a.replace("'Books'", "'books'")) &&
      normalizeSql(a) !== normalizeSql(a.replace("'Books'", "'Books '")),
  );
  assertEquals(
    normalizeSql(`SELECT "My Col" FROM t WHERE s = 'it''s  A'`),
    `select "My Col" from t where s='it''s  A'`,
  );
  assert(normalizeSql("SELECT a FROM t") !== normalizeSql("SELECT b FROM t"));
});

Deno.test("warmup-dataset: reasoning is the <think> block, else the text before the SQL", () => {
  const think = "<think>Books, active only.</think>\n<answer>SELECT 1</answer>";
  assertEquals(sampleReasoning(think, { sql: "SELECT 1", source: "answer-tag" }), "Books, active only.");
  assertEquals(
    sampleReasoning("Filter on is_active.\n```sql\nSELECT 1\n```", { sql: "SELECT 1", source: "sql-block" }),
    "Filter on is_active.",
  );
  assertEquals(
    sampleReasoning("Plan first.\n<answer>SELECT 1</answer>", { sql: "SELECT 1", source: "answer-tag" }),
    "Plan first.",
  );
  assertEquals(sampleReasoning("SELECT 1", { sql: "SELECT 1", source: "whole-text" }), "");
  // The prompt opened <think>: the completion starts inside it.
  assertEquals(
    sampleReasoning("inside\n</think>\n<answer>SELECT 1</answer>", { sql: "SELECT 1", source: "answer-tag" }, true),
    "inside",
  );
});

/** Scores completions of tasks on the shop database, as the warm-up does. */
async function scoreAll(items: readonly { task: Task; completion: string }[]): Promise<WarmupScoredSample[]> {
  const scorer = new Scorer(runner, REWARD_PRESETS.databricks, "set", "auto");
  const perTask = new Map<string, number>();
  const out: WarmupScoredSample[] = [];
  for (const { task, completion } of items) {
    const s = await scorer.scoreCompletion(task, completion, 10);
    const sampleIndex = perTask.get(task.id) ?? 0;
    perTask.set(task.id, sampleIndex + 1);
    out.push({
      task,
      sampleIndex,
      completion,
      promptOpensThink: false,
      extraction: s.extraction,
      correct: s.correct,
      reward: s.reward.total,
    });
  }
  return out;
}

Deno.test("warmup-dataset: correct samples only, deduplicated per question by normalised SQL, with rlvr fields; loads back as an rlvr dataset", async () => {
  const gold = books.gold_sql;
  const samples = await scoreAll([
    { task: books, completion: `<think>Active Books products.</think>\n<answer>${gold}</answer>` }, // 0: kept
    {
      task: books,
      completion:
        "Same query, other spelling.\n```sql\nselect name  from products\nwhere category='Books' and is_active=1;\n```",
    }, // 1: duplicate of 0
    { task: books, completion: "<answer>SELECT name FROM products WHERE category = 'Books'</answer>" }, // 2: wrong (inactive ones too)
    {
      task: books,
      completion:
        "Active means 1.\n<answer>SELECT name FROM products WHERE is_active = 1 AND category = 'Books'</answer>",
    }, // 3: kept (other SQL, same result)
    { task: books, completion: "no sql here" }, // 4: nothing extracted
    { task: electronics, completion: `<answer>${books.gold_sql}</answer>` }, // 0: wrong question's answer
    { task: electronics, completion: `<answer>${electronics.gold_sql}</answer>` }, // 1: kept
    { task: electronics, completion: `<answer>${electronics.gold_sql};</answer>` }, // 2: duplicate of 1
  ]);
  assertEquals(
    samples.map((s) => s.correct),
    [true, true, false, true, false, false, true, true],
    "the scorer's verdicts the test relies on",
  );

  const { records, questions } = warmupDatasetRecords(samples, 3, "correct");
  assertEquals(questions, 2);
  assertEquals(records.map((r) => r.id), [`${books.id}/r3/s0`, `${books.id}/r3/s3`, `${electronics.id}/r3/s1`]);
  assert(
    records.every((r) => r.correct && r.round === 3 && r.reward === samples[0].reward),
    "only correct samples, round numbered, reward kept",
  );
  const [first, second, third] = records;
  assertEquals(
    first,
    {
      id: `${books.id}/r3/s0`,
      db_id: "shop",
      question: books.question,
      gold_sql: gold,
      sql: gold,
      reasoning: "Active Books products.",
      completion: samples[0].completion,
      reward: samples[0].reward,
      correct: true,
      round: 3,
      sample_index: 0,
      source_id: books.id,
      source_gold_sql: gold,
      evidence: books.evidence,
      difficulty: books.difficulty,
    } satisfies WarmupDatasetRecord,
  );
  assertEquals([second.gold_sql, second.reasoning, second.source_gold_sql], [
    "SELECT name FROM products WHERE is_active = 1 AND category = 'Books'",
    "Active means 1.",
    gold,
  ]);
  assertEquals([third.gold_sql, third.reasoning, third.source_id], [electronics.gold_sql, "", electronics.id]);
  assertEquals(warmupDatasetPath("warm", 3), "warmup/warm/round-3.jsonl");

  // The file loads back as an rlvr dataset: through parseQuestions, and through the Deno env's loader and the splits.
  const text = encodeWarmupDataset(records);
  assertEquals(text.split("\n").length, records.length + 1);
  const loaded = parseQuestions(text);
  assertEquals([loaded.format, loaded.problems, loaded.records], ["rlvr", [], 3]);
  assertEquals(
    loaded.items.map((i) => i.task),
    records.map((r) => ({
      id: r.id,
      db_id: r.db_id,
      question: r.question,
      gold_sql: r.gold_sql,
      evidence: r.evidence,
      difficulty: r.difficulty,
      completion: r.completion,
    })),
  );
  const dir = await Deno.makeTempDir({ prefix: "rlvr-warmup-ds-" });
  await Deno.mkdir(`${dir}/warmup/warm`, { recursive: true });
  await Deno.writeTextFile(`${dir}/${warmupDatasetPath("warm", 3)}`, text);
  const p = {
    ...defaultParams("dataset"),
    source: "url" as const,
    format: "rlvr" as const,
    questionsUrl: warmupDatasetPath("warm", 3),
    split: "train",
    devFraction: 0,
  };
  const src = await denoEnv({ out: dir, base: dir }).loadDataset(p);
  const splits = buildSplits(p, src.splits);
  assertEquals(splits.train.map((t) => t.id), records.map((r) => r.id));
  // Each loaded gold query is correct for its question: a scorer over the loaded tasks accepts it.
  const scorer = new Scorer(runner, REWARD_PRESETS.databricks, "set", "auto");
  for (const t of splits.train) {
    const source = train.find((x) => x.id === records.find((r) => r.id === t.id)?.source_id);
    assert(
      source && (await scorer.scoreCompletion(source, `<answer>${t.gold_sql}</answer>`, 1)).correct,
      `${t.id}'s gold_sql answers its source question`,
    );
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test('warmup-dataset: "all" keeps every sample with its correctness (gold_sql the source\'s unless correct); "none" nothing', async () => {
  const samples = await scoreAll([
    { task: books, completion: `<answer>${books.gold_sql}</answer>` },
    { task: books, completion: `<answer>${books.gold_sql}</answer>` },
    { task: electronics, completion: "nothing" },
  ]);
  const all = warmupDatasetRecords(samples, 1, "all");
  assertEquals(all.questions, 2);
  assertEquals(all.records.map((r) => [r.id, r.correct, r.sql, r.gold_sql]), [
    [`${books.id}/r1/s0`, true, books.gold_sql, books.gold_sql],
    [`${books.id}/r1/s1`, true, books.gold_sql, books.gold_sql],
    [`${electronics.id}/r1/s0`, false, null, electronics.gold_sql],
  ]);
  assertEquals(all.records[2].reasoning, "nothing");
  const loaded = parseQuestions(encodeWarmupDataset(all.records));
  assertEquals([loaded.format, loaded.problems.length, loaded.items.length], ["rlvr", 0, 3]);
  assertEquals(warmupDatasetRecords(samples, 1, "none"), { records: [], questions: 0 });
  assertEquals(warmupDatasetRecords(samples.filter((s) => !s.correct), 2, "correct"), { records: [], questions: 0 });
  assertEquals(encodeWarmupDataset([]), "");
});

Deno.test('warmup cell: exportSamples defaults to "correct", takes "all" and "none", refuses anything else', () => {
  assertEquals(defaultParams("warmup").exportSamples, "correct");
  for (const v of ["correct", "all", "none"] as const) {
    const r = validateParams("warmup", { exportSamples: v });
    assert(r.ok && r.params.exportSamples === v, JSON.stringify(r));
  }
  for (const bad of ["some", 1, null]) {
    const r = validateParams("warmup", { exportSamples: bad });
    assert(!r.ok, `accepted ${JSON.stringify(bad)}`);
    assertEquals(r.errors.map((e) => e.path), ["params.exportSamples"]);
  }
});
