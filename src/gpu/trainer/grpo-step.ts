// One GRPO optimiser step on the GPU: teacher-forced forward over prompt + completion, the loss
// kernel (clipped surrogate, KL to a reference, aggregation), the backward to the LoRA adapter,
// the global gradient norm with clipping, and AdamW. A step whose gradients hold NaN or Inf is
// skipped on the GPU (parameters and moments untouched) and reported as skipped.
import { type Aggregation, aggregationWeights, learningRate, type LrSchedule } from "../../core/grpo.ts";
import { arenaBuffer, arenaTaker, releaseToArena } from "../arena.ts";
import { commandEncoder, readBuffers, releaseTransients } from "../device.ts";
import { type AdamWOptions, type AdamWState, DEFAULT_ADAMW, encodeOptimiserStep } from "../kernels/adamw.ts";
import { GRAD_STATS_BYTES, parseGradStats } from "../kernels/gradnorm.ts";
import { combineGrpoStats, encodeGrpoLoss, type GrpoGpuResult, grpoResult } from "../kernels/grpo_loss.ts";
import { backward, reserveStepScratch } from "../model/backward.ts";
import { destroyForward, forward, uploadBatch } from "../model/forward.ts";
import { encodeZeroGrads, type GpuLora, type GpuModel, loraAdamStates } from "../model/state.ts";
import { batchLogprobs, sequenceLogprobs } from "./logprobs.ts";

/** Hyperparameters of the GRPO trainer. */
export interface GrpoTrainerOptions extends AdamWOptions {
  epsLow: number;
  epsHigh: number;
  /** KL coefficient to the reference (0: no KL term; samples then need no logpRef). */
  beta: number;
  aggregation: Aggregation;
  /** Divisor for "seq-mean-token-sum-norm" (default: longest completion times the number of samples). */
  normConstant?: number;
  lr: LrSchedule;
  /** Recompute each layer's activations in the backward instead of keeping them (less memory). */
  recompute: boolean;
}

/** Defaults in the spirit of TRL/verl GRPO with LoRA. */
export const DEFAULT_GRPO_OPTIONS: GrpoTrainerOptions = {
  epsLow: 0.2,
  epsHigh: 0.28,
  beta: 0,
  aggregation: "token-mean",
  lr: { base: 1e-4, warmupSteps: 0, totalSteps: 1000, decay: "constant" },
  ...DEFAULT_ADAMW,
  recompute: false,
};

/** One sampled completion: ids = prompt + completion, with its advantage. */
export interface GrpoSample {
  ids: number[];
  promptLen: number;
  advantage: number;
  /** Per position t (length ids.length - 1), log p_old(ids[t+1] | ..t); default: this step's own (ratio 1). */
  logpOld?: ArrayLike<number>;
  /** Same layout, under the frozen reference policy; required when beta != 0. */
  logpRef?: ArrayLike<number>;
  /**
   * One advantage per completion token (length ids.length - promptLen), replacing `advantage` on
   * every token: step-level credit (src/core/prm-advantages.ts).
   */
  tokenAdvantages?: ArrayLike<number>;
}

/** The trainer's state: model, the adapter it trains, options and the step counter. */
export interface GrpoTrainer {
  model: GpuModel;
  lora: GpuLora;
  opts: GrpoTrainerOptions;
  /** Applied optimiser steps (AdamW's t - 1); skipped steps do not count. */
  step: number;
}

/** A trainer on an uploaded model training `lora`. */
export function grpoTrainer(model: GpuModel, lora: GpuLora, opts: Partial<GrpoTrainerOptions> = {}): GrpoTrainer {
  return { model, lora, opts: { ...DEFAULT_GRPO_OPTIONS, ...opts }, step: 0 };
}

/** What one step did. */
export interface GrpoStepReport extends GrpoGpuResult {
  /** True when the gradients were not finite and nothing was applied. */
  skipped: boolean;
  /** Global gradient norm before clipping. */
  gradNorm: number;
  /** The factor the gradient was scaled by (1 when under maxGradNorm). */
  clip: number;
  lr: number;
  /** The optimiser step number after this step. */
  step: number;
}

/** Per-position rows (each up to T long) laid out as (B, T), zero-padded; non-finite values are a caller error. */
function padRows(rows: ArrayLike<number>[], T: number, name: string): Float32Array {
  const out = new Float32Array(rows.length * T);
  rows.forEach((r, b) => {
    for (let t = 0; t < Math.min(r.length, T); t++) {
      if (!Number.isFinite(r[t])) throw new Error(`grpoStep: ${name} of sample ${b} at position ${t} is ${r[t]}`);
      out[b * T + t] = r[t];
    }
  });
  return out;
}

/** Options of one step. */
export interface GrpoStepOptions {
  /** Sequences per forward/backward pass; gradients accumulate across passes (default: all at once). */
  microBatch?: number;
}

/**
 * Runs one GRPO step over `samples` and applies it unless the gradients are not finite. With
 * `microBatch`, the batch is processed in slices whose gradients accumulate; the aggregation
 * weights are those of the whole batch, so the result does not depend on the slicing.
 * Nothing is read back until the update is submitted: the loss figures of every micro-batch and
 * the gradient norm come back in one read at the end, so the GPU never waits for the host in between.
 */
export async function grpoStep(
  tr: GrpoTrainer,
  samples: GrpoSample[],
  o: GrpoStepOptions = {},
): Promise<GrpoStepReport> {
  const { model, lora, opts } = tr;
  const { device } = model;
  if (samples.length === 0) throw new Error("grpoStep: no samples");
  samples.forEach((s, b) => {
    if (!Number.isInteger(s.promptLen) || s.promptLen < 1 || s.promptLen > s.ids.length) {
      throw new Error(`grpoStep: sample ${b} has prompt length ${s.promptLen} outside 1..${s.ids.length}`);
    }
    const ta = s.tokenAdvantages;
    if (ta && (ta.length !== s.ids.length - s.promptLen || Array.from(ta).some((a) => !Number.isFinite(a)))) {
      throw new Error(
        `grpoStep: sample ${b} needs ${s.ids.length - s.promptLen} finite token advantages, got ${ta.length}`,
      );
    }
  });
  const withOld = samples.every((s) => s.logpOld);
  const withRef = samples.every((s) => s.logpRef);
  if (opts.beta !== 0 && !withRef) throw new Error("grpoStep: beta != 0 needs logpRef on every sample");
  // Aggregation weights over the whole batch, laid out (S, C) by completion position (C = longest
  // completion: the generation budget that Dr. GRPO's constant defaults to, times S).
  const S = samples.length;
  const C = Math.max(1, ...samples.map((s) => s.ids.length - s.promptLen));
  const maskC = new Float32Array(S * C);
  samples.forEach((s, b) => maskC.fill(1, b * C, b * C + s.ids.length - s.promptLen));
  const wC = aggregationWeights(S, C, maskC, opts.aggregation, opts.normConstant);
  const zero = commandEncoder(device, "zero-grads");
  encodeZeroGrads(zero, lora);
  device.queue.submit([zero.finish()]);
  const micro = Math.max(1, Math.min(S, o.microBatch ?? S));
  // Read at the end: each micro-batch's loss stats.
  const readLater: GPUBuffer[] = [];
  for (let s0 = 0; s0 < S; s0 += micro) {
    const chunk = samples.slice(s0, s0 + micro);
    const batch = uploadBatch(device, chunk.map((s) => s.ids), model.cfg.vocabSize);
    const { B, T } = batch;
    const N = B * T;
    const mask = new Float32Array(N), adv = new Float32Array(N), weight = new Float32Array(N);
    chunk.forEach((s, b) => {
      for (let j = 0; j < s.ids.length - s.promptLen; j++) {
        const row = b * T + s.promptLen - 1 + j;
        mask[row] = 1;
        adv[row] = s.tokenAdvantages ? s.tokenAdvantages[j] : s.advantage;
        weight[row] = wC[(s0 + b) * C + j];
      }
    });
    // The loss reads the completion rows only: the vocabulary head runs on those.
    const headRows = Uint32Array.from(Array.from(mask.keys()).filter((n) => mask[n] !== 0));
    reserveStepScratch(model, B, T);
    const f = await forward(model, lora, batch, { recompute: opts.recompute, headRows });
    const own: GPUBuffer[] = [];
    const up = arenaTaker(device, own);
    const logpOld = withOld ? up("logp-old", padRows(chunk.map((s) => s.logpOld ?? []), T, "logpOld")) : f.lm.logp;
    const logpRef = withRef ? up("logp-ref", padRows(chunk.map((s) => s.logpRef ?? []), T, "logpRef")) : undefined;
    const g = up("dL-dlogp", new Float32Array(N));
    // From the arena (given back once read, at the end): the same buffers step after step, so the
    // bind groups naming them are reused.
    const stats = arenaBuffer(device, "grpo-stats", 12 * 4);
    readLater.push(stats);
    const enc = commandEncoder(device, "grpo-loss");
    await encodeGrpoLoss(device, enc, {
      logpNew: f.lm.logp,
      logpOld,
      logpRef,
      mask: up("mask", mask),
      weight: up("agg-weight", weight),
      adv: up("adv", adv),
      entropy: f.lm.entropy,
      grad: g,
      stats,
    }, { N, epsLow: opts.epsLow, epsHigh: opts.epsHigh, beta: opts.beta });
    device.queue.submit([enc.finish()]);
    await backward(model, lora, f, { g });
    destroyForward(f);
    releaseToArena(device, own);
  }
  const lr = learningRate(tr.step, opts.lr);
  const states: AdamWState[] = loraAdamStates(lora);
  const gstats = arenaBuffer(device, "grpo-grad-stats", new Float32Array([0, 0, 1, 0]));
  const opt = commandEncoder(device, "adamw");
  await encodeOptimiserStep(device, opt, states, opts, lr, tr.step + 1, gstats);
  device.queue.submit([opt.finish()]);
  const read = await readBuffers(device, [
    { buffer: gstats, bytes: GRAD_STATS_BYTES },
    ...readLater.map((buffer) => ({ buffer, bytes: 12 * 4 })),
  ]);
  const gs = parseGradStats(read[0]);
  const parts = read.slice(1).map((b) => new Float32Array(b));
  releaseToArena(device, [gstats, ...readLater]);
  const result = grpoResult(combineGrpoStats(parts), opts.beta);
  releaseTransients(device);
  // The GPU already skipped the update when the norm pass flagged NaN/Inf; mirror its decision.
  const skipped = gs.nonFinite;
  if (!skipped) tr.step++;
  return { ...result, skipped, gradNorm: gs.norm, clip: gs.clip, lr, step: tr.step };
}

/** Per-position logp of `seqs` under the current adapter (e.g. old log-probs before an epoch). */
export async function sampleLogprobs(tr: GrpoTrainer, seqs: number[][]): Promise<Float32Array[]> {
  return sequenceLogprobs(await batchLogprobs(tr.model, seqs, tr.lora), seqs);
}
