// One pretraining step on the GPU with full fine-tuning of every weight: the next-token loss
// L = -(1/tokens) sum over rows b, positions t < len_b - 1 of log p(row_b[t+1] | row_b[..t]),
// forward + backward per micro-batch with gradients accumulating, then the global gradient norm
// with clipping and AdamW (decoupled weight decay on matrices only); a step with NaN/Inf
// gradients is skipped on the GPU. Built on the trainer's exported forward/backward, full
// fine-tuning slots and the adamw / gradnorm kernels.
import { learningRate, type LrSchedule } from "../../core/grpo.ts";
import { arenaBuffer, releaseToArena } from "../../gpu/arena.ts";
import {
  commandEncoder,
  readBuffers,
  readF32,
  releaseTransients,
  storageBuffer,
  writeBuffer,
} from "../../gpu/device.ts";
import { encodeAdamW } from "../../gpu/kernels/adamw.ts";
import { encodeGradNorm, GRAD_STATS_BYTES, parseGradStats } from "../../gpu/kernels/gradnorm.ts";
import { backward, reserveStepScratch } from "../../gpu/model/backward.ts";
import { destroyForward, forward, uploadBatch } from "../../gpu/model/forward.ts";
import {
  destroyFullParams,
  encodeZeroFullGrads,
  fullParams,
  type GpuFullParams,
  readFullState,
} from "../../gpu/model/full.ts";
import { destroyModel, f32Weights, type GpuModel, uploadModel } from "../../gpu/model/state.ts";
import type { ModelConfig } from "../../model/config.ts";
import type { Weights } from "../../model/tensor.ts";
import { decays } from "./model.ts";

/** Optimiser settings of pretraining. */
export interface PretrainOptions {
  lr: LrSchedule;
  beta1: number;
  beta2: number;
  adamEps: number;
  weightDecay: number;
  /** Global gradient-norm clip (<= 0: none). */
  maxGradNorm: number;
  /** Rows per forward/backward (gradients accumulate over the micro-batches of a step). */
  microBatch: number;
  /** Longest row; sizes the vocabulary chunks so a micro-batch's logits fit one binding. */
  seqLen: number;
  /** Recompute activations in the backward (less memory). */
  recompute: boolean;
}

/** GPT-style defaults for a small model. */
export const DEFAULT_PRETRAIN_OPTIONS: PretrainOptions = {
  lr: { base: 6e-4, warmupSteps: 100, totalSteps: 2000, decay: "cosine", minRatio: 0.1 },
  beta1: 0.9,
  beta2: 0.95,
  adamEps: 1e-8,
  weightDecay: 0.1,
  maxGradNorm: 1,
  microBatch: 4,
  seqLen: 1024,
  recompute: false,
};

/** The model on the GPU, its gradients and moments, and the applied step count. */
export interface Pretrainer {
  model: GpuModel;
  full: GpuFullParams;
  opts: PretrainOptions;
  step: number;
}

/** What one step did. */
export interface PretrainStepReport {
  /** Mean next-token negative log-likelihood over the batch (before the update). */
  loss: number;
  /** Predicted tokens in the batch. */
  tokens: number;
  gradNorm: number;
  clip: number;
  lr: number;
  skipped: boolean;
  /** Applied steps after this one. */
  step: number;
}

/** Uploads `weights` and allocates a gradient and two moments for every weight. */
export function createPretrainer(
  device: GPUDevice,
  cfg: ModelConfig,
  weights: Weights,
  opts: Partial<PretrainOptions> = {},
): Pretrainer {
  const o = { ...DEFAULT_PRETRAIN_OPTIONS, ...opts };
  // forward keeps one (rows, chunk) logits buffer: cap the chunk so it fits one storage binding.
  const maxVocabRows = Math.max(
    1,
    Math.floor(device.limits.maxStorageBufferBindingSize / (4 * o.microBatch * o.seqLen)),
  );
  const model = uploadModel(device, cfg, weights, { maxVocabRows });
  return { model, full: fullParams(model), opts: o, step: 0 };
}

/** Frees the model and optimiser state. */
export function destroyPretrainer(tr: Pretrainer): void {
  destroyFullParams(tr.full);
  destroyModel(tr.model);
}

/** Runs one optimiser step over `rows` (each 2..seqLen tokens) and applies it unless the gradients are not finite. */
export async function pretrainStep(tr: Pretrainer, rows: readonly ArrayLike<number>[]): Promise<PretrainStepReport> {
  const { model, full, opts } = tr;
  const { device } = model;
  const tokens = rows.reduce((s, r) => s + r.length - 1, 0);
  if (rows.length === 0 || tokens <= 0) throw new Error("pretrainStep: no token to predict");
  for (const r of rows) {
    if (r.length > opts.seqLen) {
      throw new Error(`pretrainStep: a row of ${r.length} tokens is over seqLen ${opts.seqLen}`);
    }
  }
  const zero = commandEncoder(device, "pretrain-zero-grads");
  encodeZeroFullGrads(zero, full);
  device.queue.submit([zero.finish()]);
  // Each micro-batch's log-probabilities are copied aside and read with the gradient norm at the
  // end: no round trip between micro-batches, so the GPU never waits for the host.
  const logps: { buf: GPUBuffer; g: Float32Array }[] = [];
  for (let i = 0; i < rows.length; i += opts.microBatch) {
    const seqs = rows.slice(i, i + opts.microBatch).map((r) => Array.from(r));
    const batch = uploadBatch(device, seqs, model.cfg.vocabSize);
    const g = new Float32Array(batch.B * batch.T);
    seqs.forEach((s, b) => g.fill(-1 / tokens, b * batch.T, b * batch.T + s.length - 1));
    const gBuf = arenaBuffer(device, "dL-dlogp", g);
    reserveStepScratch(model, batch.B, batch.T);
    const f = await forward(model, undefined, batch, { recompute: opts.recompute });
    const copy = storageBuffer(device, "logp-read", g.length * 4);
    const enc = commandEncoder(device, "pretrain-logp-copy");
    enc.copyBufferToBuffer(f.lm.logp, 0, copy, 0, g.length * 4);
    device.queue.submit([enc.finish()]);
    logps.push({ buf: copy, g });
    await backward(model, undefined, f, { g: gBuf, full });
    destroyForward(f);
    releaseToArena(device, [gBuf]);
  }
  const lr = learningRate(tr.step, opts.lr);
  const stats = arenaBuffer(device, "pretrain-grad-stats", new Float32Array([0, 0, 1, 0]));
  const slots = [...full.slots.values()];
  const enc = commandEncoder(device, "pretrain-adamw");
  await encodeGradNorm(device, enc, slots.map((s) => ({ buffer: s.grad, count: s.count })), stats, opts.maxGradNorm);
  for (const s of slots) {
    const weightDecay = decays(s.name) ? opts.weightDecay : 0;
    await encodeAdamW(device, enc, s, {
      lr,
      beta1: opts.beta1,
      beta2: opts.beta2,
      eps: opts.adamEps,
      weightDecay,
      step: tr.step + 1,
    }, stats);
  }
  device.queue.submit([enc.finish()]);
  const read = await readBuffers(device, [
    { buffer: stats, bytes: GRAD_STATS_BYTES },
    ...logps.map((l) => ({ buffer: l.buf, bytes: l.g.length * 4 })),
  ]);
  const gs = parseGradStats(read[0]);
  let nll = 0;
  logps.forEach(({ g }, k) => {
    const logp = new Float32Array(read[1 + k]);
    for (let n = 0; n < g.length; n++) if (g[n] !== 0) nll -= logp[n];
  });
  releaseToArena(device, [stats]);
  for (const l of logps) l.buf.destroy();
  releaseTransients(device);
  if (!gs.nonFinite) tr.step++;
  return { loss: nll / tokens, tokens, gradNorm: gs.norm, clip: gs.clip, lr, skipped: gs.nonFinite, step: tr.step };
}

/** Mean next-token NLL of `rows` under the current weights (no update). */
export async function evalLoss(tr: Pretrainer, rows: readonly ArrayLike<number>[]): Promise<number> {
  const { model, opts } = tr;
  let nll = 0, tokens = 0;
  for (let i = 0; i < rows.length; i += opts.microBatch) {
    const seqs = rows.slice(i, i + opts.microBatch).map((r) => Array.from(r));
    const batch = uploadBatch(model.device, seqs, model.cfg.vocabSize);
    const f = await forward(model, undefined, batch);
    const logp = await readF32(model.device, f.lm.logp, batch.B * batch.T);
    seqs.forEach((s, b) => {
      for (let t = 0; t + 1 < s.length; t++) nll -= logp[b * batch.T + t];
      tokens += s.length - 1;
    });
    destroyForward(f);
    releaseTransients(model.device);
  }
  return nll / tokens;
}

/** Which buffer of every full fine-tuning slot: the parameter, its gradient or one of AdamW's moments. */
export type SlotPart = "param" | "grad" | "m" | "v";

/** Reads one part of every slot back under the weights' HF names. */
export function readState(tr: Pretrainer, part: SlotPart = "param"): Promise<Weights> {
  return readFullState(tr.model, tr.full, part);
}

/** Reads every weight back under its HF name. */
export function readWeights(tr: Pretrainer): Promise<Weights> {
  return readState(tr, "param");
}

/** Restores AdamW's moments (as readState(tr, "m" | "v") returned them) and the applied step count. */
export function restoreOptimizer(tr: Pretrainer, m: Weights, v: Weights, step: number): void {
  for (const [name, buf] of f32Weights(tr.model)) {
    const s = tr.full.slots.get(buf);
    const tm = m.get(name), tv = v.get(name);
    if (!s || !tm || !tv) throw new Error(`restoreOptimizer: no moments for ${name}`);
    if (tm.data.length < s.count || tv.data.length < s.count) {
      throw new Error(`restoreOptimizer: moments of ${name} are too short`);
    }
    writeBuffer(tr.model.device, s.m, tm.data.subarray(0, s.count));
    writeBuffer(tr.model.device, s.v, tv.data.subarray(0, s.count));
  }
  tr.step = step;
}
