// Batched sampling on the policy: many prompts x G samples at once (prompts left-padded and
// prefilled once, their KV cache repeated G times, finished samples dropped from the batch),
// temperature / top-k / top-p / min-p, EOS and stop strings, a seedable RNG per sample, and each sampled token's log-probability under the
// model's own distribution (temperature 1, no truncation) — the quantity GRPO's ratio needs.
import { Rng } from "../core/rng.ts";
import type { KvCache, StepInput, StepOutput } from "./policy.ts";

/** Sampling parameters; `temperature: 0` (or `topK: 1`) is greedy decoding. */
export interface SamplingParams {
  temperature: number;
  /** Nucleus: keep the most probable tokens until their mass reaches topP (1 = off). */
  topP: number;
  /** Keep the topK most probable tokens (0 = off). */
  topK: number;
  /** Keep tokens with probability >= minP * the largest probability (0 = off). */
  minP: number;
  maxNewTokens: number;
  /** Generation ends once the decoded completion contains one of these; the text ends after it. */
  stop: readonly string[];
  /** Token ids that end a completion (kept in `tokens`, left out of `text`). */
  eosTokenIds: readonly number[];
  seed: number;
}

/** Defaults as transformers' `generate` with do_sample (no top-k filter here unless asked). */
export const DEFAULT_SAMPLING: SamplingParams = {
  temperature: 1,
  topP: 1,
  topK: 0,
  minP: 0,
  maxNewTokens: 256,
  stop: [],
  eosTokenIds: [],
  seed: 0,
};

/** Why a completion ended. */
export type FinishReason = "eos" | "stop" | "length";

/** One completion. */
export interface Sample {
  /** Index of its prompt, and its index among that prompt's samples. */
  prompt: number;
  index: number;
  tokens: number[];
  text: string;
  /** log p(token) under the temperature-1, unfiltered distribution, one per token. */
  logprobs: number[];
  finishReason: FinishReason;
}

/** The part of the policy the sampler drives (OrtPolicy implements it). */
export interface StepModel {
  readonly maxPositions: number;
  readonly cfg: { vocabSize: number };
  step(input: StepInput): Promise<StepOutput>;
  repeatCache(cache: KvCache, repeats: number): Promise<KvCache>;
  selectCacheRows(cache: KvCache, keep: readonly number[]): Promise<KvCache>;
  releaseCache(cache: KvCache): void;
}

/** Progress after each decoding step. */
export interface SampleProgress {
  step: number;
  finished: number;
  total: number;
  /** Tokens generated so far over all samples. */
  tokens: number;
  /** The tokens this step added, for streaming: sample (prompt, index) and token id. */
  added: { prompt: number; index: number; token: number }[];
}

/**
 * Wall milliseconds of a `sampleBatch` by part, added to (pass one object to several calls to sum
 * them): benchmarks read it; nothing is timed when it is not passed.
 */
export interface SampleTiming {
  /** The prompts' forward (`model.step` with no past), including its logits read-back. */
  prefillMs: number;
  /** Repeating the prefill cache n times (and expanding its logits). */
  repeatMs: number;
  /** Decoding steps' `model.step` calls (feeds, run, read-back), and how many. */
  stepMs: number;
  steps: number;
  /** Choosing tokens and their log-probabilities from the logits (CPU). */
  chooseMs: number;
  /** Decoding texts to look for stop strings (CPU). */
  stopMs: number;
  /** Dropping finished rows from the cache. */
  selectMs: number;
  /** The whole call; what the parts above leave is bookkeeping between steps and the final decode. */
  totalMs: number;
}

/** A SampleTiming of zeros. */
export function newSampleTiming(): SampleTiming {
  return { prefillMs: 0, repeatMs: 0, stepMs: 0, steps: 0, chooseMs: 0, stopMs: 0, selectMs: 0, totalMs: 0 };
}

/** Samples `n` completions of every prompt (token ids); `decode` turns ids into text for stop strings and results. */
export async function sampleBatch(
  model: StepModel,
  prompts: readonly (readonly number[])[],
  n: number,
  params: SamplingParams,
  decode: (ids: readonly number[]) => string,
  onProgress?: (p: SampleProgress) => void,
  timing?: SampleTiming,
): Promise<Sample[]> {
  checkParams(params, n);
  const now = () => (timing ? performance.now() : 0);
  const tCall = now();
  if (prompts.length === 0) return [];
  const V = model.cfg.vocabSize;
  const maxLen = Math.max(...prompts.map((p) => p.length));
  prompts.forEach((p, i) => {
    if (p.length === 0) throw new Error(`prompt ${i} is empty`);
  });
  if (maxLen + params.maxNewTokens > model.maxPositions) {
    throw new Error(
      `the longest prompt has ${maxLen} tokens; with maxNewTokens ${params.maxNewTokens} that exceeds the policy's maxPositions ${model.maxPositions}`,
    );
  }
  // Left padding, so every row's next token is at the same column; pads sit at position 0, masked.
  const pad = prompts.map((p) => maxLen - p.length);
  let t = now();
  const pre = await model.step({
    ids: prompts.map((p, i) => [...new Array<number>(pad[i]).fill(0), ...p]),
    mask: prompts.map((_, i) => Array.from({ length: maxLen }, (_, t) => (t < pad[i] ? 0 : 1))),
    positions: prompts.map((_, i) => Array.from({ length: maxLen }, (_, t) => Math.max(0, t - pad[i]))),
    past: null,
    keep: 1,
  });
  if (timing) timing.prefillMs += now() - t;
  t = now();
  let cache = await model.repeatCache(pre.present, n);
  const N = prompts.length * n;
  let logits: Float32Array = pre.logits;
  if (n > 1) {
    logits = new Float32Array(N * V);
    for (let r = 0; r < N; r++) {
      logits.set(pre.logits.subarray(Math.floor(r / n) * V, (Math.floor(r / n) + 1) * V), r * V);
    }
  }
  if (timing) timing.repeatMs += now() - t;
  const rows = Array.from(
    { length: N },
    (_, r) => ({ ...newRow(Math.floor(r / n), r % n), rng: new Rng(rowSeed(params.seed, Math.floor(r / n), r % n)) }),
  );
  const mask = rows.map((row) => Array.from({ length: maxLen }, (_, t) => (t < pad[row.prompt] ? 0 : 1)));
  const eos = new Set(params.eosTokenIds);
  let generated = 0;
  // Rows of the batch still decoding, in batch order: row active[i] owns logits row i.
  let active = rows.map((_, r) => r);
  try {
    for (let step = 0; step < params.maxNewTokens; step++) {
      const added: SampleProgress["added"] = [];
      let tStop = 0;
      t = now();
      for (const [i, r] of active.entries()) {
        const row = rows[r];
        const { token, logprob } = chooseToken(logits.subarray(i * V, (i + 1) * V), params, row.rng);
        added.push({ prompt: row.prompt, index: row.index, token });
        tStop += acceptToken(row, token, logprob, params, eos, decode, !!timing);
        generated++;
      }
      if (timing) {
        timing.chooseMs += now() - t - tStop;
        timing.stopMs += tStop;
      }
      const finished = rows.filter((r) => r.done).length;
      onProgress?.({ step: step + 1, finished, total: N, tokens: generated, added });
      if (finished === N) break;
      // Finished samples leave the batch (their cache rows are dropped), so long tails cost only
      // the rows still running.
      const still = active.filter((r) => !rows[r].done);
      if (still.length < active.length) {
        const keep = active.flatMap((r, i) => (rows[r].done ? [] : [i]));
        t = now();
        cache = await model.selectCacheRows(cache, keep);
        if (timing) timing.selectMs += now() - t;
        active = still;
      }
      for (const m of mask) m.push(1);
      t = now();
      const out = await model.step({
        ids: active.map((r) => [rows[r].tokens[rows[r].tokens.length - 1]]),
        mask: active.map((r) => mask[r]),
        positions: active.map((r) => [prompts[rows[r].prompt].length + rows[r].tokens.length - 1]),
        past: cache,
        keep: 1,
      });
      if (timing) {
        timing.stepMs += now() - t;
        timing.steps++;
      }
      model.releaseCache(cache);
      cache = out.present;
      logits = out.logits;
    }
  } finally {
    model.releaseCache(cache);
  }
  const samples = toSamples(rows, decode);
  if (timing) timing.totalMs += now() - tCall;
  return samples;
}

/** A completion being generated. */
export interface RowState {
  prompt: number;
  index: number;
  tokens: number[];
  logprobs: number[];
  /** The text up to the stop string, once one ended it. */
  text: string;
  done: FinishReason | null;
}

/** A fresh row for sample `index` of prompt `prompt`. */
export function newRow(prompt: number, index: number): RowState {
  return { prompt, index, tokens: [], logprobs: [], text: "", done: null };
}

/**
 * Appends a chosen token to a row and decides whether it ended: EOS, a stop string in the decoded
 * text, or maxNewTokens. Returns the milliseconds spent looking for stop strings (when `timed`).
 */
export function acceptToken(
  row: RowState,
  token: number,
  logprob: number,
  params: SamplingParams,
  eos: ReadonlySet<number>,
  decode: (ids: readonly number[]) => string,
  timed = false,
): number {
  row.tokens.push(token);
  row.logprobs.push(logprob);
  let stopMs = 0;
  if (eos.has(token)) {
    row.done = "eos";
  } else if (params.stop.length) {
    const ts = timed ? performance.now() : 0;
    const text = decode(row.tokens);
    const cut = firstStop(text, params.stop);
    if (cut !== null) {
      row.done = "stop";
      row.text = text.slice(0, cut);
    }
    if (timed) stopMs = performance.now() - ts;
  }
  if (!row.done && row.tokens.length >= params.maxNewTokens) row.done = "length";
  return stopMs;
}

/** The finished rows as samples: EOS left out of the text, the text cut after a stop string. */
export function toSamples(rows: readonly RowState[], decode: (ids: readonly number[]) => string): Sample[] {
  return rows.map((row): Sample => {
    const body = row.done === "eos" ? row.tokens.slice(0, -1) : row.tokens;
    // Some tokenizers (@huggingface/tokenizers) reject an empty id list.
    const text = row.done === "stop" ? row.text : body.length ? decode(body) : "";
    return {
      prompt: row.prompt,
      index: row.index,
      tokens: row.tokens,
      text,
      logprobs: row.logprobs,
      finishReason: row.done ?? "length",
    };
  });
}

/** Throws on sampling parameters out of range (and n < 1). */
export function checkParams(p: SamplingParams, n: number): void {
  const bad = (msg: string) => {
    throw new Error(`sampling: ${msg}`);
  };
  if (!Number.isInteger(n) || n < 1) bad(`n must be a positive integer, got ${n}`);
  if (!(p.temperature >= 0)) bad(`temperature must be >= 0, got ${p.temperature}`);
  if (!(p.topP > 0 && p.topP <= 1)) bad(`topP must be in (0, 1], got ${p.topP}`);
  if (!Number.isInteger(p.topK) || p.topK < 0) bad(`topK must be an integer >= 0, got ${p.topK}`);
  if (!(p.minP >= 0 && p.minP <= 1)) bad(`minP must be in [0, 1], got ${p.minP}`);
  if (!Number.isInteger(p.maxNewTokens) || p.maxNewTokens < 1) {
    bad(`maxNewTokens must be a positive integer, got ${p.maxNewTokens}`);
  }
  if (p.stop.some((s) => s === "")) bad("stop strings must not be empty");
}

/** Seed of sample `index` of prompt `prompt`: independent of the batch it runs in. */
export function rowSeed(seed: number, prompt: number, index: number): number {
  return (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(prompt + 1, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35)) >>>
    0;
}

/** Index just past the earliest stop string in `text`, or null. */
function firstStop(text: string, stop: readonly string[]): number | null {
  let best: number | null = null;
  for (const s of stop) {
    const at = text.indexOf(s);
    if (at >= 0 && (best === null || at + s.length < best)) best = at + s.length;
  }
  return best;
}

/** Relative probability below which tokens are dropped: their total mass is < V * e^-40, far below the RNG's 2^-32 resolution. */
const NEGLIGIBLE_LOG_RATIO = -40;
/** Top-p first sorts only tokens within e^-14 of the best; if they hold the nucleus, the rest never is sorted. */
const NUCLEUS_PRESELECT_LOG_RATIO = -14;

/**
 * The sampling distribution after temperature, top-k, top-p and min-p (in that order, as
 * transformers applies them), probabilities summing to 1. Ids are most probable first when top-p
 * is on, otherwise in id order: sorting a 150k vocabulary per token is avoided unless needed.
 */
export function samplingDistribution(
  logits: ArrayLike<number>,
  p: Pick<SamplingParams, "temperature" | "topK" | "topP" | "minP">,
): { ids: number[]; probs: number[] } {
  const V = logits.length;
  if (p.temperature === 0 || p.topK === 1) return { ids: [argmax(logits)], probs: [1] };
  const T = p.temperature;
  let mx = -Infinity;
  for (let v = 0; v < V; v++) mx = Math.max(mx, logits[v]);
  let ids: number[] = [];
  const floor = mx + T * NEGLIGIBLE_LOG_RATIO;
  for (let v = 0; v < V; v++) if (logits[v] >= floor) ids.push(v);
  const desc = (a: number, b: number) => logits[b] - logits[a] || a - b;
  if (p.topK > 0 && ids.length > p.topK) {
    // The k largest (lowest ids among ties at the boundary), kept in id order.
    const vals = Float32Array.from(ids, (v) => logits[v]).sort();
    const kth = vals[vals.length - p.topK];
    let above = 0;
    for (const v of ids) if (logits[v] > kth) above++;
    let ties = p.topK - above;
    ids = ids.filter((v) => logits[v] > kth || (logits[v] === kth && ties-- > 0));
  }
  const weight = (v: number) => Math.exp((logits[v] - mx) / T);
  if (p.topP < 1) {
    let total = 0;
    for (const v of ids) total += weight(v);
    // The nucleus is the most probable prefix, so if the likely tokens already hold topP of the
    // mass it lies among them and only they need sorting.
    const likely = ids.filter((v) => logits[v] >= mx + T * NUCLEUS_PRESELECT_LOG_RATIO);
    const likelyMass = likely.reduce((s, v) => s + weight(v), 0);
    const pool = likelyMass >= p.topP * total ? likely : ids;
    pool.sort(desc);
    // The smallest most-probable prefix whose mass reaches topP (the token crossing it is kept).
    let acc = 0, keep = 0;
    while (keep < pool.length && acc < p.topP * total) acc += weight(pool[keep++]);
    ids = pool.slice(0, Math.max(1, keep));
  }
  if (p.minP > 0) {
    // The most probable token survives top-k and top-p, so p >= minP * p_max is a logit threshold.
    const minLogit = mx + T * Math.log(p.minP);
    ids = ids.filter((v) => logits[v] >= minLogit);
  }
  const w = ids.map(weight);
  const total = w.reduce((s, x) => s + x, 0);
  return { ids, probs: w.map((x) => x / total) };
}

/** Draws one token from `logits` (V) and returns it with its log-probability under softmax(logits). */
export function chooseToken(logits: Float32Array, p: SamplingParams, rng: Rng): { token: number; logprob: number } {
  if (p.temperature > 0 && p.topK === 0 && p.topP === 1) return chooseUnsorted(logits, p, rng);
  const dist = samplingDistribution(logits, p);
  let token = dist.ids[0];
  if (dist.ids.length > 1) {
    const u = rng.next();
    let acc = 0;
    token = dist.ids[dist.ids.length - 1];
    for (let i = 0; i < dist.ids.length; i++) {
      acc += dist.probs[i];
      if (u < acc) {
        token = dist.ids[i];
        break;
      }
    }
  }
  return { token, logprob: logSoftmaxAt(logits, token) };
}

/**
 * Temperature (and min-p) sampling without building the distribution: two passes over the
 * vocabulary in id order, the same draw as walking `samplingDistribution`'s ids.
 */
function chooseUnsorted(logits: Float32Array, p: SamplingParams, rng: Rng): { token: number; logprob: number } {
  const V = logits.length, T = p.temperature;
  let mx = -Infinity;
  for (let v = 0; v < V; v++) if (logits[v] > mx) mx = logits[v];
  const floor = Math.max(mx + T * NEGLIGIBLE_LOG_RATIO, p.minP > 0 ? mx + T * Math.log(p.minP) : -Infinity);
  let z1 = 0, zt = 0;
  for (let v = 0; v < V; v++) {
    const d = logits[v] - mx;
    z1 += Math.exp(d);
    if (logits[v] >= floor) zt += T === 1 ? Math.exp(d) : Math.exp(d / T);
  }
  const target = rng.next() * zt;
  let acc = 0, token = -1;
  for (let v = 0; v < V; v++) {
    if (logits[v] < floor) continue;
    token = v;
    acc += T === 1 ? Math.exp(logits[v] - mx) : Math.exp((logits[v] - mx) / T);
    if (target < acc) break;
  }
  return { token, logprob: logits[token] - mx - Math.log(z1) };
}

/** Index of the largest value (the lowest index among ties). */
export function argmax(x: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}

/** log softmax(x)[i] in float64. */
export function logSoftmaxAt(x: ArrayLike<number>, i: number): number {
  let mx = -Infinity;
  for (let v = 0; v < x.length; v++) mx = Math.max(mx, x[v]);
  let z = 0;
  for (let v = 0; v < x.length; v++) z += Math.exp(x[v] - mx);
  return x[i] - mx - Math.log(z);
}
