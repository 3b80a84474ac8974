// Test-time compute: self-consistency (vote over execution results), best-of-N, and the pass@k /
// maj@k estimators. Formulas and tie rules: docs/recipe.md.
import { type CompareMode, rowKey } from "./compare.ts";
import type { ResultSet } from "./types.ts";

/**
 * How two result sets are considered equal (compare.ts's modes). "set": rows as a set (BIRD's
 * rule, duplicates and order ignored); "bag": a multiset; "ordered": the row list.
 */
export type ResultSemantics = CompareMode;

/**
 * A canonical key of a result set: two results get the same key iff `resultsMatch` (compare.ts)
 * holds between them under `semantics`, so votes group exactly as the reward compares. Values
 * compare as Python compares them (integer 6 == real 6.0); column names are ignored, column order counts.
 */
export function resultKey(rs: ResultSet, semantics: ResultSemantics = "set"): string {
  const rows = rs.rows.map(rowKey);
  if (semantics !== "ordered") {
    // Code-unit order: deterministic and the same in every JavaScript engine (no locale).
    rows.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }
  // A JSON list of row keys: unambiguous whatever the row keys contain.
  return JSON.stringify(semantics === "set" ? rows.filter((r, i) => i === 0 || r !== rows[i - 1]) : rows);
}

/** One sampled answer for self-consistency. */
export interface VoteSample {
  /** The execution result; null when the SQL did not parse or run. A capped result counts as failed. */
  result: ResultSet | null;
  /** Sum of the completion's token log-probabilities (for logprob weighting). */
  logprob?: number;
  /** Completion tokens (for the per-token mean in "exp-mean-logprob"). */
  tokens?: number;
}

/**
 * How votes are weighted. "count": 1 per sample. "softmax-logprob": softmax of the summed
 * log-probabilities over the N samples (the model's normalised sequence probability, which
 * favours short completions). "exp-mean-logprob": exp(logprob / tokens), the geometric-mean token
 * probability in (0, 1] (length-normalised).
 */
export type VoteWeighting = "count" | "softmax-logprob" | "exp-mean-logprob";

/** The weighting a self-consistency cell asks for (`vote`, `logprobWeight`). */
export function voteWeightingOf(vote: "count" | "logprob", logprobWeight: "softmax" | "exp-mean"): VoteWeighting {
  if (vote === "count") return "count";
  return logprobWeight === "softmax" ? "softmax-logprob" : "exp-mean-logprob";
}

/** One group of samples with equal results. */
export interface VoteGroup {
  /** The result key, or null for the group of failed executions. */
  key: string | null;
  /** Sample indices, ascending. */
  members: number[];
  /** Sum of the members' weights. */
  weight: number;
  /** The member with the largest weight (the first on ties): the SQL to show for this answer. */
  representative: number;
}

/** The outcome of a vote. */
export interface VoteResult {
  /** The winning group (failed executions only when every sample failed); null when there were no samples. */
  winner: VoteGroup | null;
  /** All groups, best first (the failed group last). */
  groups: VoteGroup[];
  /** True when every sample failed. */
  allFailed: boolean;
}

/** Per-sample vote weights under `weighting` (throws when log-probabilities are needed and missing). */
export function voteWeights(samples: readonly VoteSample[], weighting: VoteWeighting): Float64Array {
  const w = new Float64Array(samples.length);
  if (weighting === "count") return w.fill(1);
  const lp = samples.map((s, i) => {
    if (s.logprob === undefined || !Number.isFinite(s.logprob)) {
      throw new Error(`vote: sample ${i} needs a finite logprob for ${weighting}`);
    }
    if (weighting === "softmax-logprob") return s.logprob;
    if (!(s.tokens !== undefined && s.tokens > 0)) {
      throw new Error(`vote: sample ${i} needs tokens > 0 for exp-mean-logprob`);
    }
    return s.logprob / s.tokens;
  });
  if (weighting === "exp-mean-logprob") {
    lp.forEach((x, i) => (w[i] = Math.exp(x)));
    return w;
  }
  const max = Math.max(...lp);
  let z = 0;
  lp.forEach((x, i) => (z += w[i] = Math.exp(x - max)));
  return w.map((x) => x / z);
}

/**
 * Self-consistency: groups the samples by result key and returns the heaviest group. Ties go to the
 * group with more members, then to the group whose first member came first (sample order), so the
 * outcome never depends on hashing or sort stability. Failed executions (null or capped results)
 * form one group that never wins unless every sample failed.
 */
export function vote(
  samples: readonly VoteSample[],
  weighting: VoteWeighting = "count",
  semantics: ResultSemantics = "set",
): VoteResult {
  const w = voteWeights(samples, weighting);
  const byKey = new Map<string, VoteGroup>();
  let failed: VoteGroup | null = null;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    const key = s.result && !s.result.capped ? resultKey(s.result, semantics) : null;
    let g: VoteGroup | null | undefined = key === null ? failed : byKey.get(key);
    if (!g) {
      g = { key, members: [], weight: 0, representative: i };
      if (key === null) failed = g;
      else byKey.set(key, g);
    }
    g.members.push(i);
    g.weight += w[i];
    if (w[i] > w[g.representative]) g.representative = i;
  }
  const groups = [...byKey.values()].sort((a, b) =>
    b.weight - a.weight || b.members.length - a.members.length || a.members[0] - b.members[0]
  );
  if (failed) groups.push(failed);
  return { winner: groups[0] ?? null, groups, allFailed: samples.length > 0 && byKey.size === 0 };
}

/** Best-of-N: the index of the item with the highest score (the first on ties); NaN scores never win; -1 for none. */
export function bestOfN<T>(
  items: readonly T[],
  score: (item: T, index: number) => number,
): { index: number; score: number } {
  let index = -1;
  let best = -Infinity;
  items.forEach((item, i) => {
    const s = score(item, i);
    if (!Number.isNaN(s) && (index < 0 || s > best)) {
      index = i;
      best = s;
    }
  });
  return { index, score: index < 0 ? NaN : best };
}

/**
 * Unbiased pass@k from n samples of which c are correct (Chen et al. 2021):
 * 1 - C(n - c, k) / C(n, k), computed as 1 - prod_{i = n - c + 1}^{n} (1 - k / i) (no big binomials).
 */
export function passAtK(n: number, c: number, k: number): number {
  if (
    !(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k) && n >= 0 && c >= 0 && c <= n && k >= 1 &&
      k <= n)
  ) {
    throw new Error(`passAtK: need integers 0 <= c <= n and 1 <= k <= n, got n=${n} c=${c} k=${k}`);
  }
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

/** One answer (a group of equal results) among the n samples of one question, for maj@k. */
export interface AnswerCount {
  count: number;
  correct: boolean;
  /** The failed-execution group: never wins a vote unless all k drawn samples failed (then scores 0). */
  failed?: boolean;
}

/**
 * maj@k: the probability that a count vote over k samples drawn without replacement from the n
 * samples picks a correct answer; a tie among the top answers scores the fraction of them that
 * are correct (a uniformly random tie-break). Exact (enumeration of how many samples each answer
 * contributes, weighted by prod C(n_j, k_j) / C(n, k)) when that takes at most `maxTerms`
 * terms, otherwise a Monte Carlo estimate over `trials` draws from `random` (deterministic with a seeded Rng).
 */
export function majAtK(
  answers: readonly AnswerCount[],
  k: number,
  opts: { maxTerms?: number; trials?: number; random?: () => number } = {},
): { value: number; exact: boolean } {
  const n = answers.reduce((s, a) => s + a.count, 0);
  if (!(Number.isInteger(k) && k >= 1 && k <= n)) throw new Error(`majAtK: need 1 <= k <= n = ${n}, got ${k}`);
  const maxTerms = opts.maxTerms ?? 200_000;
  const score = (picks: number[]): number => {
    let top = 0;
    for (let j = 0; j < answers.length; j++) if (!answers[j].failed) top = Math.max(top, picks[j]);
    if (top === 0) return 0;
    let tied = 0;
    let good = 0;
    for (let j = 0; j < answers.length; j++) {
      if (answers[j].failed || picks[j] !== top) continue;
      tied++;
      if (answers[j].correct) good++;
    }
    return good / tied;
  };
  // Exact: sum over k-vectors, each weighted by prod C(n_j, k_j) / C(n, k) (in logs, to stay finite).
  const logC = (a: number, b: number) => logFactorial(a) - logFactorial(b) - logFactorial(a - b);
  const logTotal = logC(n, k);
  const picks = new Array<number>(answers.length).fill(0);
  const suffix = answers.map((_, j) => answers.slice(j).reduce((s, a) => s + a.count, 0));
  let terms = 0;
  let value = 0;
  const walk = (j: number, left: number, logW: number): boolean => {
    if (j === answers.length) {
      if (left !== 0) return true;
      if (++terms > maxTerms) return false;
      value += Math.exp(logW - logTotal) * score(picks);
      return true;
    }
    const from = Math.max(0, left - (suffix[j] - answers[j].count));
    for (let x = from; x <= Math.min(left, answers[j].count); x++) {
      picks[j] = x;
      if (!walk(j + 1, left - x, logW + logC(answers[j].count, x))) return false;
    }
    picks[j] = 0;
    return true;
  };
  if (walk(0, k, 0)) return { value, exact: true };
  // Monte Carlo: partial Fisher-Yates over the n sample labels.
  const random = opts.random;
  if (!random) {
    throw new Error(
      `majAtK: more than ${maxTerms} exact terms; pass opts.random (e.g. () => rng.next()) for an estimate`,
    );
  }
  const trials = opts.trials ?? 20_000;
  const labels: number[] = answers.flatMap((a, j) => new Array<number>(a.count).fill(j));
  let sum = 0;
  for (let t = 0; t < trials; t++) {
    picks.fill(0);
    for (let i = 0; i < k; i++) {
      const r = i + Math.floor(random() * (n - i));
      [labels[i], labels[r]] = [labels[r], labels[i]];
      picks[labels[i]]++;
    }
    sum += score(picks);
  }
  return { value: sum / trials, exact: false };
}

const logFactorials: number[] = [0];
function logFactorial(x: number): number {
  for (let i = logFactorials.length; i <= x; i++) logFactorials.push(logFactorials[i - 1] + Math.log(i));
  return logFactorials[x];
}
