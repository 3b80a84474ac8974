// Float64 CPU reference of the PRM's scalar head and its loss (prm_head_*.wgsl).
//
// Glossary: N rows (tokens), C channels. h (N, C) is the last hidden state (after model.norm);
// the head's parameters are one (C + 1) vector wb: w = wb[0..C), b = wb[C].
//   z_n = h_n . w + b,  p_n = sigmoid(z_n)
//   L = sum_n weight_n (softplus(z_n) - y_n z_n)      (binary cross-entropy on logits)
//   dL/dz_n = weight_n (p_n - y_n);  dh_n = dz_n w;  dw = sum_n dz_n h_n;  db = sum_n dz_n.
import type { PrmHeadDims } from "../../src/gpu/kernels/prm_head.ts";
export type { PrmHeadDims };

/** z (N) = h w + b, in float64. */
export function prmHeadForwardRef(h: ArrayLike<number>, wb: ArrayLike<number>, d: PrmHeadDims): Float64Array {
  const z = new Float64Array(d.N);
  for (let n = 0; n < d.N; n++) {
    let s = wb[d.C];
    for (let c = 0; c < d.C; c++) s += h[n * d.C + c] * wb[c];
    z[n] = s;
  }
  return z;
}

/** log(1 + e^x) without overflow. */
export function softplus(x: number): number {
  return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
}

/** The logistic function without overflow. */
export function sigmoid(x: number): number {
  const e = Math.exp(-Math.abs(x));
  return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

/** Per-row weighted BCE on logits and its gradient dL/dz, in float64 (rows of weight 0 give 0). */
export function prmBceRef(
  z: ArrayLike<number>,
  labels: ArrayLike<number>,
  weights: ArrayLike<number>,
): { loss: Float64Array; dz: Float64Array } {
  const loss = new Float64Array(z.length);
  const dz = new Float64Array(z.length);
  for (let n = 0; n < z.length; n++) {
    const w = weights[n];
    if (w === 0) continue;
    loss[n] = w * (softplus(z[n]) - labels[n] * z[n]);
    dz[n] = w * (sigmoid(z[n]) - labels[n]);
  }
  return { loss, dz };
}

/** dh (N, C) and dwb (C + 1) from dz, in float64. */
export function prmHeadBackwardRef(
  dz: ArrayLike<number>,
  h: ArrayLike<number>,
  wb: ArrayLike<number>,
  d: PrmHeadDims,
): { dh: Float64Array; dwb: Float64Array } {
  const dh = new Float64Array(d.N * d.C);
  const dwb = new Float64Array(d.C + 1);
  for (let n = 0; n < d.N; n++) {
    for (let c = 0; c < d.C; c++) {
      dh[n * d.C + c] = dz[n] * wb[c];
      dwb[c] += dz[n] * h[n * d.C + c];
    }
    dwb[d.C] += dz[n];
  }
  return { dh, dwb };
}
