// The process reward model on the WGSL trainer: the policy's architecture with its own LoRA adapter
// and a scalar head over the last hidden state (after model.norm). The score of a step is
// sigmoid(h_t . w + b) read at the step's last token t; training minimises the weighted binary
// cross-entropy of those scores against the step labels, back through the head into the adapter.
// Math: tests/gpu-ref/prm_head.ref.ts; the same forward/backward as GRPO with the lm head left
// out (forward's lmHead: false, backward's dhF).
import { learningRate, type LrSchedule } from "../../core/grpo.ts";
import { readF32, releaseTransients, storageBuffer } from "../device.ts";
import { type AdamWOptions, DEFAULT_ADAMW, encodeOptimiserStep } from "../kernels/adamw.ts";
import { gradStatsBuffer, readGradStats } from "../kernels/gradnorm.ts";
import {
  encodePrmBce,
  encodePrmHeadBackward,
  encodePrmHeadForward,
  encodePrmHeadWeightGrad,
} from "../kernels/prm_head.ts";
import { backward, reserveStepScratch } from "../model/backward.ts";
import { destroyForward, forward, uploadBatch } from "../model/forward.ts";
import { encodeZeroGrads, type GpuLora, type GpuModel, loraAdamStates, optimiserBuffers } from "../model/state.ts";

/** The head on the GPU: wb (C + 1) = [w, b], its gradient and AdamW moments. */
export interface GpuPrmHead {
  C: number;
  wb: GPUBuffer;
  dwb: GPUBuffer;
  m: GPUBuffer;
  v: GPUBuffer;
}

/** Uploads a head's parameters (C + 1 values: w, then the bias) with zeroed gradient and moments. */
export function uploadPrmHead(device: GPUDevice, wb: Float32Array): GpuPrmHead {
  const C = wb.length - 1;
  if (C < 1) throw new Error("uploadPrmHead: the head needs C + 1 >= 2 values (w, then the bias)");
  const { grad: dwb, m, v } = optimiserBuffers(device, "prm-head", C + 1);
  return { C, wb: storageBuffer(device, "prm-head", wb), dwb, m, v };
}

/** Reads the head's parameters, gradient or moments back. */
export function readPrmHead(
  device: GPUDevice,
  h: GpuPrmHead,
  which: "wb" | "dwb" | "m" | "v" = "wb",
): Promise<Float32Array> {
  return readF32(device, h[which], h.C + 1);
}

/** Frees the head's buffers. */
export function destroyPrmHead(h: GpuPrmHead): void {
  for (const b of [h.wb, h.dwb, h.m, h.v]) b.destroy();
}

/**
 * One scored sequence: ids (prompt + steps), the token positions whose hidden state is read (each
 * step's last token, 0-based in ids), and for training a label per position (1: the step can
 * still reach the gold result, 0: it cannot) with an optional loss weight (default 1).
 */
export interface PrmExample {
  ids: number[];
  rows: number[];
  labels?: number[];
  weights?: number[];
}

/** Hyperparameters of the PRM trainer (AdamW on the adapter and the head together). */
export interface PrmTrainerOptions extends AdamWOptions {
  lr: LrSchedule;
  recompute: boolean;
}

export const DEFAULT_PRM_OPTIONS: PrmTrainerOptions = {
  lr: { base: 1e-4, warmupSteps: 0, totalSteps: 1000, decay: "constant" },
  ...DEFAULT_ADAMW,
  recompute: false,
};

/** The PRM trainer's state. */
export interface PrmTrainer {
  model: GpuModel;
  lora: GpuLora;
  head: GpuPrmHead;
  opts: PrmTrainerOptions;
  /** Applied optimiser steps; skipped ones do not count. */
  step: number;
}

/** A trainer of `lora` and `head` on an uploaded base model. */
export function prmTrainer(
  model: GpuModel,
  lora: GpuLora,
  head: GpuPrmHead,
  opts: Partial<PrmTrainerOptions> = {},
): PrmTrainer {
  if (head.C !== model.cfg.hiddenSize) {
    throw new Error(`prmTrainer: head of ${head.C} channels for hidden size ${model.cfg.hiddenSize}`);
  }
  return { model, lora, head, opts: { ...DEFAULT_PRM_OPTIONS, ...opts }, step: 0 };
}

function checkExample(e: PrmExample, i: number, training: boolean): void {
  if (e.ids.length < 1) throw new Error(`PRM example ${i}: no tokens`);
  e.rows.forEach((t) => {
    if (!Number.isInteger(t) || t < 0 || t >= e.ids.length) {
      throw new Error(`PRM example ${i}: row ${t} outside 0..${e.ids.length - 1}`);
    }
  });
  if (training) {
    if (!e.labels || e.labels.length !== e.rows.length) {
      throw new Error(`PRM example ${i}: needs one label per row (${e.rows.length})`);
    }
    if (e.labels.some((y) => !(y >= 0 && y <= 1))) throw new Error(`PRM example ${i}: labels must lie in [0, 1]`);
    if (e.weights && (e.weights.length !== e.rows.length || e.weights.some((w) => !(w >= 0 && Number.isFinite(w))))) {
      throw new Error(`PRM example ${i}: weights must be one finite value >= 0 per row`);
    }
  }
}

/** The loss, its labelled rows and the logits at every example's rows (example order). */
export interface PrmGradResult {
  /** (1 / sum of weights) * sum_j weight_j BCE_j over every labelled row of the batch. */
  loss: number;
  /** Sum of the row weights (the labelled rows when weights are 1). */
  weight: number;
  /** z = h w + b at each example's rows; the scores are sigmoid(z). */
  logits: number[][];
}

/**
 * Forward and backward of the batch's mean BCE: the adapter's and the head's gradient buffers are
 * zeroed first and then hold dL/d(parameter). Micro-batches of `microBatch` sequences accumulate
 * with the whole batch's normalisation, so slicing changes nothing but rounding.
 */
export async function prmGradients(
  model: GpuModel,
  lora: GpuLora,
  head: GpuPrmHead,
  examples: PrmExample[],
  o: { microBatch?: number; recompute?: boolean } = {},
): Promise<PrmGradResult> {
  const { device } = model;
  if (examples.length === 0) throw new Error("prmGradients: no examples");
  examples.forEach((e, i) => checkExample(e, i, true));
  const total = examples.reduce((a, e) => a + e.rows.reduce((s, _, j) => s + (e.weights?.[j] ?? 1), 0), 0);
  const zero = device.createCommandEncoder({ label: "prm-zero-grads" });
  encodeZeroGrads(zero, lora);
  zero.clearBuffer(head.dwb);
  device.queue.submit([zero.finish()]);
  const micro = Math.max(1, Math.min(examples.length, o.microBatch ?? examples.length));
  const H = model.cfg.hiddenSize;
  let loss = 0;
  const logits: number[][] = [];
  for (let s0 = 0; s0 < examples.length; s0 += micro) {
    const chunk = examples.slice(s0, s0 + micro);
    const batch = uploadBatch(device, chunk.map((e) => e.ids), model.cfg.vocabSize);
    const N = batch.B * batch.T;
    const labels = new Float32Array(N), weights = new Float32Array(N);
    chunk.forEach((e, b) =>
      e.rows.forEach((t, j) => {
        const row = b * batch.T + t;
        // A position named twice (two labels on one token) would need summed weights: refused instead.
        if (weights[row] !== 0) throw new Error(`PRM example ${s0 + b}: row ${t} appears twice`);
        labels[row] = e.labels![j];
        weights[row] = total > 0 ? (e.weights?.[j] ?? 1) / total : 0;
      })
    );
    reserveStepScratch(model, batch.B, batch.T);
    const f = await forward(model, lora, batch, { recompute: o.recompute, lmHead: false });
    const own: GPUBuffer[] = [];
    const buf = (label: string, data: Float32Array | number) => {
      const b = storageBuffer(device, label, data);
      own.push(b);
      return b;
    };
    const z = buf("prm-z", N * 4),
      dz = buf("prm-dz", N * 4),
      rowLoss = buf("prm-loss", N * 4),
      dhF = buf("prm-dhF", N * H * 4);
    const enc = device.createCommandEncoder({ label: "prm-head" });
    await encodePrmHeadForward(device, enc, { h: f.hF, wb: head.wb, z }, { N, C: H });
    await encodePrmBce(device, enc, {
      z,
      labels: buf("prm-labels", labels),
      weights: buf("prm-weights", weights),
      dz,
      loss: rowLoss,
    }, N);
    await encodePrmHeadBackward(device, enc, { dz, wb: head.wb, dh: dhF }, { N, C: H });
    await encodePrmHeadWeightGrad(device, enc, { dz, h: f.hF, dwb: head.dwb }, { N, C: H, accumulate: true });
    device.queue.submit([enc.finish()]);
    await backward(model, lora, f, { dhF });
    const zs = await readF32(device, z, N);
    const ls = await readF32(device, rowLoss, N);
    for (let i = 0; i < N; i++) if (weights[i] !== 0) loss += ls[i];
    chunk.forEach((e, b) => logits.push(e.rows.map((t) => zs[b * batch.T + t])));
    destroyForward(f);
    for (const b of own) b.destroy();
  }
  return { loss, weight: total, logits };
}

/** What one PRM optimiser step did. */
export interface PrmStepReport extends PrmGradResult {
  skipped: boolean;
  gradNorm: number;
  clip: number;
  lr: number;
  step: number;
}

/** One optimiser step on a batch of labelled chains (skipped on the GPU when the gradient is not finite). */
export async function prmStep(
  tr: PrmTrainer,
  examples: PrmExample[],
  o: { microBatch?: number } = {},
): Promise<PrmStepReport> {
  const { model, lora, head, opts } = tr;
  const { device } = model;
  const g = await prmGradients(model, lora, head, examples, { microBatch: o.microBatch, recompute: opts.recompute });
  const lr = learningRate(tr.step, opts.lr);
  const states = [
    ...loraAdamStates(lora),
    { param: head.wb, grad: head.dwb, m: head.m, v: head.v, count: head.C + 1 },
  ];
  const gstats = gradStatsBuffer(device, "prm-grad-stats");
  const enc = device.createCommandEncoder({ label: "prm-adamw" });
  await encodeOptimiserStep(device, enc, states, opts, lr, tr.step + 1, gstats);
  device.queue.submit([enc.finish()]);
  const gs = await readGradStats(device, gstats);
  gstats.destroy();
  releaseTransients(device);
  if (!gs.nonFinite) tr.step++;
  return { ...g, skipped: gs.nonFinite, gradNorm: gs.norm, clip: gs.clip, lr, step: tr.step };
}

/** Step scores sigmoid(z) at each sequence's rows (no gradients), `microBatch` sequences per forward. */
export async function prmScores(
  model: GpuModel,
  lora: GpuLora | undefined,
  head: GpuPrmHead,
  examples: readonly PrmExample[],
  o: { microBatch?: number } = {},
): Promise<number[][]> {
  const { device } = model;
  examples.forEach((e, i) => checkExample(e, i, false));
  const out: number[][] = [];
  const micro = Math.max(1, o.microBatch ?? 8);
  const H = model.cfg.hiddenSize;
  for (let s0 = 0; s0 < examples.length; s0 += micro) {
    const chunk = examples.slice(s0, s0 + micro);
    const batch = uploadBatch(device, chunk.map((e) => e.ids), model.cfg.vocabSize);
    const N = batch.B * batch.T;
    // Scoring needs no backward: only each layer's input is kept (one layer's scratch at a time).
    const f = await forward(model, lora, batch, { lmHead: false, recompute: true });
    const z = storageBuffer(device, "prm-z", N * 4);
    const enc = device.createCommandEncoder({ label: "prm-score" });
    await encodePrmHeadForward(device, enc, { h: f.hF, wb: head.wb, z }, { N, C: H });
    device.queue.submit([enc.finish()]);
    const zs = await readF32(device, z, N);
    z.destroy();
    destroyForward(f);
    releaseTransients(device);
    chunk.forEach((e, b) => out.push(e.rows.map((t) => sigmoidF(zs[b * batch.T + t]))));
  }
  return out;
}

function sigmoidF(x: number): number {
  const e = Math.exp(-Math.abs(x));
  return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}
