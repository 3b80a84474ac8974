import { assert, assertEquals } from "../../tests/assert.ts";
import type { AccuracyFigures, DisplayResult, EvalReport, SampleRecord, StageReport } from "../runtime/records.ts";
import {
  type CellOutputs,
  learnedQuestions,
  MIN_BAR_PX,
  showValue,
  STAGE_COLOURS,
  stageDatasets,
  stageOf,
  stageResults,
} from "./demo-results-model.ts";

const rows = (n: number): DisplayResult => ({
  columns: ["n"],
  rows: Array.from({ length: n }, (_, i) => [i]),
  rowCount: n,
  truncated: false,
  capped: false,
});

function rec(taskId: string, correct: boolean, goldRows = 1): SampleRecord {
  return {
    v: 1,
    phase: "eval",
    step: 0,
    taskId,
    dbId: "shop",
    question: `question ${taskId}`,
    sampleIndex: 0,
    prompt: "p",
    completion: "c",
    reasoning: null,
    extraction: { sql: correct ? "SELECT 1" : "SELECT 2", source: "sql-block" },
    predicted: rows(correct ? goldRows : 2),
    gold: rows(goldRows),
    error: null,
    correct,
    execMs: 1,
    reward: { total: correct ? 1 : 0, components: {}, weighted: {} },
    advantage: null,
    completionTokens: 3,
    logprob: -1,
    finishReason: "eos",
  };
}

function evaluate(id: string, split: string, label: string, greedy: number, samples: SampleRecord[] = []): CellOutputs {
  const overall: AccuracyFigures = { questions: 10, greedy };
  const report: EvalReport = {
    kind: "evaluate",
    cellId: id,
    split,
    label,
    overall,
    byDifficulty: {},
    samplesPerQuestion: 0,
    predictionsPath: `predictions/${id}.json`,
  };
  return { id, type: "evaluate", report, samples };
}

const training = (id: string, type: "warmup" | "grpo"): CellOutputs => ({ id, type, report: null, samples: [] });

Deno.test("demo results: stages from evaluation labels; splits in the demo's order; self-consistency by its split", () => {
  const typeOf = (id: string) => (id === "w" ? "warmup" as const : id === "g" ? "grpo" as const : undefined);
  assertEquals(stageOf("baseline", typeOf), "baseline");
  assertEquals(stageOf("after w", typeOf), "after warm-up");
  assertEquals(stageOf("after g", typeOf), "after GRPO");
  assertEquals(stageOf("after nothing", typeOf), null);
  const sc: StageReport = {
    kind: "selfconsistency",
    cellId: "sc",
    split: "test-concepts",
    samples: 8,
    weighting: "count",
    questions: 10,
    voteAccuracy: 0.4,
    bestOfNAccuracy: 0.3,
    oracleAccuracy: 0.6,
    firstSampleAccuracy: 0.2,
    predictionsPath: "p",
  };
  const cells: CellOutputs[] = [
    evaluate("b-db", "heldout-db", "baseline", 0),
    evaluate("b-c", "test-concepts", "baseline", 0.05),
    training("w", "warmup"),
    evaluate("w-c", "test-concepts", "after w", 0.2),
    training("g", "grpo"),
    evaluate("a-c", "test-concepts", "after g", 0.35),
    evaluate("a-db", "heldout-db", "after g", 0.02),
    { id: "sc", type: "selfconsistency", report: sc, samples: [] },
  ];
  const r = stageResults(cells);
  assertEquals(r.splits, ["test-concepts", "heldout-db"]);
  assertEquals(r.stages, ["baseline", "after warm-up", "after GRPO", "self-consistency"]);
  const at = (split: string, stage: string) => r.results.find((x) => x.split === split && x.stage === stage)?.accuracy;
  assertEquals([
    at("test-concepts", "baseline"),
    at("test-concepts", "after warm-up"),
    at("test-concepts", "after GRPO"),
    at("test-concepts", "self-consistency"),
  ], [0.05, 0.2, 0.35, 0.4]);
  assertEquals(at("heldout-db", "after warm-up"), undefined);
});

Deno.test("demo results: the chart's datasets — a measured 0% keeps its value and gets a thin bar (minBarLength), a stage not run is NaN (no bar)", () => {
  const cells: CellOutputs[] = [
    evaluate("b-c", "test-concepts", "baseline", 0),
    evaluate("b-db", "heldout-db", "baseline", 0),
    training("g", "grpo"),
    evaluate("a-c", "test-concepts", "after g", 0.25),
  ];
  const ds = stageDatasets(stageResults(cells));
  assertEquals(ds.map((d) => d.label), ["baseline", "after GRPO"]);
  assertEquals(ds.map((d) => d.data), [[0, 0], [25, Number.NaN]]);
  assertEquals(ds.map((d) => d.backgroundColor), [STAGE_COLOURS[0], STAGE_COLOURS[2]]);
  assert(
    MIN_BAR_PX >= 2 && ds.every((d) => d.minBarLength === MIN_BAR_PX),
    "every dataset draws a measured 0% as a visible bar",
  );
});

Deno.test("demo results: learned questions are wrong at baseline and right after GRPO (else the warm-up), test-concepts first, small results first", () => {
  const cells: CellOutputs[] = [
    evaluate("b-c", "test-concepts", "baseline", 0, [
      rec("q1", false),
      rec("q2", false, 40),
      rec("q3", true),
      rec("q4", false),
      rec("q5", false, 3),
    ]),
    evaluate("b-t", "test-templates", "baseline", 0, [rec("t1", false)]),
    training("w", "warmup"),
    evaluate("w-c", "test-concepts", "after w", 0, [rec("q1", true), rec("q4", true)]),
    evaluate("w-t", "test-templates", "after w", 0, [rec("t1", true)]),
    training("g", "grpo"),
    // After GRPO: q1 stays right, q2 and q5 are learned, q3 is forgotten, q4 went back to wrong.
    evaluate("a-c", "test-concepts", "after g", 0, [
      rec("q1", true),
      rec("q2", true, 40),
      rec("q3", false),
      rec("q4", false),
      rec("q5", true, 3),
    ]),
  ];
  const got = learnedQuestions(cells);
  assertEquals(got.map((q) => [q.split, q.taskId, q.afterStage]), [
    ["test-concepts", "q1", "after GRPO"],
    ["test-concepts", "q5", "after GRPO"],
    ["test-concepts", "q2", "after GRPO"],
    // test-templates has no GRPO evaluation: its learned question is the warm-up's.
    ["test-templates", "t1", "after warm-up"],
  ]);
  const q5 = got[1];
  assert(!q5.before.correct && q5.after.correct, "before wrong, after right");
  assertEquals(q5.after.gold?.rowCount, 3);
  assertEquals(
    learnedQuestions(
      cells.filter((c) => c.type !== "evaluate" || c.report?.kind !== "evaluate" || c.report.label === "baseline"),
    ),
    [],
  );
});

Deno.test("demo results: result values as text", () => {
  assertEquals([
    showValue(null),
    showValue(3),
    showValue("x"),
    showValue({ int: "9007199254740993" }),
    showValue({ real: "0.5" }),
    showValue({ blob: 4 }),
  ], ["NULL", "3", "x", "9007199254740993", "0.5", "<blob 4 bytes>"]);
});
