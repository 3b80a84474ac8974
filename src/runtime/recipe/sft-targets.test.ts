// The sft warm-up's targets: a record's `completion` verbatim (a gold-to-CoCTE dataset line read
// back through the question loader), else the gold SQL in the template's answer format exactly as
// the pretraining corpus writes it; the training sequence and the target log-probability; and the
// warm-up cell's reader, which gives sft no export and refuses what sft cannot do by name.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { parseQuestions } from "../../core/loaders.ts";
import { defaultParams, validateParams } from "../../core/notebook.ts";
import { WARMUP_METHODS } from "../../core/notebook-params.ts";
import { extractSql } from "../../core/extract.ts";
import type { DbSchema } from "../../core/schema.ts";
import type { Task } from "../../core/types.ts";
import { cocteDatasetRecord } from "../cocte-dataset.ts";
import { answerText } from "../pretrain/corpus.ts";
import { sftSequence, sftTarget, targetLogprob } from "./sft-targets.ts";

const schema: DbSchema = {
  dbId: "concert",
  tables: [{ name: "singer", columns: [{ name: "name", type: "TEXT", notNull: false, primaryKey: false, examples: [] }], primaryKey: [], foreignKeys: [], rowCount: 3 }],
};
const task: Task = { id: "7", db_id: "concert", question: "Names of the singers?", gold_sql: "SELECT name FROM singer;" };

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
  const plain = parseQuestions(JSON.stringify({ id: 1, db_id: "concert", question: "q", gold_sql: "SELECT 1" }) + "\n").items[0].task;
  assertEquals("completion" in plain, false);
});

Deno.test("sft target: without a completion, the gold in the template's answer format, as the pretraining corpus renders it", () => {
  const block = sftTarget(task, "chain-of-ctes@1", schema);
  assertEquals(block, { text: "```sql\nSELECT name FROM singer\n```", source: "gold" });
  assertEquals(sftTarget(task, "omnisql@1", schema).text, answerText("omnisql@1", task, schema));
  const think = sftTarget(task, "think-answer@1", schema);
  assertEquals(think.text, answerText("think-answer@1", task, schema));
  assertEquals(think.text, "<think>\nThe query reads singer.\n</think>\n<answer>\n```sql\nSELECT name FROM singer\n```\n</answer>");
  assertEquals(sftTarget(task, "reasoning-answer@1", schema).text, "<reasoning>\nThe query reads singer.\n</reasoning>\n<answer>\nSELECT name FROM singer\n</answer>");
  // A prompt that ends inside an opened <think>: the answer continues it.
  assertEquals(sftTarget(task, "think-answer@1", schema, true).text, "The query reads singer.\n</think>\n<answer>\n```sql\nSELECT name FROM singer\n```\n</answer>");
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
  for (const [key, value] of [["exportSamples", "correct"], ["exportSamples", "all"], ["sampleWithEvidence", true]] as const) {
    const r = validateParams("warmup", { method: "sft", [key]: value });
    assert(!r.ok, `${key}: ${value} refused`);
    assertEquals(r.errors.map((e) => e.path), [`params.${key}`]);
    assert(r.errors[0].message.includes(`method "sft"`) && r.errors[0].message.includes(key), r.errors[0].message);
  }
  for (const m of ["rft", "awpg", "dpo"]) assert(validateParams("warmup", { method: m, exportSamples: "all" }).ok, m);
});
