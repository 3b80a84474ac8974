// Where a process reward model reads its scores: the steps of an answer written as a chain of
// CTEs (core/cocte.ts), their end offsets in the text, the token holding each step's last
// character, and how step scores make one chain score. Pure: no model, no GPU.
import { splitChain, stepEndOffsets } from "./cocte.ts";

/** The steps of one answer as the PRM sees them. */
export interface PrmStepSpans {
  /** Offset in the text just after each step (CTE steps, then the final statement), increasing. */
  ends: number[];
  /** The CTE's name per step, null for the final statement or a whole answer read as one step. */
  names: (string | null)[];
  /** What the splitter reported (core/cocte.ts problems), plus why the answer is one step when it is. */
  problems: string[];
}

/**
 * The PRM steps of `text`: the chain's steps and final statement at their stepEndOffsets (a step
 * the splitter could not place, or one out of order, is left out). An answer with no step at all
 * (no SQL found, empty chain) is read as one step ending at the end of its text, so every
 * non-empty answer gets a score; an empty text has no steps.
 */
export function prmStepSpans(text: string): PrmStepSpans {
  const chain = splitChain(text);
  const offsets = stepEndOffsets(text, chain);
  const names: (string | null)[] = [...chain.steps.map((s) => s.name), ...(chain.final !== null ? [null] : [])];
  const ends: number[] = [];
  const kept: (string | null)[] = [];
  offsets.forEach((e, k) => {
    if (e > 0 && e <= text.length && (ends.length === 0 || e > ends[ends.length - 1])) {
      ends.push(e);
      kept.push(names[k] ?? null);
    }
  });
  const problems = [...chain.problems];
  if (ends.length === 0 && text.length > 0) {
    problems.push("no step found: the whole answer is one step");
    return { ends: [text.length], names: [null], problems };
  }
  return { ends, names: kept, problems };
}

/**
 * charEnds[i] = the length of decode(ids[0..i]): where each token's text ends (`decode` is the
 * tokenizer's). Fast path: the tokens decoded one by one, kept when their lengths add up to the
 * whole text's and none is a partial character (U+FFFD); otherwise every prefix is decoded, which
 * places a character split over two tokens at the second.
 */
export function tokenCharEnds(ids: readonly number[], decode: (ids: readonly number[]) => string): number[] {
  const out: number[] = [];
  let at = 0, clean = true;
  for (const id of ids) {
    const piece = decode([id]);
    if (piece.includes("\uFFFD")) clean = false;
    at += piece.length;
    out.push(at);
  }
  if (clean && (ids.length === 0 || decode(ids).length === at)) return out;
  return ids.map((_, i) => decode(ids.slice(0, i + 1)).length);
}

/**
 * For each step end offset, the index of the token holding the character at offset - 1: the first
 * token whose text ends at or after the offset. An offset past the last token maps to the last
 * token; with no tokens the result is empty. Steps that land on the same token keep only the
 * last of them (one score per token), so the result is strictly increasing, aligned with `keep`.
 */
export function stepTokenRows(
  charEnds: readonly number[],
  stepEnds: readonly number[],
): { rows: number[]; keep: number[] } {
  const rows: number[] = [];
  const keep: number[] = [];
  if (charEnds.length === 0) return { rows, keep };
  let i = 0;
  stepEnds.forEach((end, k) => {
    while (i < charEnds.length - 1 && charEnds[i] < end) i++;
    if (rows.length && rows[rows.length - 1] === i) {
      keep[keep.length - 1] = k;
      return;
    }
    rows.push(i);
    keep.push(k);
  });
  return { rows, keep };
}

/** How a chain's step scores make one score (best-of-N ranks by it; GRPO's prm reward uses the mean). */
export const PRM_AGGREGATES = ["min", "mean", "last", "product"] as const;
export type PrmAggregate = (typeof PRM_AGGREGATES)[number];

/** One score from step scores in [0, 1]: their minimum, mean, the last one, or their product; NaN when there are none. */
export function aggregateStepScores(scores: readonly number[], how: PrmAggregate): number {
  if (scores.length === 0) return NaN;
  switch (how) {
    case "min":
      return Math.min(...scores);
    case "mean":
      return scores.reduce((a, b) => a + b, 0) / scores.length;
    case "last":
      return scores[scores.length - 1];
    case "product":
      return scores.reduce((a, b) => a * b, 1);
  }
}

/**
 * The step each completion token belongs to, from the steps' last-token indices `rows` (strictly
 * increasing, within 0..n-1): tokens up to rows[0] are step 0's, tokens after rows[j-1] up to
 * rows[j] step j's, and tokens after the last step (closing fence, end of sequence) the last step's.
 */
export function tokenSteps(n: number, rows: readonly number[]): Int32Array {
  const out = new Int32Array(n);
  if (rows.length === 0) return out.fill(-1);
  let j = 0;
  for (let t = 0; t < n; t++) {
    while (j < rows.length - 1 && t > rows[j]) j++;
    out[t] = j;
  }
  return out;
}
