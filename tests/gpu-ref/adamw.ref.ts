// Float64 CPU reference of adamw.wgsl (torch.optim.AdamW's arithmetic, decoupled weight decay).
import type { AdamWHyper } from "../../src/gpu/kernels/adamw.ts";
export type { AdamWHyper };

/**
 * One AdamW step on copies of param, m and v with the gradient scaled by `clip`; when `skip`
 * (non-finite gradients) the copies are returned unchanged.
 */
export function adamwRef(
  param: ArrayLike<number>,
  grad: ArrayLike<number>,
  m: ArrayLike<number>,
  v: ArrayLike<number>,
  hp: AdamWHyper,
  clip = 1,
  skip = false,
): { param: Float64Array; m: Float64Array; v: Float64Array } {
  const out = { param: Float64Array.from(param), m: Float64Array.from(m), v: Float64Array.from(v) };
  if (skip) return out;
  const { lr, beta1, beta2, eps, weightDecay, step } = hp;
  const bc1 = 1 - Math.pow(beta1, step);
  const bc2 = 1 - Math.pow(beta2, step);
  for (let i = 0; i < param.length; i++) {
    const g = grad[i] * clip;
    const mi = beta1 * m[i] + (1 - beta1) * g;
    const vi = beta2 * v[i] + (1 - beta2) * g * g;
    const mhat = mi / bc1;
    const vhat = vi / bc2;
    out.param[i] = param[i] * (1 - lr * weightDecay) - (lr * mhat) / (Math.sqrt(vhat) + eps);
    out.m[i] = mi;
    out.v[i] = vi;
  }
  return out;
}
