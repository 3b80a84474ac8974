// Wrapper of adamw.wgsl: one AdamW step over flat (n) f32 buffers param, grad, m and v, clipped
// and possibly skipped according to a stats buffer written by encodeGradNorm.
import source from "./adamw.wgsl" with { type: "text" };
import { encodeGradNorm } from "./gradnorm.ts";
import { encodeKernel, grid, packParams } from "./layer-common.ts";

/** AdamW hyperparameters of one step. */
export interface AdamWHyper {
  lr: number;
  beta1: number;
  beta2: number;
  eps: number;
  weightDecay: number;
  /** Step number t, from 1: bias corrections 1 - beta^t. */
  step: number;
}

const WG = 256;

/** The buffers one AdamW step updates: `count` f32 values in each. */
export interface AdamWState {
  param: GPUBuffer;
  grad: GPUBuffer;
  m: GPUBuffer;
  v: GPUBuffer;
  count: number;
}

/** The uniform words of one step: bias corrections are formed in float64 on the CPU. */
export function adamwParams(count: number, hp: AdamWHyper): Uint32Array {
  if (!(hp.step >= 1)) throw new Error(`adamw: step ${hp.step} must be >= 1`);
  const bc1 = 1 - Math.pow(hp.beta1, hp.step);
  const bc2 = 1 - Math.pow(hp.beta2, hp.step);
  return packParams("ufffffff", [
    count,
    hp.lr,
    hp.beta1,
    hp.beta2,
    hp.eps,
    hp.weightDecay,
    hp.lr / bc1,
    Math.sqrt(bc2),
  ]);
}

/**
 * Records one AdamW step. `stats` (from encodeGradNorm, or gradStatsBuffer's "no clip, finite") supplies the clip
 * factor and skips the step on NaN/Inf gradients.
 */
export async function encodeAdamW(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  s: AdamWState,
  hp: AdamWHyper,
  stats: GPUBuffer,
): Promise<void> {
  const bind = [s.param, s.grad, s.m, s.v, stats, adamwParams(s.count, hp)];
  await encodeKernel(device, enc, "adamw", source, { WG }, bind, grid(s.count, WG));
}

/** The optimiser settings of a trainer's options. */
export interface AdamWOptions {
  beta1: number;
  beta2: number;
  adamEps: number;
  weightDecay: number;
  /** Global gradient-norm clip over everything the trainer updates (<= 0: none). */
  maxGradNorm: number;
}

/** torch.optim.AdamW's defaults, no weight decay, the gradient norm clipped at 1. */
export const DEFAULT_ADAMW: AdamWOptions = { beta1: 0.9, beta2: 0.999, adamEps: 1e-8, weightDecay: 0, maxGradNorm: 1 };

/**
 * Records one optimiser step over `states`: their gradient norm into `stats` (encodeGradNorm: the clip at maxGradNorm,
 * the skip on NaN/Inf), then AdamW at learning rate `lr` as step `step` (from 1) on each.
 */
export async function encodeOptimiserStep(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  states: readonly AdamWState[],
  o: AdamWOptions,
  lr: number,
  step: number,
  stats: GPUBuffer,
): Promise<void> {
  await encodeGradNorm(device, enc, states.map((s) => ({ buffer: s.grad, count: s.count })), stats, o.maxGradNorm);
  const hp = { lr, beta1: o.beta1, beta2: o.beta2, eps: o.adamEps, weightDecay: o.weightDecay, step };
  for (const s of states) await encodeAdamW(device, enc, s, hp, stats);
}
