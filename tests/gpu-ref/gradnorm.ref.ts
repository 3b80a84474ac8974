// Float64 CPU reference of gradnorm.wgsl (both passes).
import type { GradStats } from "../../src/gpu/kernels/gradnorm.ts";
export type { GradStats };

/** Global L2 norm over all `grads`, torch's clip factor, and the non-finite flag, in float64. */
export function gradNormRef(grads: readonly ArrayLike<number>[], maxNorm: number): GradStats {
  let sumsq = 0;
  let nonFinite = false;
  for (const g of grads) {
    for (let i = 0; i < g.length; i++) {
      if (!Number.isFinite(g[i])) nonFinite = true;
      sumsq += g[i] * g[i];
    }
  }
  const norm = Math.sqrt(sumsq);
  const clip = maxNorm > 0 ? Math.min(1, maxNorm / (norm + 1e-6)) : 1;
  return { sumsq, norm, clip, nonFinite: nonFinite || !Number.isFinite(sumsq) };
}
