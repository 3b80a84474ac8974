// The sft warm-up's targets: a record's `completion` verbatim (a gold-to-CoCTE dataset line read
// back through the question loader), else the gold SQL in the template's answer format exactly as
// the pretraining corpus writes it; the training sequence and the target log-probability; and the
// warm-up cell's reader, which gives sft no export and refuses what sft cannot do by name. With
// sftTargets "cocte": the demo's training golds as chains of CTEs (the chains `rlvr cocte` writes),
// each returning its gold's rows, and the reader's default and refusal outside sft.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { parseQuestions } from "../../core/loaders.ts";
import { defaultParams, validateParams } from "../../core/notebook.ts";
import { WARMUP_METHODS } from "../../core/notebook-params.ts";
import { extractSql } from "../../core/extract.ts";
import type { DbSchema } from "../../core/schema.ts";
import type { Task } from "../../core/types.ts";
import { splitChain } from "../../core/cocte.ts";
import { cocteDatasetRecord } from "../cocte-dataset.ts";
import { executeChain } from "../cocte-exec.ts";
import { answerText } from "../pretrain/corpus.ts";
import { fileDatabaseLoader } from "../sql-files.deno.ts";
import { SqlPool } from "../sql-pool.ts";
import { afterAnswerPrefix, cocteTargets, sftSequence, sftTarget, targetLogprob } from "./sft-targets.ts";

const schema: DbSchema = {
  dbId: "concert",
  tables: [{
    name: "singer",
    columns: [{ name: "name", type: "TEXT", notNull: false, primaryKey: false, examples: [] }],
    primaryKey: [],
    foreignKeys: [],
    rowCount: 3,
  }],
};
const task: Task = {
  id: "7",
  db_id: "concert",
  question: "Names of the singers?",
  gold_sql: "SELECT name FROM singer;",
};

Deno.test("sft target: a gold-to-CoCTE record's completion, read back by the loader, is the target verbatim under any template", () => {
  const cocte = "WITH\n  -- every singer\n  step_1 AS (\n    SELECT name FROM singer\n  )\nSELECT name FROM step_1";
  const rec = cocteDatasetRecord(task, cocte, [{ name: "step_1", sql: "SELECT name FROM singer" }]);
  const loaded = parseQuestions(JSON.stringify(rec) + "\n");
  assertEquals(loaded.format, "rlvr");
  const t = loaded.items[0].task;
  assertEquals(t.completion, rec.completion);
  for (const template of ["chain-of-ctes@1", "omnisql@1", "think-answer@1"]) {
    assertEquals(sftTarget(t, template, schema), { text: rec.completion, source: "completion" }, template);
  }
  // Taken as it is even after a prompt that opens <think>, and an empty completion stays empty.
  assertEquals(sftTarget(t, "think-answer@1", schema, true).text, rec.completion);
  assertEquals(sftTarget({ ...task, completion: "" }, "omnisql@1", schema), { text: "", source: "completion" });
  assertEquals(extractSql(sftTarget(t, "chain-of-ctes@1", schema).text, { mode: "sql-block" }).sql, cocte);
  // A record without the field loads without it.
  const plain =
    parseQuestions(JSON.stringify({ id: 1, db_id: "concert", question: "q", gold_sql: "SELECT 1" }) + "\n").items[0]
      .task;
  assertEquals("completion" in plain, false);
});

Deno.test("sft target: without a completion, the gold in the template's answer format, as the pretraining corpus renders it", () => {
  const block = sftTarget(task, "chain-of-ctes@1", schema);
  assertEquals(block, { text: "```sql\nSELECT name FROM singer\n```", source: "gold" });
  assertEquals(sftTarget(task, "omnisql@1", schema).text, answerText("omnisql@1", task, schema));
  const think = sftTarget(task, "think-answer@1", schema);
  assertEquals(think.text, answerText("think-answer@1", task, schema));
  assertEquals(
    think.text,
    "<think>\nThe query reads singer.\n</think>\n<answer>\n```sql\nSELECT name FROM singer\n```\n</answer>",
  );
  assertEquals(
    sftTarget(task, "reasoning-answer@1", schema).text,
    "<reasoning>\nThe query reads singer.\n</reasoning>\n<answer>\nSELECT name FROM singer\n</answer>",
  );
  // A prompt that ends inside an opened <think>: the answer continues it.
  assertEquals(
    sftTarget(task, "think-answer@1", schema, true).text,
    "The query reads singer.\n</think>\n<answer>\n```sql\nSELECT name FROM singer\n```\n</answer>",
  );
});

Deno.test("sft target after an answer prefix (chain-of-ctes@2): what follows the prefix; null when the target does not start so", () => {
  const cocte = cocteDatasetRecord(
    task,
    "WITH\n  -- every singer\n  step_1 AS (\n    SELECT name FROM singer\n  )\nSELECT name FROM step_1",
    [],
  ).completion;
  assertEquals(
    afterAnswerPrefix(cocte, "```sql\nWITH"),
    "\n  -- every singer\n  step_1 AS (\n    SELECT name FROM singer\n  )\nSELECT name FROM step_1\n```",
  );
  assertEquals(afterAnswerPrefix("\n" + cocte, "```sql\nWITH"), afterAnswerPrefix(cocte, "```sql\nWITH"));
  // The gold as written is no chain: it cannot follow "```sql\nWITH".
  assertEquals(afterAnswerPrefix(sftTarget(task, "chain-of-ctes@2", schema).text, "```sql\nWITH"), null);
  assertEquals(afterAnswerPrefix("SELECT 1", ""), "SELECT 1");
});

Deno.test("sft sequence: prompt, target, the first end-of-sequence id; the target's mean token log-probability", () => {
  assertEquals(sftSequence([1, 2, 3], [7, 8], [99, 98]), { ids: [1, 2, 3, 7, 8, 99], promptLen: 3 });
  assertEquals(sftSequence([1], [7], []), { ids: [1, 7], promptLen: 1 });
  // Rows t = log p(ids[t+1] | ..t): the target rows of [1,2,3,7,8,99] are t = 2, 3, 4.
  const seqs = [sftSequence([1, 2, 3], [7, 8], [99]), sftSequence([5], [6], [])];
  const rows = [[-9, -9, -1, -2, -3], [-4]];
  const lp = targetLogprob(seqs, rows);
  assertEquals(lp.perSequence, [-2, -4]);
  assertEquals([lp.mean, lp.tokens], [-10 / 4, 4]);
});

Deno.test("warm-up reader: sft is a method, gets no export by default, and refuses sampleWithEvidence and an export by name", () => {
  assert((WARMUP_METHODS as readonly string[]).includes("sft"));
  const ok = validateParams("warmup", { method: "sft", rounds: 2, lr: 0.001 });
  assert(ok.ok);
  assertEquals([ok.params.method, ok.params.exportSamples, ok.params.sampleWithEvidence], ["sft", "none", false]);
  assertEquals(defaultParams("warmup").exportSamples, "correct", "the sampling methods keep their default");
  // A form holds every field: the sampling knobs' defaults are accepted (and ignored).
  const form = { ...defaultParams("warmup"), exportSamples: "none", method: "sft" };
  assert(validateParams("warmup", form).ok);
  for (
    const [key, value] of [["exportSamples", "correct"], ["exportSamples", "all"], [
      "sampleWithEvidence",
      true,
    ]] as const
  ) {
    const r = validateParams("warmup", { method: "sft", [key]: value });
    assert(!r.ok, `${key}: ${value} refused`);
    assertEquals(r.errors.map((e) => e.path), [`params.${key}`]);
    assert(r.errors[0].message.includes(`method "sft"`) && r.errors[0].message.includes(key), r.errors[0].message);
  }
  for (const m of ["rft", "awpg", "dpo"]) assert(validateParams("warmup", { method: m, exportSamples: "all" }).ok, m);
});

Deno.test({
  name:
    'sft targets "cocte": demo golds become chains of CTEs that return the gold\'s rows; a completion wins; a failing gold is counted',
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const demo = new URL("../../../public/demo/", import.meta.url).pathname;
    const tasks = parseQuestions(await Deno.readTextFile(`${demo}/train.jsonl`)).items.map((i) => i.task).slice(0, 12);
    const own = { ...tasks[1], completion: "```sql\nSELECT 1\n```" };
    const broken: Task = { ...tasks[2], id: "broken", gold_sql: "SELECT nope FROM nowhere" };
    const pool = new SqlPool({ loadDatabase: fileDatabaseLoader(demo), workers: 1, timeoutMs: 10_000 });
    try {
      const got = await cocteTargets([tasks[0], own, broken, ...tasks.slice(3)], pool);
      assertEquals(got.failed, { "gold failed": 1 });
      assertEquals([got.records[1], got.records[2]], [null, null]);
      assertEquals(sftTarget(own, "chain-of-ctes@1", schema, false, got.records[1]), {
        text: own.completion,
        source: "completion",
      });
      const kept = got.records.filter((r) => r !== null);
      assertEquals(kept.length, 10);
      for (const r of kept) {
        const t = tasks.find((x) => x.id === r.source_id);
        assert(t !== undefined && r.source_gold_sql === t.gold_sql && r.evidence === t.evidence, r.id);
        assertEquals(sftTarget(t, "chain-of-ctes@1", schema, false, r), { text: r.completion, source: "cocte" });
        const chain = splitChain(r.completion);
        assert(
          chain.steps.length >= 1 && chain.final !== null && chain.problems.length === 0,
          `${r.id}: ${chain.problems.join("; ")}`,
        );
        const exec = await executeChain(pool, r.db_id, r.completion, { sql: t.gold_sql });
        assert(exec.correct && exec.steps.every((x) => x.error === null), r.id);
      }
      // The demo's golds have subqueries: every chain has two or more CTE steps.
      assert(kept.every((r) => r.steps.length >= 2), JSON.stringify(kept.map((r) => r.steps.length)));
    } finally {
      pool.close();
    }
  },
});

Deno.test("warm-up reader: sftTargets defaults to gold, takes cocte with sft, is refused with the sampling methods", () => {
  assertEquals(defaultParams("warmup").sftTargets, "gold");
  const ok = validateParams("warmup", { method: "sft", sftTargets: "cocte" });
  assert(ok.ok && ok.params.sftTargets === "cocte");
  assert(!validateParams("warmup", { method: "sft", sftTargets: "chains" }).ok);
  for (const m of ["rft", "awpg", "dpo"]) {
    const r = validateParams("warmup", { method: m, sftTargets: "cocte" });
    assert(!r.ok && r.errors[0].path === "params.sftTargets" && r.errors[0].message.includes(`method "sft"`), m);
  }
});
