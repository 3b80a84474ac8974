// The reward inspector's view model, kept apart from the element so it can be tested without a
// browser: grouping records by step and question, sorting and filtering, and row differences.
import type { DisplayResult, DisplayValue, SampleRecord, SampleStep } from "../runtime/records.ts";

export const SORTS = ["index", "reward-desc", "reward-asc", "length-desc", "length-asc"] as const;
export type SortKey = (typeof SORTS)[number];

/** What the user filters on: an error kind, "correct", "wrong", or everything. */
export type ErrorFilter = "all" | "correct" | "wrong" | "no-sql" | string;

/** The distinct steps present, ascending. */
export function stepsOf(records: readonly SampleRecord[]): number[] {
  return [...new Set(records.map((r) => r.step))].sort((a, b) => a - b);
}

/** Questions of a step with their group's mean reward, hardest (lowest reward) first. */
export function questionsAt(
  records: readonly SampleRecord[],
  step: number,
): { taskId: string; question: string; n: number; meanReward: number; correct: number }[] {
  const by = new Map<string, SampleRecord[]>();
  for (const r of records) if (r.step === step) by.set(r.taskId, [...(by.get(r.taskId) ?? []), r]);
  return [...by.entries()].map(([taskId, rs]) => ({
    taskId,
    question: rs[0].question,
    n: rs.length,
    meanReward: rs.reduce((s, r) => s + r.reward.total, 0) / rs.length,
    correct: rs.filter((r) => r.correct).length,
  })).sort((a, b) => a.meanReward - b.meanReward || a.taskId.localeCompare(b.taskId));
}

/** The error kind label of a record: "correct", an ExecErrorKind, "no-sql", or "wrong" (ran, mismatched). */
export function errorLabel(r: SampleRecord): string {
  if (r.correct) return "correct";
  if (r.extraction.sql === null) return "no-sql";
  return r.error?.kind ?? "wrong";
}

/** The group of `taskId` at `step`, filtered and sorted. */
export function groupView(
  records: readonly SampleRecord[],
  step: number,
  taskId: string,
  sort: SortKey,
  filter: ErrorFilter,
): SampleRecord[] {
  const rs = records.filter((r) =>
    r.step === step && r.taskId === taskId && (filter === "all" || errorLabel(r) === filter)
  );
  const by: Record<SortKey, (a: SampleRecord, b: SampleRecord) => number> = {
    "index": (a, b) => a.sampleIndex - b.sampleIndex,
    "reward-desc": (a, b) => b.reward.total - a.reward.total || a.sampleIndex - b.sampleIndex,
    "reward-asc": (a, b) => a.reward.total - b.reward.total || a.sampleIndex - b.sampleIndex,
    "length-desc": (a, b) => b.completionTokens - a.completionTokens || a.sampleIndex - b.sampleIndex,
    "length-asc": (a, b) => a.completionTokens - b.completionTokens || a.sampleIndex - b.sampleIndex,
  };
  return rs.sort(by[sort]);
}

function valueKey(v: DisplayValue): string {
  // Integers and reals that are equal numbers compare equal, as in BIRD's rule; text stays text.
  if (typeof v === "number") return `n:${v}`;
  if (typeof v === "string") return `s:${v}`;
  if (v === null) return "null";
  return JSON.stringify(v);
}

/** Row keys for marking differences (display values: long text is cut, so this is for display only). */
export function rowKey(row: readonly DisplayValue[]): string {
  return row.map(valueKey).join("\u0001");
}

/** For each row of `result`, whether the other result contains an equal row. */
export function rowsInOther(result: DisplayResult, other: DisplayResult | null): boolean[] {
  const keys = new Set((other?.rows ?? []).map(rowKey));
  return result.rows.map((r) => keys.has(rowKey(r)));
}

/** What the header of a sample's chain of CTEs says: steps, how many match the gold, errors, the mean PRM score of scored steps. */
export function stepSummary(
  steps: readonly SampleStep[],
): { steps: number; matching: number; errors: number; prmMean: number | null } {
  const scored = steps.map((s) => s.prmScore).filter((x): x is number => typeof x === "number" && Number.isFinite(x));
  return {
    steps: steps.length,
    matching: steps.filter((s) => s.matchesGold).length,
    errors: steps.filter((s) => s.error !== null).length,
    prmMean: scored.length ? scored.reduce((a, b) => a + b, 0) / scored.length : null,
  };
}

/** A step's status label: its error kind, "matches gold", or "differs". */
export function stepStatus(s: SampleStep): string {
  return s.error ? s.error.kind : s.matchesGold ? "matches gold" : "differs";
}

/**
 * Each reward component's weight, read off the records (weighted = weight x value): a sample whose value of a
 * component is 0 shows "× w" too, with the weight another sample of the run shows. Components whose value is 0 in
 * every record have no weight here.
 */
export function componentWeights(records: readonly SampleRecord[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of records) {
    for (const [k, v] of Object.entries(r.reward.components)) {
      const w = r.reward.weighted[k];
      if (!out.has(k) && v !== 0 && typeof w === "number" && Number.isFinite(w / v)) {
        out.set(k, Number((w / v).toPrecision(6)));
      }
    }
  }
  return out;
}

/** Whether the records come from training steps (a step slider helps) rather than an evaluation (one set of answers). */
export function hasTrainingSteps(records: readonly SampleRecord[]): boolean {
  return records.some((r) => r.phase === "grpo" || r.phase === "warmup") && stepsOf(records).length > 1;
}
