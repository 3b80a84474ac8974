// Wrapper of grpo_loss.wgsl: the GRPO-family loss, dL/dlogpNew per token and the batch metrics,
// computed on the GPU from buffers the trainer already holds (logpNew and entropy from its forward).
import type { GrpoMetrics } from "../../core/grpo.ts";
import { encodeKernel, packParams } from "./layer-common.ts";
import source from "./grpo_loss.wgsl" with { type: "text" };

/** Inputs (N) and outputs of the loss kernel; `logpRef` may be omitted when there is no reference. */
export interface GrpoLossBuffers {
  logpNew: GPUBuffer;
  logpOld: GPUBuffer;
  logpRef?: GPUBuffer;
  mask: GPUBuffer;
  /** Aggregation weights (src/core/grpo.ts aggregationWeights), mask folded in. */
  weight: GPUBuffer;
  /** Per-token advantages. */
  adv: GPUBuffer;
  entropy: GPUBuffer;
  /** Output (N): dL/dlogpNew. */
  grad: GPUBuffer;
  /** Output (12): see grpo_loss.wgsl. */
  stats: GPUBuffer;
}

/** Clip range and KL coefficient of one loss evaluation. */
export interface GrpoLossKnobs {
  N: number;
  epsLow: number;
  epsHigh: number;
  beta: number;
}

/** Records the loss kernel (one workgroup strides over all N tokens). */
export async function encodeGrpoLoss(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  b: GrpoLossBuffers,
  k: GrpoLossKnobs,
): Promise<void> {
  if (k.beta !== 0 && !b.logpRef) throw new Error("grpo_loss: beta != 0 needs logpRef");
  const words = packParams("ufffu", [k.N, k.epsLow, k.epsHigh, k.beta, b.logpRef ? 1 : 0]);
  const ref = b.logpRef ?? b.logpOld; // bound but unread when hasRef == 0
  const bind = [b.logpNew, b.logpOld, ref, b.mask, b.weight, b.adv, b.entropy, b.grad, b.stats, words];
  await encodeKernel(device, enc, "grpo_loss", source, {}, bind, [1]);
}

/** The loss parts and metrics, in src/core/grpo.ts's shape, plus the masked mean entropy. */
export interface GrpoGpuResult {
  loss: number;
  pgLoss: number;
  klLoss: number;
  metrics: GrpoMetrics;
  entropy: number;
}

/** Combines the raw stats of several micro-batches (sums add, min/max combine) into one raw stats vector. */
export function combineGrpoStats(parts: ArrayLike<number>[]): Float64Array {
  const out = new Float64Array(12);
  out[9] = Infinity;
  out[10] = -Infinity;
  for (const p of parts) {
    for (let j = 0; j < 9; j++) out[j] += p[j];
    if (p[2] > 0) {
      out[9] = Math.min(out[9], p[9]);
      out[10] = Math.max(out[10], p[10]);
    }
  }
  return out;
}

/** Interprets raw stats (12: see grpo_loss.wgsl) as loss parts and metrics. */
export function grpoResult(s: ArrayLike<number>, beta: number): GrpoGpuResult {
  const tokens = s[2];
  const per = (x: number) => (tokens > 0 ? x / tokens : 0);
  return {
    loss: s[0] + beta * s[1],
    pgLoss: s[0],
    klLoss: s[1],
    entropy: per(s[8]),
    metrics: {
      tokens,
      clipLowFrac: per(s[3]),
      clipHighFrac: per(s[4]),
      clipFrac: per(s[3] + s[4]),
      approxKl: per(s[5]),
      klRef: per(s[6]),
      ratioMean: per(s[7]),
      ratioMin: tokens > 0 ? s[9] : 1,
      ratioMax: tokens > 0 ? s[10] : 1,
    },
  };
}
