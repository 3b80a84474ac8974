import { assertEquals } from "../../tests/assert.ts";
import type { SampleRecord } from "../runtime/records.ts";
import {
  componentWeights,
  errorLabel,
  groupView,
  hasTrainingSteps,
  questionsAt,
  rowsInOther,
  stepsOf,
  stepStatus,
  stepSummary,
} from "./inspector-model.ts";

function rec(step: number, taskId: string, i: number, total: number, extra: Partial<SampleRecord> = {}): SampleRecord {
  return {
    v: 1,
    phase: "grpo",
    step,
    taskId,
    dbId: "shop",
    question: `q ${taskId}`,
    sampleIndex: i,
    prompt: "p",
    completion: "c",
    reasoning: null,
    extraction: { sql: "SELECT 1", source: "sql-block" },
    predicted: null,
    gold: null,
    error: null,
    correct: total >= 1,
    execMs: 1,
    reward: { total, components: {}, weighted: {} },
    advantage: 0,
    completionTokens: 10 + i,
    logprob: -1,
    finishReason: "eos",
    ...extra,
  };
}

Deno.test("inspector model: steps, questions hardest first, sort and filter, error labels", () => {
  const rs = [
    rec(2, "a", 0, 1),
    rec(2, "a", 1, 0, { error: { kind: "syntax", message: "x" } }),
    rec(2, "a", 2, 0, { extraction: { sql: null, reason: "no sql block" } }),
    rec(2, "b", 0, 0),
    rec(1, "a", 0, 1),
  ];
  assertEquals(stepsOf(rs), [1, 2]);
  assertEquals(questionsAt(rs, 2).map((q) => [q.taskId, q.n, q.correct]), [["b", 1, 0], ["a", 3, 1]]);
  assertEquals(groupView(rs, 2, "a", "reward-desc", "all").map((r) => r.sampleIndex), [0, 1, 2]);
  assertEquals(groupView(rs, 2, "a", "length-desc", "all").map((r) => r.sampleIndex), [2, 1, 0]);
  assertEquals(groupView(rs, 2, "a", "index", "syntax").map((r) => r.sampleIndex), [1]);
  assertEquals(rs.slice(0, 4).map(errorLabel), ["correct", "syntax", "no-sql", "wrong"]);
});

Deno.test("inspector model: row differences mark rows missing from the other result; 6 and 6.0 are one number", () => {
  const pred = { columns: ["x"], rows: [[6], ["6"], [null]], rowCount: 3, truncated: false, capped: false };
  const gold = { columns: ["x"], rows: [[6.0], [null]], rowCount: 2, truncated: false, capped: false };
  assertEquals(rowsInOther(pred, gold), [true, false, true]);
  assertEquals(rowsInOther(gold, pred), [true, true]);
  assertEquals(rowsInOther(gold, null), [false, false]);
});

Deno.test("stepSummary and stepStatus: chain steps with and without PRM scores", () => {
  const base = { sql: "SELECT 1", end: 10, result: null };
  const steps = [
    { ...base, name: "a", error: null, matchesGold: false, prmScore: 0.25 },
    { ...base, name: "b", error: { kind: "syntax" as const, message: "no such column: x" }, matchesGold: false },
    { ...base, name: null, error: null, matchesGold: true, prmScore: 0.75 },
  ];
  assertEquals(stepSummary(steps), { steps: 3, matching: 1, errors: 1, prmMean: 0.5 });
  assertEquals(steps.map(stepStatus), ["differs", "syntax", "matches gold"]);
  assertEquals(stepSummary([{ ...base, name: "a", error: null, matchesGold: false }]).prmMean, null);
});

Deno.test("inspector model: issue 48 — each component's weight, also for a sample whose value is 0; a step slider only for training", () => {
  const a = rec(1, "a", 0, 1, {
    reward: { total: 1, components: { execution: 1, error_penalty: 0 }, weighted: { execution: 1, error_penalty: 0 } },
  });
  const b = rec(1, "a", 1, -0.5, {
    reward: {
      total: -0.5,
      components: { execution: 0, error_penalty: -1 },
      weighted: { execution: 0, error_penalty: -0.5 },
    },
  });
  assertEquals([...componentWeights([a, b])], [["execution", 1], ["error_penalty", 0.5]]);
  assertEquals([...componentWeights([a])], [["execution", 1]], "a weight no record shows is not made up");
  assertEquals(hasTrainingSteps([a, rec(2, "a", 0, 1)]), true);
  assertEquals(hasTrainingSteps([a]), false, "one step");
  assertEquals(
    hasTrainingSteps([{ ...a, phase: "eval", step: 0 }, { ...b, phase: "eval", step: 1 }]),
    false,
    "evaluations",
  );
});
