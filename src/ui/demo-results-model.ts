// The before/after picture of a finished run, as data: execution accuracy per split and stage
// (baseline, after the warm-up, after GRPO, self-consistency), read from the evaluate and
// self-consistency cells' reports; and the questions the model learned — wrong at baseline, right
// after training — with both answers' records (SQL and rows). Pure: the element draws it.
import type { CellType } from "../core/notebook-params.ts";
import { DEMO_SPLITS } from "../core/demo.ts";
import type { DisplayValue, SampleRecord, StageReport } from "../runtime/records.ts";

/** The stages a split is measured after, in order. */
export const STAGES = ["baseline", "after warm-up", "after GRPO", "self-consistency"] as const;
export type Stage = (typeof STAGES)[number];

/** One bar: a split's accuracy after a stage. */
export interface StageResult {
  split: string;
  stage: Stage;
  accuracy: number;
  questions: number;
  cellId: string;
}

/** What the picture needs of each cell: its type, report and sample records. */
export interface CellOutputs {
  id: string;
  type: CellType;
  report: StageReport | null;
  samples: readonly SampleRecord[];
}

/** The stage an evaluation's label names: "baseline", or "after <cell>" of a warm-up or GRPO cell. */
export function stageOf(label: string, typeOf: (cellId: string) => CellType | undefined): Stage | null {
  if (label === "baseline") return "baseline";
  const m = /^after (.+)$/.exec(label);
  const t = m ? typeOf(m[1]) : undefined;
  return t === "warmup" ? "after warm-up" : t === "grpo" ? "after GRPO" : null;
}

/** Splits in the demo's order, then any others in the order they appear. */
function orderSplits(splits: Iterable<string>): string[] {
  const seen = [...new Set(splits)];
  const known: readonly string[] = DEMO_SPLITS;
  return [...known.filter((s) => seen.includes(s)), ...seen.filter((s) => !known.includes(s))];
}

/** Every split × stage measured (the last cell wins when two measure the same), with the splits and stages present. */
export function stageResults(
  cells: readonly CellOutputs[],
): { results: StageResult[]; splits: string[]; stages: Stage[] } {
  const typeOf = (id: string) => cells.find((c) => c.id === id)?.type;
  const byKey = new Map<string, StageResult>();
  for (const c of cells) {
    const r = c.report;
    if (r?.kind === "evaluate") {
      const stage = stageOf(r.label, typeOf);
      if (stage) {
        byKey.set(`${r.split}|${stage}`, {
          split: r.split,
          stage,
          accuracy: r.overall.greedy,
          questions: r.overall.questions,
          cellId: c.id,
        });
      }
    } else if (r?.kind === "selfconsistency") {
      byKey.set(`${r.split}|self-consistency`, {
        split: r.split,
        stage: "self-consistency",
        accuracy: r.voteAccuracy,
        questions: r.questions,
        cellId: c.id,
      });
    }
  }
  const results = [...byKey.values()];
  return {
    results,
    splits: orderSplits(results.map((x) => x.split)),
    stages: STAGES.filter((s) => results.some((x) => x.stage === s)),
  };
}

/** One colour per stage, in STAGES order: grey before training, then warmer as it goes. */
export const STAGE_COLOURS = ["#868e96", "#4c6ef5", "#e8590c", "#2b8a3e"];
/**
 * The least height of a measured bar, in px (Chart.js `minBarLength`): a measured 0% is a thin bar
 * on the axis, where a stage not run (NaN: Chart.js skips it) draws nothing.
 */
export const MIN_BAR_PX = 3;

/** One dataset of the chart: a stage's accuracy in % per split (NaN where not measured). */
export interface StageDataset {
  label: Stage;
  data: number[];
  backgroundColor: string;
  minBarLength: number;
}

/** The chart's datasets: one per stage present, one value per split. */
export function stageDatasets({ results, splits, stages }: ReturnType<typeof stageResults>): StageDataset[] {
  return stages.map((stage) => ({
    label: stage,
    data: splits.map((split) =>
      100 * (results.find((r) => r.split === split && r.stage === stage)?.accuracy ?? Number.NaN)
    ),
    backgroundColor: STAGE_COLOURS[STAGES.indexOf(stage)],
    minBarLength: MIN_BAR_PX,
  }));
}

/** A question answered wrongly at baseline and rightly after training, with both answers. */
export interface LearnedQuestion {
  split: string;
  taskId: string;
  question: string;
  before: SampleRecord;
  after: SampleRecord;
  /** The stage of `after` (GRPO when it was measured, else the warm-up). */
  afterStage: Stage;
}

/** Cells' greedy answers per task id (an evaluate cell's own records). */
function answers(c: CellOutputs): Map<string, SampleRecord> {
  const out = new Map<string, SampleRecord>();
  for (const s of c.samples) if (s.phase === "eval" && s.sampleIndex === 0) out.set(s.taskId, s);
  return out;
}

/**
 * The learned questions of every split that has a baseline and a trained evaluation: test-concepts
 * first (what the demo is about), small results before large ones (they read at a glance).
 */
export function learnedQuestions(cells: readonly CellOutputs[]): LearnedQuestion[] {
  const { results, splits } = stageResults(cells);
  const cell = (id: string) => cells.find((c) => c.id === id);
  const out: LearnedQuestion[] = [];
  for (const split of splits) {
    const base = results.find((r) => r.split === split && r.stage === "baseline");
    const trained = results.find((r) => r.split === split && r.stage === "after GRPO") ??
      results.find((r) => r.split === split && r.stage === "after warm-up");
    const b = base && cell(base.cellId), a = trained && cell(trained.cellId);
    if (!b || !a || !trained) continue;
    const before = answers(b), after = answers(a);
    const found: LearnedQuestion[] = [];
    for (const [id, x] of after) {
      const y = before.get(id);
      if (y && x.correct && !y.correct) {
        found.push({ split, taskId: id, question: x.question, before: y, after: x, afterStage: trained.stage });
      }
    }
    found.sort((p, q) =>
      (p.after.gold?.rowCount ?? 0) - (q.after.gold?.rowCount ?? 0) || p.taskId.localeCompare(q.taskId)
    );
    out.push(...found);
  }
  return out;
}

/** A result value as text ("NULL", integers and reals as SQLite printed them). */
export function showValue(v: DisplayValue): string {
  if (v === null) return "NULL";
  if (typeof v === "object") return "int" in v ? v.int : "real" in v ? v.real : `<blob ${v.blob} bytes>`;
  return String(v);
}
