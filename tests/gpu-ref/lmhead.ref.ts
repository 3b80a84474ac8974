// Float64 CPU reference of the fused vocabulary head: logits z = h W^T, then per row the
// log-probability of the target, the logsumexp and the entropy of softmax(z); and its backward.
//
// Glossary: N rows (tokens), C channels, V vocabulary. h (N, C), W (V, C) in PyTorch layout (a tied
// head passes the embedding table), targets (N) u32; a target >= V marks an ignored row (logp 0).
// Backward of L = sum_n g_n logp_n + gEnt_n entropy_n: with p = softmax(z_n),
//   dL/dz_nv = g_n (1[v = t_n] - p_v) - gEnt_n p_v (z_v - lse_n + entropy_n)
//   (the g term is absent on ignored rows),
//   dh = scale dz W, dW = scale dz^T h, where z = scale * h W^T (scale = 1 / temperature).
import type { LmHeadDims } from "../../src/gpu/kernels/lmhead.ts";
export type { LmHeadDims };

function logits(h: ArrayLike<number>, w: ArrayLike<number>, d: LmHeadDims, n: number, scale: number): Float64Array {
  const z = new Float64Array(d.V);
  for (let v = 0; v < d.V; v++) {
    let s = 0;
    for (let c = 0; c < d.C; c++) s += h[n * d.C + c] * w[v * d.C + c];
    z[v] = scale * s;
  }
  return z;
}

function stats(z: Float64Array): { lse: number; entropy: number } {
  let m = -Infinity;
  for (const x of z) m = Math.max(m, x);
  let s = 0;
  for (const x of z) s += Math.exp(x - m);
  const lse = m + Math.log(s);
  let entropy = 0;
  for (const x of z) entropy -= Math.exp(x - lse) * (x - lse);
  return { lse, entropy };
}

/** logp (N) of the targets, lse (N) and entropy (N) of softmax(scale * h W^T), in float64. */
export function lmheadForwardRef(
  h: ArrayLike<number>, // (N, C)
  w: ArrayLike<number>, // (V, C)
  targets: ArrayLike<number>, // (N)
  d: LmHeadDims,
  scale = 1, // logit multiplier: 1 / sampling temperature
): { logp: Float64Array; lse: Float64Array; entropy: Float64Array } {
  const logp = new Float64Array(d.N);
  const lse = new Float64Array(d.N);
  const entropy = new Float64Array(d.N);
  for (let n = 0; n < d.N; n++) {
    const z = logits(h, w, d, n, scale);
    const st = stats(z);
    lse[n] = st.lse;
    entropy[n] = st.entropy;
    logp[n] = targets[n] < d.V ? z[targets[n]] - st.lse : 0;
  }
  return { logp, lse, entropy };
}

/** dh (N, C) and dW (V, C) of sum(g * logp) + sum(gEnt * entropy), in float64. */
export function lmheadBackwardRef(
  h: ArrayLike<number>,
  w: ArrayLike<number>,
  targets: ArrayLike<number>,
  g: ArrayLike<number>, // (N)
  gEnt: ArrayLike<number> | undefined, // (N)
  d: LmHeadDims,
  scale = 1,
): { dh: Float64Array; dw: Float64Array } {
  const dh = new Float64Array(d.N * d.C);
  const dw = new Float64Array(d.V * d.C);
  for (let n = 0; n < d.N; n++) {
    const z = logits(h, w, d, n, scale);
    const { lse, entropy } = stats(z);
    for (let v = 0; v < d.V; v++) {
      const p = Math.exp(z[v] - lse);
      let dz = targets[n] < d.V ? g[n] * ((v === targets[n] ? 1 : 0) - p) : 0;
      if (gEnt) dz -= gEnt[n] * p * (z[v] - lse + entropy);
      for (let c = 0; c < d.C; c++) {
        dh[n * d.C + c] += scale * dz * w[v * d.C + c];
        dw[v * d.C + c] += scale * dz * h[n * d.C + c];
      }
    }
  }
  return { dh, dw };
}
