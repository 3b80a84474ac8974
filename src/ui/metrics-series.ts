// Turns metrics streams into the series the charts draw: one panel per quantity users watch
// during RLVR, each with a line per run (and per component where a quantity has several).
import type { MetricsRecord } from "../core/metrics.ts";

/** One line of a chart: (step, value) points. */
export interface Series {
  label: string;
  run: string;
  points: { x: number; y: number }[];
}

/** One chart panel. */
export interface Panel {
  id: string;
  title: string;
  yLabel: string;
  series: Series[];
}

/** A run's metrics stream. */
export interface RunMetrics {
  name: string;
  records: MetricsRecord[];
}

type Pick = (r: MetricsRecord) => number | undefined;

const PANELS: { id: string; title: string; yLabel: string; lines: (records: MetricsRecord[]) => [string, Pick, (r: MetricsRecord) => boolean][] }[] = [
  {
    id: "rewards", title: "Reward components (mean per step)", yLabel: "reward",
    lines: (records) => {
      const names = new Set<string>();
      for (const r of records) if (r.phase === "grpo" || r.phase === "warmup") for (const k of Object.keys(r.rewards ?? {})) names.add(k);
      return [...names].sort((a, b) => (a === "total" ? -1 : b === "total" ? 1 : a.localeCompare(b)))
        .map((k) => [k, (r: MetricsRecord) => r.rewards?.[k]?.mean, (r: MetricsRecord) => r.phase === "grpo" || r.phase === "warmup"]);
    },
  },
  {
    id: "accuracy", title: "Execution accuracy", yLabel: "fraction correct",
    lines: (records) => {
      // A training cell's own held-out checks (x: its step). Evaluate cells' records are numbered by evaluation, not
      // by step: where records name their cell (since 2026-12-04) they stay off this per-step chart.
      const training = trainingCells(records);
      return [
        ["train (samples)", (r) => r.execAccuracy, (r) => r.phase === "grpo"],
        ["held-out (greedy)", (r) => r.execAccuracy, (r) => r.phase === "eval" && (r.cell === undefined || training.has(r.cell))],
      ];
    },
  },
  {
    id: "equal", title: "Groups with equal rewards (no signal)", yLabel: "fraction",
    lines: () => [["equal-reward groups", (r) => r.equalGroupFraction, (r) => r.phase === "grpo"]],
  },
  {
    id: "kl", title: "KL and entropy", yLabel: "nats",
    lines: () => [
      ["KL to reference", (r) => r.kl, (r) => r.phase === "grpo"],
      ["entropy", (r) => r.entropy, (r) => r.phase === "grpo"],
    ],
  },
  {
    id: "length", title: "Completion length", yLabel: "tokens",
    lines: () => [["mean length", (r) => r.completionLength?.mean, (r) => r.phase === "grpo"]],
  },
  {
    id: "prm-score", title: "PRM score of the samples (mean step score)", yLabel: "score",
    lines: () => [["mean PRM score", (r) => r.extra?.prmMean, (r) => r.phase === "grpo"]],
  },
  {
    id: "prm-data", title: "PRM data per batch of questions", yLabel: "count",
    lines: () => [
      ["correct steps", (r) => r.extra?.positive, (r) => r.phase === "prmdata"],
      ["first errors", (r) => r.extra?.negative, (r) => r.phase === "prmdata"],
      ["rollouts", (r) => r.extra?.rollouts, (r) => r.phase === "prmdata"],
    ],
  },
  {
    id: "prm-loss", title: "PRM training loss (binary cross-entropy)", yLabel: "nats",
    lines: () => [
      ["training batch", (r) => r.loss, (r) => r.phase === "prmtrain"],
      ["held-out", (r) => r.loss, (r) => r.phase === "prmeval"],
    ],
  },
  {
    id: "speed", title: "Throughput per phase", yLabel: "tokens/s",
    lines: () => [
      ["sample", (r) => r.tokensPerSec?.sample, (r) => r.phase === "grpo"],
      ["score", (r) => r.tokensPerSec?.score, (r) => r.phase === "grpo"],
      ["train", (r) => r.tokensPerSec?.train, (r) => r.phase === "grpo"],
    ],
  },
];

/** The cells that wrote GRPO or warm-up records (their `eval` records are held-out checks at their steps). */
function trainingCells(records: readonly MetricsRecord[]): Set<string | undefined> {
  return new Set(records.filter((r) => r.phase === "grpo" || r.phase === "warmup").map((r) => r.cell));
}

/**
 * The chart panels for `runs`; a panel with no points in any run is left out. A line whose records come from
 * several cells (two GRPO cells, a PRM and an ORM train cell: records name their cell since 2026-12-04) is one
 * series per cell, labelled with the cell's id, so each counts its own steps.
 */
export function buildPanels(runs: readonly RunMetrics[]): Panel[] {
  const out: Panel[] = [];
  for (const p of PANELS) {
    const series: Series[] = [];
    for (const run of runs) {
      for (const [label, pick, keep] of p.lines(run.records)) {
        const byCell = new Map<string | undefined, { x: number; y: number }[]>();
        for (const r of run.records) {
          if (!keep(r)) continue;
          const y = pick(r);
          if (typeof y !== "number" || !Number.isFinite(y)) continue;
          const points = byCell.get(r.cell) ?? [];
          points.push({ x: r.step, y });
          byCell.set(r.cell, points);
        }
        for (const [cell, points] of byCell) {
          const name = byCell.size > 1 && cell !== undefined ? `${label} · ${cell}` : label;
          series.push({ label: runs.length > 1 ? `${run.name}: ${name}` : name, run: run.name, points });
        }
      }
    }
    if (series.length) out.push({ id: p.id, title: p.title, yLabel: p.yLabel, series });
  }
  return out;
}
