// The metrics stream: one JSON record per training or evaluation step, written as JSON Lines so a
// run that crashes mid-write loses at most its last, partial line.

/** Mean, std (population), min and max of a set of numbers. */
export interface Summary {
  count: number;
  mean: number;
  std: number;
  min: number;
  max: number;
}

/** Milliseconds spent in each phase of a step. */
export interface PhaseTimings {
  sample: number;
  /** The prompts' prefill within `sample` (and the copy of its cache to each prompt's samples). */
  prefill: number;
  score: number;
  train: number;
}

/** Which stage wrote a record. */
export const METRIC_PHASES = [
  "grpo",
  "warmup",
  "eval",
  "select",
  "selfconsistency",
  "prmdata",
  "prmtrain",
  "prmeval",
] as const;
export type MetricPhase = (typeof METRIC_PHASES)[number];

/** One line of the metrics stream. Optional fields are absent when the stage has no such quantity. */
export interface MetricsRecord {
  /** Record format version. */
  v: 1;
  /** Optimiser step (GRPO, warm-up) or evaluation index. */
  step: number;
  phase: MetricPhase;
  /**
   * The notebook cell that wrote it (`rlvr run` and the page stamp it since 2026-12-04; older files have none). Two
   * cells of one phase (two GRPO cells, a PRM and an ORM train cell) each count their steps from 1: the cell tells
   * their records apart.
   */
  cell?: string;
  /** Wall-clock time the record was written (Unix milliseconds). */
  time: number;
  /** Milliseconds per phase. */
  ms?: Partial<PhaseTimings>;
  /** Tokens per second per phase (sampling: generated tokens; training: prompt + completion tokens). */
  tokensPerSec?: Partial<PhaseTimings>;
  /** Each reward component ("execution", "format", "length", ... and "total"): mean and std over the step's samples. */
  rewards?: Record<string, { mean: number; std: number }>;
  /** Fraction of samples (or questions, for votes) whose result matched the gold result. */
  execAccuracy?: number;
  /** Fraction of groups whose rewards were all equal (no learning signal). */
  equalGroupFraction?: number;
  /** Mean k3 KL to the reference policy. */
  kl?: number;
  /** Mean k3 of the importance ratio, KL(pi_old || pi_theta). */
  approxKl?: number;
  /** Mean per-token entropy in nats. */
  entropy?: number;
  /** Clip fractions (lower, upper). */
  clipFrac?: { low: number; high: number };
  /** Completion lengths in tokens. */
  completionLength?: Summary;
  loss?: number;
  lr?: number;
  gradNorm?: number;
  /** GPU memory the run holds, in bytes (the engine's own accounting of its buffers). */
  gpuMemoryBytes?: number;
  /** Free-form extra numbers (kept, not interpreted). */
  extra?: Record<string, number>;
}

/** Streaming mean/std/min/max (Welford's update: stable over long streams). */
export class Aggregator {
  private n = 0;
  private m = 0;
  private m2 = 0;
  private lo = Infinity;
  private hi = -Infinity;

  /** Adds one value (non-finite values are refused: they would poison every later mean). */
  add(x: number): this {
    if (!Number.isFinite(x)) throw new Error(`Aggregator.add: ${x} is not finite`);
    this.n++;
    const d = x - this.m;
    this.m += d / this.n;
    this.m2 += d * (x - this.m);
    this.lo = Math.min(this.lo, x);
    this.hi = Math.max(this.hi, x);
    return this;
  }

  /** Adds every value of `xs`. */
  addAll(xs: Iterable<number>): this {
    for (const x of xs) this.add(x);
    return this;
  }

  /** Folds another aggregator in (Chan et al.'s parallel combination). */
  merge(o: Aggregator): this {
    if (o.n === 0) return this;
    const n = this.n + o.n;
    const d = o.m - this.m;
    this.m += (d * o.n) / n;
    this.m2 += o.m2 + (d * d * this.n * o.n) / n;
    this.n = n;
    this.lo = Math.min(this.lo, o.lo);
    this.hi = Math.max(this.hi, o.hi);
    return this;
  }

  /** The summary so far; all zeros when empty. */
  summary(): Summary {
    if (this.n === 0) return { count: 0, mean: 0, std: 0, min: 0, max: 0 };
    return { count: this.n, mean: this.m, std: Math.sqrt(this.m2 / this.n), min: this.lo, max: this.hi };
  }
}

/** Summary of an array in one call. */
export function summarize(xs: Iterable<number>): Summary {
  return new Aggregator().addAll(xs).summary();
}

/** One record as a JSON line, newline included (NaN and infinities become null, read back as NaN). */
export function encodeMetrics(r: MetricsRecord): string {
  return JSON.stringify(r) + "\n";
}

/** Records decoded from a JSONL stream, with what could not be read. */
export interface DecodedMetrics {
  records: MetricsRecord[];
  /** Lines that are not valid records (1-based line numbers), other than a truncated last line. */
  errors: { line: number; message: string }[];
  /** True when the last line was cut off (no final newline and not parseable): a crash mid-write. */
  truncated: boolean;
}

/** Decodes a JSONL metrics stream; a partial last line is dropped and reported, never an error. */
export function decodeMetrics(text: string): DecodedMetrics {
  const out: DecodedMetrics = { records: [], errors: [], truncated: false };
  const lines = text.split("\n");
  const complete = text.endsWith("\n");
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const last = i === lines.length - 1 && !complete;
    let value: unknown;
    try {
      // JSON has no NaN: encodeMetrics wrote it as null, so null reads back as NaN.
      value = JSON.parse(line, (_k, v: unknown) => (v === null ? NaN : v));
    } catch (e) {
      if (last) out.truncated = true;
      else out.errors.push({ line: i + 1, message: e instanceof Error ? e.message : String(e) });
      return;
    }
    if (isMetricsRecord(value)) out.records.push(value);
    else if (last) out.truncated = true;
    else out.errors.push({ line: i + 1, message: recordProblem(value) ?? "not a metrics record" });
  });
  return out;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Type guard for a metrics record: the required fields and the types of the optional ones. */
export function isMetricsRecord(x: unknown): x is MetricsRecord {
  return recordProblem(x) === null;
}

const NUMBER_FIELDS = [
  "execAccuracy",
  "equalGroupFraction",
  "kl",
  "approxKl",
  "entropy",
  "loss",
  "lr",
  "gradNorm",
  "gpuMemoryBytes",
] as const;

function recordProblem(x: unknown): string | null {
  if (!isObject(x)) return "not an object";
  if (x.v !== 1) return `unknown record version ${JSON.stringify(x.v)}`;
  if (typeof x.step !== "number") return "step is not a number";
  if (typeof x.time !== "number") return "time is not a number";
  if (!(METRIC_PHASES as readonly unknown[]).includes(x.phase)) return `unknown phase ${JSON.stringify(x.phase)}`;
  if (x.cell !== undefined && typeof x.cell !== "string") return "cell is not a string";
  const num = (v: unknown) => v === undefined || typeof v === "number";
  const req = (v: unknown) => typeof v === "number";
  for (const k of NUMBER_FIELDS) if (!num(x[k])) return `${k} is not a number`;
  for (const k of ["ms", "tokensPerSec", "extra", "clipFrac"] as const) {
    const v = x[k];
    if (v !== undefined && !(isObject(v) && Object.values(v).every(req))) return `${k} is not an object of numbers`;
  }
  if (x.rewards !== undefined) {
    if (!isObject(x.rewards)) return "rewards is not an object";
    for (const [name, c] of Object.entries(x.rewards)) {
      if (!(isObject(c) && req(c.mean) && req(c.std))) return `rewards.${name} needs mean and std`;
    }
  }
  if (x.completionLength !== undefined) {
    const c = x.completionLength;
    if (!(isObject(c) && ["count", "mean", "std", "min", "max"].every((k) => req(c[k])))) {
      return "completionLength is not a summary";
    }
  }
  return null;
}

/**
 * Training metrics (`grpo`, `warmup`: one record per step) with `incoming` added. A resumed run starts again after
 * its last checkpoint and logs again the steps after it (metrics.jsonl keeps both): a record of a step at or before
 * the last one held for its cell and phase replaces that cell's records of the phase from its step on — one point
 * per step in the charts, live and read back from a run folder. Records name their cell since 2026-12-04; records
 * without one are taken as one cell's (two GRPO cells of an older file both count from step 1: give this one
 * cell's records, or a whole file only when every record names its cell — `namesCells`).
 */
export function withSteps<T extends { phase: string; step: number; cell?: string }>(
  held: readonly T[],
  incoming: readonly T[],
): T[] {
  let out = [...held];
  for (const r of incoming) {
    const same = (x: T) => x.phase === r.phase && x.cell === r.cell;
    if ((r.phase === "grpo" || r.phase === "warmup") && out.some((x) => same(x) && x.step >= r.step)) {
      out = out.filter((x) => !same(x) || x.step < r.step);
    }
    out.push(r);
  }
  return out;
}

/** Whether every record names the cell that wrote it (files written since 2026-12-04), so a whole file can go through `withSteps`. */
export function namesCells(records: readonly { cell?: string }[]): boolean {
  return records.every((r) => typeof r.cell === "string");
}

/**
 * A whole metrics file as charts should show it: a resumed run's repeated steps once (`withSteps`) where every
 * record names its cell; an older file as it is (its cells of one phase cannot be told apart, so a resumed step
 * shows twice there).
 */
export function resumedOnce<T extends { phase: string; step: number; cell?: string }>(records: readonly T[]): T[] {
  return namesCells(records) ? withSteps([], records) : [...records];
}
