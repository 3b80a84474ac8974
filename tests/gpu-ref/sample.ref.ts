// Float64 reference of sample.wgsl: the same choice (greedy, or temperature / top-k / top-p / min-p
// in transformers' order with tokens below e^-40 of the best dropped first, then an id-order inverse-CDF
// draw of the same counter-based uniform) with exact sorting and float64 sums, and the chosen token's
// log-probability under softmax(logits). `ambiguous` says the GPU's float32 sums may decide otherwise:
// the draw or a top-p boundary lies within `eps` (relative) of a cumulative sum, or a logit within it of
// the min-p threshold.
import type { ChoiceParams } from "../../src/gpu/kernels/sample.ts";

/** lowbias32 (Wellons), as sample_common.wgsl's mix. */
export function mix32(x0: number): number {
  let x = x0 >>> 0;
  x = (x ^ (x >>> 16)) >>> 0;
  x = Math.imul(x, 0x7feb352d) >>> 0;
  x = (x ^ (x >>> 15)) >>> 0;
  x = Math.imul(x, 0x846ca68b) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** The kernel's uniform in [0, 1) for a row's seed and draw counter (24 bits, exact in float32). */
export function drawUniform(seed: number, counter: number): number {
  return (mix32((seed ^ mix32((counter + 0x9e3779b9) >>> 0)) >>> 0) >>> 8) / 16777216;
}

/** The tokens the filters keep (ascending ids), before the draw: what samplingDistribution keeps. */
export function keptIds(logits: ArrayLike<number>, c: ChoiceParams): number[] {
  const V = logits.length;
  let mx = -Infinity;
  for (let v = 0; v < V; v++) mx = Math.max(mx, logits[v]);
  if (c.temperature === 0 || c.topK === 1) return [argmaxLowest(logits)];
  const T = c.temperature;
  const floor = Math.fround(mx - Math.fround(40 * T));
  let ids: number[] = [];
  for (let v = 0; v < V; v++) if (logits[v] >= floor) ids.push(v);
  const desc = (a: number, b: number) => logits[b] - logits[a] || a - b;
  if (c.topK > 0 && ids.length > c.topK) ids = [...ids].sort(desc).slice(0, c.topK).sort((a, b) => a - b);
  const w = (v: number) => Math.exp((logits[v] - mx) / T);
  if (c.topP < 1) {
    const sorted = [...ids].sort(desc);
    const total = sorted.reduce((s, v) => s + w(v), 0);
    let acc = 0, keep = 0;
    while (keep < sorted.length && acc < c.topP * total) acc += w(sorted[keep++]);
    ids = sorted.slice(0, Math.max(1, keep)).sort((a, b) => a - b);
  }
  if (c.minP > 0) ids = ids.filter((v) => logits[v] >= mx + T * Math.log(c.minP));
  return ids;
}

/** The reference choice for one row. */
export function chooseRef(
  logits: Float32Array,
  c: ChoiceParams,
  seed: number,
  counter: number,
  eps = 1e-6,
): { token: number; logprob: number; ambiguous: boolean } {
  const V = logits.length;
  let mx = -Infinity;
  for (let v = 0; v < V; v++) mx = Math.max(mx, logits[v]);
  let z = 0;
  for (let v = 0; v < V; v++) z += Math.exp(logits[v] - mx);
  const lse = mx + Math.log(z);
  if (c.temperature === 0 || c.topK === 1) {
    const token = argmaxLowest(logits);
    return { token, logprob: logits[token] - lse, ambiguous: false };
  }
  const T = c.temperature;
  const w = (v: number) => Math.exp((logits[v] - mx) / T);
  let ambiguous = false;
  if (c.topP < 1) {
    // A nucleus boundary within eps of topP * total may fall either way in float32.
    const pre = keptIds(logits, { ...c, topP: 1, minP: 0 }).sort((a, b) => logits[b] - logits[a] || a - b);
    const total = pre.reduce((s, v) => s + w(v), 0);
    let acc = 0;
    for (const v of pre) {
      acc += w(v);
      if (Math.abs(acc - c.topP * total) <= eps * total) ambiguous = true;
    }
  }
  if (c.minP > 0) {
    const thr = mx + T * Math.log(c.minP);
    for (let v = 0; v < V; v++) if (Math.abs(logits[v] - thr) <= eps * Math.max(1, Math.abs(thr))) ambiguous = true;
  }
  const ids = keptIds(logits, c);
  const Z = ids.reduce((s, v) => s + w(v), 0);
  const target = drawUniform(seed, counter) * Z;
  let acc = 0, token = ids[ids.length - 1];
  for (const v of ids) {
    acc += w(v);
    if (Math.abs(acc - target) <= eps * Z) ambiguous = true;
    if (target < acc) {
      token = v;
      break;
    }
  }
  return { token, logprob: logits[token] - lse, ambiguous };
}

function argmaxLowest(x: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i] > x[best]) best = i;
  return best;
}
