import { assert, assertEquals } from "../../tests/assert.ts";
import { extractSql } from "../core/extract.ts";
import { REWARD_PRESETS, scoreSample } from "../core/rewards.ts";
import type { ResultSet } from "../core/types.ts";
import {
  decodeSamples,
  DISPLAY_CELL_CHARS,
  displayResult,
  displayValue,
  encodeSample,
  isSampleRecord,
  reasoningOf,
  type SampleRecord,
} from "./records.ts";

Deno.test("records: display values are JSON-safe and keep SQLite's types apart", () => {
  assertEquals(displayValue(5n), 5);
  assertEquals(displayValue(2n ** 60n), { int: "1152921504606846976" });
  assertEquals(displayValue(1.5), 1.5);
  assertEquals(displayValue(NaN), { real: "NaN" });
  assertEquals(displayValue("1"), "1");
  assertEquals(displayValue(new Uint8Array(7)), { blob: 7 });
  assertEquals(displayValue(null), null);
  const long = displayValue("x".repeat(500));
  assert(typeof long === "string" && long.length === DISPLAY_CELL_CHARS + 1);
});

Deno.test("records: display result cut at the row cap, flags kept", () => {
  const rs: ResultSet = { columns: ["a"], rows: Array.from({ length: 60 }, (_, i) => [BigInt(i)]), capped: false };
  const d = displayResult(rs, 50);
  assertEquals(d.rows.length, 50);
  assertEquals(d.rowCount, 60);
  assert(d.truncated && !d.capped);
  assertEquals(displayResult({ columns: ["a"], rows: [[1n]], capped: true }).capped, true);
});

Deno.test("records: reasoning text from closed and prompt-opened think blocks", () => {
  assertEquals(reasoningOf("<think> plan </think><answer>SELECT 1</answer>"), "plan");
  assertEquals(reasoningOf("plan</think><answer>x</answer>", true), "plan");
  assertEquals(reasoningOf("SELECT 1"), null);
});

Deno.test("records: a sample record round-trips through JSON Lines; a torn last line is dropped", () => {
  const completion = "<think>t</think><answer>SELECT 1</answer>";
  const extraction = extractSql(completion);
  const outcome = { correct: true, error: null, ms: 1 };
  const reward = scoreSample(REWARD_PRESETS.databricks, { completion, completionTokens: 9, extraction, outcome });
  const r: SampleRecord = {
    v: 1,
    phase: "grpo",
    step: 3,
    taskId: "q1",
    dbId: "shop",
    question: "?",
    sampleIndex: 2,
    prompt: "p",
    completion,
    reasoning: reasoningOf(completion),
    extraction,
    predicted: displayResult({ columns: ["1"], rows: [[1n]], capped: false }),
    gold: displayResult({ columns: ["1"], rows: [[1n]], capped: false }),
    error: null,
    correct: true,
    execMs: 1,
    reward,
    advantage: 0.5,
    completionTokens: 9,
    logprob: -3.25,
    finishReason: "eos",
  };
  const text = encodeSample(r) + encodeSample(r) + encodeSample(r).slice(0, 20);
  const d = decodeSamples(text);
  assertEquals(d.records.length, 2);
  assertEquals(d.errors, []);
  assertEquals(d.records[0], r);
  assert(!isSampleRecord({ ...r, correct: "yes" }));
  // An answer prefix (chain-of-ctes@2) round-trips; one the completion does not start with is refused.
  const given = { ...r, completion: "```sql\nWITH s AS (SELECT 1) SELECT * FROM s\n```", answerPrefix: "```sql\nWITH" };
  assertEquals(decodeSamples(encodeSample(given)).records, [given]);
  assert(!isSampleRecord({ ...given, answerPrefix: "<think>" }) && !isSampleRecord({ ...given, answerPrefix: 3 }));
});
