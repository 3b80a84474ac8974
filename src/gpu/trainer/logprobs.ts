// Teacher-forced per-token log-probabilities on the GPU: the trainer's forward as a plain function.
import type { LoraAdapter } from "../../model/lora.ts";
import { readBuffers, releaseTransients } from "../device.ts";
import { destroyBatch, destroyForward, forward, uploadBatch } from "../model/forward.ts";
import { destroyAdapter, type GpuLora, type GpuModel, uploadAdapter } from "../model/state.ts";

/** Per-row outputs of one forward over a padded batch, row b*T + t predicting ids[b][t+1]. */
export interface BatchLogprobs {
  B: number;
  T: number;
  /** (B, T) log p(ids[b][t+1] | ids[b][..t]); rows past a sequence's end hold padding values. */
  logp: Float32Array;
  /** (B, T) entropy (nats) of the next-token distribution. */
  entropy: Float32Array;
}

/** Runs the forward over `seqs` and reads back logp and entropy per row. */
export async function batchLogprobs(model: GpuModel, seqs: number[][], lora?: GpuLora): Promise<BatchLogprobs> {
  const { device } = model;
  const batch = uploadBatch(device, seqs, model.cfg.vocabSize);
  const f = await forward(model, lora, batch).catch((e: unknown) => {
    destroyBatch(batch);
    throw e;
  });
  const bytes = batch.B * batch.T * 4;
  const [logp, entropy] = await readBuffers(device, [{ buffer: f.lm.logp, bytes }, { buffer: f.lm.entropy, bytes }]);
  destroyForward(f);
  releaseTransients(device);
  return { B: batch.B, T: batch.T, logp: new Float32Array(logp), entropy: new Float32Array(entropy) };
}

/** Row b of `r` as the log-probabilities of seqs[b]'s tokens after the first (length seqs[b].length - 1). */
export function sequenceLogprobs(r: BatchLogprobs, seqs: number[][]): Float32Array[] {
  return seqs.map((s, b) => r.logp.slice(b * r.T, b * r.T + s.length - 1));
}

/**
 * out[i][t] = log p(ids[i][t+1] | ids[i][..t]) (length ids[i].length - 1), computed on the GPU
 * with the model's weights and, when given, a LoRA adapter (PEFT tensors, uploaded for the call).
 */
export async function logprobsWebgpu(model: GpuModel, ids: number[][], adapter?: LoraAdapter): Promise<number[][]> {
  const lora = adapter && uploadAdapter(model.device, model.cfg, adapter);
  try {
    return sequenceLogprobs(await batchLogprobs(model, ids, lora), ids).map((row) => Array.from(row));
  } finally {
    if (lora) destroyAdapter(lora);
  }
}
