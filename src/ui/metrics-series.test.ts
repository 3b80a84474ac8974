import { assert, assertEquals } from "../../tests/assert.ts";
import type { MetricsRecord } from "../core/metrics.ts";
import { decodeMetrics } from "../core/metrics.ts";
import { buildPanels, emaSmooth, meanOver, panelCsv, readableRecords, seedGroup } from "./metrics-series.ts";

function rec(step: number, phase: MetricsRecord["phase"], extra: Partial<MetricsRecord>): MetricsRecord {
  return { v: 1, step, phase, time: 0, ...extra };
}

Deno.test("metrics series: panels per quantity, train vs held-out accuracy, runs overlaid, empty panels dropped", () => {
  const a = [
    rec(1, "grpo", {
      rewards: { total: { mean: 0.1, std: 0 }, execution: { mean: 0, std: 0 } },
      execAccuracy: 0.2,
      kl: 0.01,
      entropy: 1.5,
    }),
    rec(2, "grpo", {
      rewards: { total: { mean: 0.4, std: 0 }, execution: { mean: 0.5, std: 0 } },
      execAccuracy: 0.5,
      kl: NaN,
    }),
    rec(2, "eval", { execAccuracy: 0.3 }),
  ];
  const b = [rec(1, "grpo", { execAccuracy: 0.1 })];
  const panels = buildPanels([{ name: "a", records: a }, { name: "b", records: b }]);
  assertEquals(panels.map((p) => p.id), ["rewards", "accuracy", "kl"]);
  const rewards = panels[0];
  assertEquals(rewards.series.map((s) => [s.run, s.label]), [["a", "total"], ["a", "execution"]]);
  assertEquals(rewards.series[0].points, [{ x: 1, y: 0.1 }, { x: 2, y: 0.4 }]);
  const acc = panels[1];
  assertEquals(acc.series.map((s) => [s.run, s.label, s.points.length]), [["a", "train (samples)", 2], [
    "a",
    "held-out (greedy)",
    1,
  ], ["b", "train (samples)", 1]]);
  assertEquals(acc.percent, true);
  // NaN KL is skipped, not drawn as zero.
  assertEquals(panels[2].series.find((s) => s.label === "KL to reference")?.points, [{ x: 1, y: 0.01 }]);
});

Deno.test("metrics series: the PRM cells' panels — labels per batch, training and held-out loss, the PRM score in GRPO", () => {
  const records = [
    rec(0, "prmdata", { extra: { positive: 12, negative: 5, rollouts: 40 } }),
    rec(1, "prmdata", { extra: { positive: 9, negative: 7, rollouts: 36 } }),
    rec(1, "prmtrain", { loss: 0.69 }),
    rec(2, "prmtrain", { loss: 0.52 }),
    rec(2, "prmeval", { loss: 0.58 }),
    rec(1, "grpo", { extra: { prmMean: 0.41 } }),
  ];
  const panels = buildPanels([{ name: "run", records }]);
  assertEquals(panels.map((p) => p.id), ["prm-score", "prm-data", "prm-loss"]);
  assertEquals(panels[1].series.map((s) => [s.label, s.points.map((p) => p.y)]), [["correct steps", [12, 9]], [
    "first errors",
    [5, 7],
  ], ["rollouts", [40, 36]]]);
  assertEquals(panels[2].series.map((s) => [s.label, s.points]), [["training batch", [{ x: 1, y: 0.69 }, {
    x: 2,
    y: 0.52,
  }]], ["held-out", [{ x: 2, y: 0.58 }]]]);
  assertEquals(panels[0].series[0].points, [{ x: 1, y: 0.41 }]);
});

Deno.test("metrics series: records that name their cell — a series per cell (PRM and ORM train), evaluate cells off the per-step accuracy", () => {
  const c = (cell: string, step: number, phase: MetricsRecord["phase"], extra: Partial<MetricsRecord>) => ({
    ...rec(step, phase, extra),
    cell,
  });
  const records = [
    c("base", 1, "eval", { execAccuracy: 0.1 }),
    c("prm", 1, "prmtrain", { loss: 0.7 }),
    c("prm", 2, "prmtrain", { loss: 0.5 }),
    c("prm", 1, "prmeval", { loss: 0.6 }),
    c("orm", 1, "prmtrain", { loss: 0.68 }),
    c("orm", 2, "prmtrain", { loss: 0.4 }),
    c("orm", 2, "prmeval", { loss: 0.9 }),
    c("grpo", 1, "grpo", { execAccuracy: 0.5 }),
    c("grpo", 2, "grpo", { execAccuracy: 0.6 }),
    c("grpo", 2, "eval", { execAccuracy: 0.3 }),
    c("after", 3, "eval", { execAccuracy: 0.25 }),
  ];
  const panels = buildPanels([{ name: "run", records }]);
  const loss = panels.find((p) => p.id === "prm-loss")!;
  assertEquals(loss.series.map((s) => [s.label, s.points.map((p) => p.x)]), [
    ["training batch · prm", [1, 2]],
    ["training batch · orm", [1, 2]],
    ["held-out · prm", [1]],
    ["held-out · orm", [2]],
  ]);
  // Held-out accuracy: the GRPO cell's check at its step 2, not the evaluate cells' records (evaluation indices 1 and 3).
  const acc = panels.find((p) => p.id === "accuracy")!;
  assertEquals(acc.series.map((s) => [s.label, s.points]), [["train (samples)", [{ x: 1, y: 0.5 }, { x: 2, y: 0.6 }]], [
    "held-out (greedy)",
    [{ x: 2, y: 0.3 }],
  ]]);
  const evals = panels.find((p) => p.id === "evaluations")!;
  assertEquals(evals.categories, ["base", "after"]);
  assertEquals(evals.series[0].points, [{ x: 0, y: 0.1 }, { x: 1, y: 0.25 }]);
});

const OLD = new URL("../../tests/browser/fixtures/old-runs/", import.meta.url);
const oldRun = async (seed: number) =>
  decodeMetrics(await Deno.readTextFile(new URL(`run-knowledge-s${seed}/metrics.jsonl`, OLD))).records;

Deno.test("metrics series: issue 48 — an old file (no cells, resumed) no longer draws held-out accuracy backwards", async () => {
  const records = await oldRun(1);
  assertEquals(records.some((r) => r.cell !== undefined), false, "the fixture is the old format");
  const notebook = JSON.parse(await Deno.readTextFile(new URL("run-knowledge-s1/notebook.json", OLD)));
  for (const nb of [notebook, undefined]) {
    const panels = buildPanels([{ name: "run-knowledge-s1", records: readableRecords(records, nb) }]);
    const held = panels.find((p) => p.id === "accuracy")!.series.find((s) => s.label === "held-out (greedy)")!;
    // The GRPO cell's checks only, each step once (the resumed run wrote step 20 twice), x increasing.
    assertEquals(held.points.map((p) => p.x), [10, 20, 30, 40]);
    const evals = panels.find((p) => p.id === "evaluations")!;
    // Nine evaluate cells, each once although the resumed run evaluated the first six again.
    assertEquals(evals.categories!.length, 9);
    assertEquals(evals.series[0].points.length, 9);
    if (nb) {
      assertEquals(evals.categories!.slice(0, 3), ["base-concepts", "base-templates", "base-db"]);
      assertEquals(evals.categories![6], "after-concepts");
    } else assertEquals(evals.categories![0], "evaluation 1");
    // Baseline 1 % and after GRPO 17 % on the concepts split: the headline, read off the points.
    assertEquals(Math.round(evals.series[0].points[0].y * 100), 1);
    assertEquals(Math.round(evals.series[0].points[6].y * 100), 17);
    // Scoring is not a token phase: the throughput panel has sampling and training, scoring time its own panel.
    assertEquals(panels.find((p) => p.id === "speed")!.series.map((s) => s.label), ["sample"]);
    assertEquals(panels.find((p) => p.id === "train-speed")!.series.map((s) => s.label), ["train"]);
    assert(panels.find((p) => p.id === "score-time")!.series[0].points.length > 0);
  }
});

Deno.test("metrics series: three seeds of one notebook — mean 1 % -> 22 % with the band from the lowest to the highest run", async () => {
  const runs = await Promise.all(
    [1, 2, 3].map(async (s) => ({ name: `run-knowledge-s${s}`, records: readableRecords(await oldRun(s)) })),
  );
  assertEquals(new Set(runs.map((r) => seedGroup(r.name))), new Set(["run-knowledge"]));
  assertEquals(seedGroup("run-bird-seed3"), "run-bird");
  assertEquals(seedGroup("grpo-lr6"), "grpo-lr6");
  const evals = buildPanels(runs).find((p) => p.id === "evaluations")!;
  const mean = meanOver(evals.series, "run-knowledge");
  assertEquals(mean.runs, 3);
  assertEquals(Math.round(mean.points[0].y * 100), 1);
  assertEquals(Math.round(mean.points[6].y * 100), 23);
  assert(mean.points[6].lo < mean.points[6].y && mean.points[6].y < mean.points[6].hi, "a spread around the mean");
  const csv = panelCsv(evals);
  assertEquals(csv.split("\n")[0], "run,series,cell,correct");
  assert(csv.includes("run-knowledge-s2,evaluate cells,evaluation 7,"), csv.slice(0, 300));
});

Deno.test("metrics series: EMA smoothing as TensorBoard's (debiased), 0 leaves points as they are", () => {
  const pts = [{ x: 1, y: 1 }, { x: 2, y: 0 }, { x: 3, y: 1 }];
  assertEquals(emaSmooth(pts, 0), pts);
  const s = emaSmooth(pts, 0.5);
  assertEquals(s[0].y, 1, "debiased: the first point is itself");
  assertEquals(s[1].y, (0.25 * 1 + 0.5 * 0) / 0.75);
});
