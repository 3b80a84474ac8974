// Turns metrics streams into the series the charts draw: one panel per quantity users watch
// during RLVR, each with a line per run (and per component where a quantity has several), and the
// comparison helpers of the run viewer (EMA smoothing, mean and spread over seeds, CSV).
import { type MetricsRecord, resumedOnce } from "../core/metrics.ts";

/** One line of a chart: (x, y) points; x is a step, or an index into the panel's `categories`. */
export interface Series {
  /** The quantity (the same in every run: "total", "held-out (greedy) · grpo"), for line style and the series picker. */
  label: string;
  /** The run it comes from (its colour). */
  run: string;
  points: { x: number; y: number }[];
}

/** One chart panel. */
export interface Panel {
  id: string;
  title: string;
  yLabel: string;
  /** The x axis' title. */
  xLabel: string;
  /** Fractions drawn as percent on a 0-100 % axis. */
  percent?: boolean;
  /** Named x positions (the evaluate cells, in the order they ran): points' x index into them. */
  categories?: string[];
  series: Series[];
}

/** A run's metrics stream. */
export interface RunMetrics {
  name: string;
  records: MetricsRecord[];
}

/** The part of a saved notebook (a run folder's notebook.json) that names an older file's cells. */
export interface NotebookCells {
  title?: string;
  cells: { id: string; type: string }[];
}

type Pick = (r: MetricsRecord) => number | undefined;
type Line = [string, Pick, (r: MetricsRecord) => boolean];

const TRAINING = (r: MetricsRecord) => r.phase === "grpo" || r.phase === "warmup";

const PANELS: {
  id: string;
  title: string;
  yLabel: string;
  xLabel?: string;
  percent?: boolean;
  lines: (records: MetricsRecord[]) => Line[];
}[] = [
  {
    id: "rewards",
    title: "Reward components (mean per step)",
    yLabel: "reward",
    lines: (records) => {
      const names = new Set<string>();
      for (const r of records) if (TRAINING(r)) { for (const k of Object.keys(r.rewards ?? {})) names.add(k); }
      return [...names].sort((a, b) => (a === "total" ? -1 : b === "total" ? 1 : a.localeCompare(b)))
        .map((k): Line => [k, (r) => r.rewards?.[k]?.mean, TRAINING]);
    },
  },
  {
    id: "accuracy",
    title: "Execution accuracy during training",
    yLabel: "correct",
    percent: true,
    lines: (records) => {
      // A training cell's own held-out checks (x: its step). Evaluate cells number their records by evaluation,
      // not by step: they have their own panel ("evaluations").
      const training = trainingCells(records);
      return [
        ["train (samples)", (r) => r.execAccuracy, (r) => r.phase === "grpo"],
        ["held-out (greedy)", (r) => r.execAccuracy, (r) => r.phase === "eval" && training.has(r.cell)],
      ];
    },
  },
  {
    id: "equal",
    title: "Groups with equal rewards (no signal)",
    yLabel: "groups",
    percent: true,
    lines: () => [["equal-reward groups", (r) => r.equalGroupFraction, (r) => r.phase === "grpo"]],
  },
  {
    id: "kl",
    title: "KL and entropy",
    yLabel: "nats",
    lines: () => [
      ["KL to reference", (r) => r.kl, (r) => r.phase === "grpo"],
      ["entropy", (r) => r.entropy, (r) => r.phase === "grpo"],
    ],
  },
  {
    id: "length",
    title: "Completion length",
    yLabel: "tokens",
    lines: () => [["mean length", (r) => r.completionLength?.mean, (r) => r.phase === "grpo"]],
  },
  {
    id: "prm-score",
    title: "PRM score of the samples (mean step score)",
    yLabel: "score",
    lines: () => [["mean PRM score", (r) => r.extra?.prmMean, (r) => r.phase === "grpo"]],
  },
  {
    id: "prm-data",
    title: "PRM data per batch of questions",
    yLabel: "count",
    lines: () => [
      ["correct steps", (r) => r.extra?.positive, (r) => r.phase === "prmdata"],
      ["first errors", (r) => r.extra?.negative, (r) => r.phase === "prmdata"],
      ["rollouts", (r) => r.extra?.rollouts, (r) => r.phase === "prmdata"],
    ],
  },
  {
    id: "prm-loss",
    title: "PRM training loss (binary cross-entropy)",
    yLabel: "nats",
    lines: () => [
      ["training batch", (r) => r.loss, (r) => r.phase === "prmtrain"],
      ["held-out", (r) => r.loss, (r) => r.phase === "prmeval"],
    ],
  },
  {
    // Sampling (generated tokens) and training (prompt + completion tokens) differ by two orders of magnitude: a
    // panel each, so neither is flattened. Scoring runs SQL, not tokens: its "tokens/s" (millions where a step's
    // scoring took 1 ms) meant nothing; its time per step has its own panel.
    id: "speed",
    title: "Sampling speed (generated tokens/s)",
    yLabel: "tokens/s",
    lines: () => [["sample", (r) => r.tokensPerSec?.sample, (r) => r.phase === "grpo"]],
  },
  {
    id: "train-speed",
    title: "Training speed (tokens/s through the update)",
    yLabel: "tokens/s",
    lines: () => [["train", (r) => r.tokensPerSec?.train, (r) => r.phase === "grpo"]],
  },
  {
    id: "score-time",
    title: "Scoring time per step (SQL execution)",
    yLabel: "ms",
    lines: () => [["score", (r) => r.ms?.score, (r) => r.phase === "grpo"]],
  },
];

/** The cells that wrote GRPO or warm-up records (their `eval` records are held-out checks at their steps). */
function trainingCells(records: readonly MetricsRecord[]): Set<string | undefined> {
  return new Set(records.filter(TRAINING).map((r) => r.cell));
}

/**
 * A metrics file as the charts read it. Files written before records named their cell (`cell`) number evaluate
 * cells' records 0, 1, 2, ... by evaluation and a GRPO cell's held-out checks by its step, in one `eval` phase:
 * drawn as one line they ran backwards. Here each record of such a file gets a cell: a held-out check is the `eval`
 * record written right after the GRPO record of the same step (that is where the GRPO cell writes it); any other
 * `eval` record is evaluation number `step`, named after the `step`-th evaluate cell of `notebook` (the run
 * folder's notebook.json) where given, else "evaluation N". Then a resumed run's repeated records count once: the
 * last of each cell, phase and step (`resumedOnce` for the training steps it logged again).
 */
export function readableRecords(records: readonly MetricsRecord[], notebook?: NotebookCells): MetricsRecord[] {
  const named = records.some((r) => r.cell !== undefined) ? [...records] : nameOldCells(records, notebook);
  const once = resumedOnce(named);
  const last = new Map<string, number>();
  once.forEach((r, i) => last.set(`${r.cell}\u0000${r.phase}\u0000${r.step}`, i));
  return once.filter((r, i) => last.get(`${r.cell}\u0000${r.phase}\u0000${r.step}`) === i);
}

function nameOldCells(records: readonly MetricsRecord[], notebook?: NotebookCells): MetricsRecord[] {
  const ofType = (t: string) => notebook?.cells.filter((c) => c.type === t).map((c) => c.id) ?? [];
  const evaluates = ofType("evaluate");
  const cellOf = (phase: string, fallback: string) => {
    const ids = ofType(phase);
    return ids.length === 1 ? ids[0] : fallback;
  };
  const grpo = cellOf("grpo", "grpo");
  let prev: MetricsRecord | undefined;
  return records.map((r) => {
    let cell: string;
    if (r.phase === "eval") {
      cell = prev?.phase === "grpo" && prev.step === r.step ? grpo : evaluates[r.step] ?? `evaluation ${r.step + 1}`;
    } else if (r.phase === "grpo") cell = grpo;
    else cell = cellOf(r.phase === "prmeval" ? "prmtrain" : r.phase, r.phase === "prmeval" ? "prmtrain" : r.phase);
    prev = r;
    return { ...r, cell };
  });
}

/**
 * The chart panels for `runs`; a panel with no points in any run is left out. A line whose records come from
 * several cells (two GRPO cells, a PRM and an ORM train cell) is one series per cell, labelled with the cell's id,
 * so each counts its own steps. Evaluate cells' accuracies are one panel over the cells, in the order they ran.
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
          series.push({
            label: byCell.size > 1 && cell !== undefined ? `${label} · ${cell}` : label,
            run: run.name,
            points,
          });
        }
      }
    }
    if (series.length) {
      out.push({
        id: p.id,
        title: p.title,
        yLabel: p.yLabel,
        xLabel: p.xLabel ?? "training step",
        percent: p.percent,
        series,
      });
    }
    if (p.id === "accuracy") {
      const evals = evaluationsPanel(runs);
      if (evals) out.push(evals);
    }
  }
  return out;
}

/** Execution accuracy of each evaluate cell (greedy, held-out splits), x: the cells in the order they ran. */
function evaluationsPanel(runs: readonly RunMetrics[]): Panel | null {
  const categories: string[] = [];
  const series: Series[] = [];
  for (const run of runs) {
    const training = trainingCells(run.records);
    const points: { x: number; y: number }[] = [];
    for (const r of run.records) {
      if (r.phase !== "eval" || training.has(r.cell) || typeof r.execAccuracy !== "number") continue;
      const name = r.cell ?? `evaluation ${r.step + 1}`;
      let x = categories.indexOf(name);
      if (x < 0) x = categories.push(name) - 1;
      points.push({ x, y: r.execAccuracy });
    }
    if (points.length) {
      series.push({
        label: "evaluate cells",
        run: run.name,
        points: points.sort((a, b) => a.x - b.x),
      });
    }
  }
  if (!series.length) return null;
  return {
    id: "evaluations",
    title: "Held-out accuracy of the evaluate cells (greedy)",
    yLabel: "correct",
    xLabel: "evaluate cell",
    percent: true,
    categories,
    series,
  };
}

/**
 * TensorBoard's smoothing: an exponential moving average with weight `w` (0: none, 0.99: heavy), debiased so the
 * first points are not pulled towards zero.
 */
export function emaSmooth(points: readonly { x: number; y: number }[], w: number): { x: number; y: number }[] {
  if (!(w > 0)) return points.map((p) => ({ ...p }));
  let last = 0;
  let n = 0;
  return points.map((p) => {
    last = last * w + (1 - w) * p.y;
    n++;
    return { x: p.x, y: last / (1 - w ** n) };
  });
}

/**
 * Runs of one notebook with different seeds: the key their names share once a seed suffix ("-s2", "_seed3",
 * " seed 1") is dropped. Runs whose names differ otherwise stay apart.
 */
export function seedGroup(name: string): string {
  return name.replace(/[-_ ]?(?:s|seed)[-_ ]?\d+$/i, "") || name;
}

/** A line's mean over the runs of a group at each x, with the lowest and highest run (the band drawn around it). */
export interface MeanSeries {
  label: string;
  group: string;
  runs: number;
  points: { x: number; y: number; lo: number; hi: number; n: number }[];
}

/** Mean, min and max of `series` (one line of several runs) at each x where any of them has a point. */
export function meanOver(series: readonly Series[], group: string): MeanSeries {
  const at = new Map<number, number[]>();
  for (const s of series) for (const p of s.points) at.set(p.x, [...(at.get(p.x) ?? []), p.y]);
  const points = [...at.entries()].sort((a, b) => a[0] - b[0]).map(([x, ys]) => ({
    x,
    y: ys.reduce((a, b) => a + b, 0) / ys.length,
    lo: Math.min(...ys),
    hi: Math.max(...ys),
    n: ys.length,
  }));
  return { label: series[0]?.label ?? "", group, runs: new Set(series.map((s) => s.run)).size, points };
}

/** A panel's data as CSV: one row per point (run, series, x, y); categories by name. */
export function panelCsv(panel: Panel): string {
  const q = (s: string) => (/[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  const rows = [["run", "series", panel.categories ? "cell" : "step", panel.yLabel].map(q).join(",")];
  for (const s of panel.series) {
    for (const p of s.points) {
      rows.push(
        [s.run, s.label, panel.categories ? panel.categories[p.x] ?? String(p.x) : String(p.x), String(p.y)].map(q)
          .join(","),
      );
    }
  }
  return rows.join("\n") + "\n";
}
