// Group-relative advantages (GRPO, Dr. GRPO) and the "focus on hard questions" scheduler.
// The math is written out in docs/recipe.md; this file is its float64 reference.
import { Rng } from "./rng.ts";

/** How rewards are normalised within a group: GRPO divides by the std, Dr. GRPO does not. */
export const ADVANTAGE_MODES = ["mean-std", "mean"] as const;
export type AdvantageMode = (typeof ADVANTAGE_MODES)[number];

/** Options of `groupAdvantages`. */
export interface AdvantageOptions {
  /** "mean-std": (r - mean) / (std + epsilon) (GRPO); "mean": r - mean (Dr. GRPO). */
  mode: AdvantageMode;
  /** Added to the std in "mean-std" mode (default 1e-6). */
  epsilon?: number;
  /**
   * "sample" divides the variance by G - 1 (torch.std's default, as TRL and verl do); "population"
   * by G. A group of one has std 0 under both.
   */
  std?: "sample" | "population";
  /** Two rewards closer than this count as equal when flagging equal-reward groups (default 0). */
  equalTolerance?: number;
  /** Mark the samples of equal-reward groups as not kept, so the loss leaves them out. */
  dropEqualGroups?: boolean;
}

/** Per-group statistics and per-sample advantages, flattened in the order of the input groups. */
export interface GroupAdvantages {
  /** One advantage per sample, groups concatenated; 0 for every sample of an equal-reward group. */
  advantages: Float64Array;
  /** 1 where the sample takes part in the loss, 0 where its group was dropped. */
  keep: Uint8Array;
  /** Index of the group each sample belongs to. */
  group: Uint32Array;
  /** Per-group mean reward. */
  mean: Float64Array;
  /** Per-group std (as chosen by `std`). */
  std: Float64Array;
  /** Per-group flag: all rewards equal within `equalTolerance` (these carry no learning signal). */
  equal: Uint8Array;
  /** Fraction of groups flagged equal (0 when there are no groups). */
  equalFraction: number;
}

/** Group-relative advantages for groups of rewards (usually G samples of one question each). */
export function groupAdvantages(groups: ArrayLike<number>[], opts: AdvantageOptions): GroupAdvantages {
  const eps = opts.epsilon ?? 1e-6;
  const tol = opts.equalTolerance ?? 0;
  const total = groups.reduce((n, g) => n + g.length, 0);
  const out: GroupAdvantages = {
    advantages: new Float64Array(total),
    keep: new Uint8Array(total),
    group: new Uint32Array(total),
    mean: new Float64Array(groups.length),
    std: new Float64Array(groups.length),
    equal: new Uint8Array(groups.length),
    equalFraction: 0,
  };
  let at = 0;
  let nEqual = 0;
  groups.forEach((g, gi) => {
    const n = g.length;
    let sum = 0;
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = 0; i < n; i++) {
      const r = g[i];
      if (!Number.isFinite(r)) {
        throw new Error(`groupAdvantages: reward ${r} at group ${gi}, sample ${i} is not finite`);
      }
      sum += r;
      lo = Math.min(lo, r);
      hi = Math.max(hi, r);
    }
    const mean = n > 0 ? sum / n : 0;
    let ss = 0;
    for (let i = 0; i < n; i++) ss += (g[i] - mean) ** 2;
    const denom = opts.std === "population" ? n : n - 1;
    const std = denom > 0 ? Math.sqrt(ss / denom) : 0;
    const equal = n === 0 || hi - lo <= tol;
    if (equal) nEqual++;
    out.mean[gi] = mean;
    out.std[gi] = std;
    out.equal[gi] = equal ? 1 : 0;
    const keep = equal && opts.dropEqualGroups ? 0 : 1;
    for (let i = 0; i < n; i++, at++) {
      // An equal group's advantages are exactly 0 (not rounding noise around it, nor huge when
      // tolerance > 0 makes (r - mean) / eps blow up).
      out.advantages[at] = equal ? 0 : opts.mode === "mean" ? g[i] - mean : (g[i] - mean) / (std + eps);
      out.keep[at] = keep;
      out.group[at] = gi;
    }
  });
  out.equalFraction = groups.length > 0 ? nEqual / groups.length : 0;
  return out;
}

/** Splits a flat reward array into consecutive groups of `size` (G samples per question). */
export function splitGroups(rewards: ArrayLike<number>, size: number): Float64Array[] {
  if (!(Number.isInteger(size) && size > 0) || rewards.length % size !== 0) {
    throw new Error(`splitGroups: ${rewards.length} rewards do not split into groups of ${size}`);
  }
  const out: Float64Array[] = [];
  for (let i = 0; i < rewards.length; i += size) {
    out.push(Float64Array.from({ length: size }, (_, j) => rewards[i + j]));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Focus on hard questions.

/** Knobs of the hard-question scheduler. */
export interface FocusOptions {
  /** Skip a question once every sample solved it on this many consecutive visits (default 2). */
  skipAfter: number;
  /** Fraction of each batch drawn from sometimes-solved questions, beyond the epoch order (default 0.25). */
  revisitFraction: number;
  /** A skipped question is still visited with this probability when its turn comes (default 0). */
  recheckProb: number;
  /** Solve rates kept per question (default 8). */
  historyLength: number;
}

/** What the scheduler remembers about one question. */
export interface QuestionHistory {
  visits: number;
  /** Consecutive most recent visits on which every sample was correct. */
  solvedStreak: number;
  /** The last `historyLength` solve rates (fraction of samples correct), oldest first. */
  rates: number[];
}

/** The scheduler's whole state as plain JSON (for checkpoints). */
export interface FocusState {
  version: 1;
  options: FocusOptions;
  ids: string[];
  /** Questions still to visit in this epoch, next first. */
  queue: string[];
  epoch: number;
  rng: number[];
  history: Record<string, QuestionHistory>;
}

/** Default scheduler knobs. */
export const DEFAULT_FOCUS: Readonly<FocusOptions> = {
  skipAfter: 2,
  revisitFraction: 0.25,
  recheckProb: 0,
  historyLength: 8,
};

/**
 * Deterministic batch scheduler that skips questions the model always solves and revisits the
 * sometimes-solved ones. Owns the Rng it is given (pass a dedicated one): its state is part of
 * `toJSON()`, so a run resumed from a checkpoint draws the same batches.
 */
export class FocusScheduler {
  private readonly opts: FocusOptions;
  private readonly ids: string[];
  private queue: string[] = [];
  private epochNo = 0;
  private readonly hist = new Map<string, QuestionHistory>();

  constructor(ids: readonly string[], private readonly rng: Rng, options: Partial<FocusOptions> = {}) {
    this.opts = { ...DEFAULT_FOCUS, ...options };
    const o = this.opts;
    if (!(Number.isInteger(o.skipAfter) && o.skipAfter >= 1)) {
      throw new Error(`FocusScheduler: skipAfter must be an integer >= 1, got ${o.skipAfter}`);
    }
    if (!(o.revisitFraction >= 0 && o.revisitFraction <= 1)) {
      throw new Error(`FocusScheduler: revisitFraction must lie in [0, 1], got ${o.revisitFraction}`);
    }
    if (!(o.recheckProb >= 0 && o.recheckProb <= 1)) {
      throw new Error(`FocusScheduler: recheckProb must lie in [0, 1], got ${o.recheckProb}`);
    }
    if (!(Number.isInteger(o.historyLength) && o.historyLength >= 1)) {
      throw new Error(`FocusScheduler: historyLength must be an integer >= 1`);
    }
    if (new Set(ids).size !== ids.length) throw new Error("FocusScheduler: question ids must be unique");
    this.ids = [...ids];
  }

  /** Restores a scheduler saved with `toJSON()` (read back from a checkpoint: checked, throws on a bad state). */
  static fromJSON(json: unknown): FocusScheduler {
    const problem = focusStateProblem(json);
    if (problem !== null || !isFocusState(json)) throw new Error(`FocusScheduler.fromJSON: ${problem ?? "bad state"}`);
    const state = json;
    const s = new FocusScheduler(state.ids, new Rng(Uint32Array.from(state.rng)), state.options);
    s.queue = [...state.queue];
    s.epochNo = state.epoch;
    for (const [id, h] of Object.entries(state.history)) {
      s.hist.set(id, { visits: h.visits, solvedStreak: h.solvedStreak, rates: [...h.rates] });
    }
    return s;
  }

  /** The state as plain JSON; `FocusScheduler.fromJSON` continues exactly where this one is. */
  toJSON(): FocusState {
    const history: Record<string, QuestionHistory> = {};
    for (const [id, h] of this.hist) {
      history[id] = { visits: h.visits, solvedStreak: h.solvedStreak, rates: [...h.rates] };
    }
    return {
      version: 1,
      options: { ...this.opts },
      ids: [...this.ids],
      queue: [...this.queue],
      epoch: this.epochNo,
      rng: Array.from(this.rng.state()),
      history,
    };
  }

  /** Epochs started so far (the first `nextBatch` starts epoch 1). */
  get epoch(): number {
    return this.epochNo;
  }

  /** The history of one question, if it was ever recorded. */
  history(id: string): Readonly<QuestionHistory> | undefined {
    return this.hist.get(id);
  }

  /** True when the question is solved on `skipAfter` consecutive visits, so the epoch order skips it. */
  isMastered(id: string): boolean {
    return (this.hist.get(id)?.solvedStreak ?? 0) >= this.opts.skipAfter;
  }

  /** True when the last visit solved the question on some samples but not all. */
  isSometimesSolved(id: string): boolean {
    const r = this.hist.get(id)?.rates.at(-1);
    return r !== undefined && r > 0 && r < 1;
  }

  /** Questions not mastered. */
  activeIds(): string[] {
    return this.ids.filter((id) => !this.isMastered(id));
  }

  /**
   * Up to `n` distinct question ids: about `revisitFraction * n` drawn from the sometimes-solved
   * questions (weighted by p(1 - p) of their last solve rate p), the rest in epoch order, skipping
   * mastered questions (each still taken with probability `recheckProb`). A new epoch (a fresh
   * shuffle) starts when the order runs out. Fewer than `n` only when too few questions are active.
   */
  nextBatch(n: number): string[] {
    const batch: string[] = [];
    const taken = new Set<string>();
    const nRevisit = Math.min(n, Math.round(n * this.opts.revisitFraction));
    const pool = this.ids.filter((id) => this.isSometimesSolved(id) && !this.isMastered(id));
    while (batch.length < nRevisit && pool.length > 0) {
      const i = this.weightedPick(pool);
      batch.push(pool[i]);
      taken.add(pool[i]);
      pool.splice(i, 1);
    }
    let startedEpoch = false;
    while (batch.length < n) {
      if (this.queue.length === 0) {
        // At most one fresh epoch per call: a second pass would only meet questions already taken.
        const canTake = this.ids.some((id) => !taken.has(id) && (!this.isMastered(id) || this.opts.recheckProb > 0));
        if (startedEpoch || !canTake) break;
        this.queue = this.rng.shuffle([...this.ids]);
        this.epochNo++;
        startedEpoch = true;
      }
      const id = this.queue.shift();
      if (id === undefined || taken.has(id)) continue;
      // The draw happens only for mastered questions, so recheckProb = 0 consumes no randomness.
      if (this.isMastered(id) && !(this.opts.recheckProb > 0 && this.rng.next() < this.opts.recheckProb)) continue;
      batch.push(id);
      taken.add(id);
    }
    return batch;
  }

  /** Records one visit: `correct` of `total` samples solved question `id`. */
  record(id: string, correct: number, total: number): void {
    if (!(total > 0 && correct >= 0 && correct <= total)) {
      throw new Error(`FocusScheduler.record: bad counts ${correct}/${total}`);
    }
    const h = this.hist.get(id) ?? { visits: 0, solvedStreak: 0, rates: [] };
    const rate = correct / total;
    h.visits++;
    h.solvedStreak = rate === 1 ? h.solvedStreak + 1 : 0;
    h.rates.push(rate);
    if (h.rates.length > this.opts.historyLength) h.rates.splice(0, h.rates.length - this.opts.historyLength);
    this.hist.set(id, h);
  }

  private weightedPick(pool: string[]): number {
    const w = pool.map((id) => {
      const p = this.hist.get(id)?.rates.at(-1) ?? 0.5;
      return p * (1 - p);
    });
    const total = w.reduce((a, b) => a + b, 0);
    let u = this.rng.next() * total;
    for (let i = 0; i < w.length; i++) {
      u -= w[i];
      if (u < 0) return i;
    }
    return w.length - 1;
  }
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

const isNumArray = (x: unknown): x is number[] =>
  Array.isArray(x) && x.every((v) => typeof v === "number" && Number.isFinite(v));
const isStrArray = (x: unknown): x is string[] => Array.isArray(x) && x.every((v) => typeof v === "string");

/** Type guard for a saved scheduler state. */
export function isFocusState(x: unknown): x is FocusState {
  return focusStateProblem(x) === null;
}

function focusStateProblem(x: unknown): string | null {
  if (!isRecord(x)) return "not an object";
  if (x.version !== 1) return `unknown state version ${JSON.stringify(x.version) ?? "(missing)"}`;
  const o = x.options;
  if (
    !isRecord(o) ||
    !["skipAfter", "revisitFraction", "recheckProb", "historyLength"].every((k) => typeof o[k] === "number")
  ) return "bad options";
  if (!isStrArray(x.ids) || !isStrArray(x.queue)) return "ids and queue must be lists of strings";
  const ids = new Set(x.ids);
  if (!x.queue.every((id) => ids.has(id))) return "queue holds an unknown id";
  if (typeof x.epoch !== "number" || !Number.isInteger(x.epoch) || x.epoch < 0) return "bad epoch";
  if (!isNumArray(x.rng) || x.rng.length !== 4 || x.rng.every((w) => w === 0)) {
    return "rng must be four 32-bit words, not all zero";
  }
  if (!isRecord(x.history)) return "bad history";
  for (const [id, h] of Object.entries(x.history)) {
    if (!ids.has(id)) return `history of unknown id ${id}`;
    if (!isRecord(h) || typeof h.visits !== "number" || typeof h.solvedStreak !== "number" || !isNumArray(h.rates)) {
      return `bad history of ${id}`;
    }
  }
  return null;
}
