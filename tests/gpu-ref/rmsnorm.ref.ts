// Float64 CPU reference of rmsnorm.wgsl (both ways) and rmsnorm_dw.wgsl.
// Dimension letters: R rows (N, or N*H for per-head norms), C channels per row.
import type { RmsNormDims } from "../../src/gpu/kernels/rmsnorm.ts";
export type { RmsNormDims };

/** y (R, C) = x * rsqrt(mean(x^2) + eps) * w, and rstd (R), in float64. */
export function rmsnormForwardRef(
  x: ArrayLike<number>,
  w: ArrayLike<number>,
  d: RmsNormDims,
): { y: Float64Array; rstd: Float64Array } {
  const { rows, C, eps } = d;
  const y = new Float64Array(rows * C);
  const rstd = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let c = 0; c < C; c++) s += x[r * C + c] * x[r * C + c];
    const rs = 1 / Math.sqrt(s / C + eps);
    rstd[r] = rs;
    for (let c = 0; c < C; c++) y[r * C + c] = x[r * C + c] * rs * w[c];
  }
  return { y, rstd };
}

/** dx (R, C) and dw (C) given dy (R, C); rstd is recomputed from x in float64. */
export function rmsnormBackwardRef(
  dy: ArrayLike<number>,
  x: ArrayLike<number>,
  w: ArrayLike<number>,
  d: RmsNormDims,
): { dx: Float64Array; dw: Float64Array } {
  const { rows, C } = d;
  const { rstd } = rmsnormForwardRef(x, w, d);
  const dx = new Float64Array(rows * C);
  const dw = new Float64Array(C);
  for (let r = 0; r < rows; r++) {
    const rs = rstd[r];
    let s = 0;
    for (let c = 0; c < C; c++) s += dy[r * C + c] * w[c] * x[r * C + c];
    const coef = (rs * rs * s) / C;
    for (let c = 0; c < C; c++) {
      const i = r * C + c;
      dx[i] = rs * (dy[i] * w[c] - x[i] * coef);
      dw[c] += dy[i] * x[i] * rs;
    }
  }
  return { dx, dw };
}
