// Gradients of a sequence-level policy-gradient loss with respect to a LoRA adapter, on the GPU:
//   L = -(sum_i a_i sum_{t >= p_i} log p(ids_i[t] | ids_i[<t])) / sum_i (len_i - p_i)
// (the contract of `rlvr lora-grad`; GRPO's token-mean loss at ratio 1).
import type { Tensor } from "../../model/tensor.ts";
import { readF32, storageBuffer } from "../device.ts";
import { backward, reserveStepScratch } from "../model/backward.ts";
import { destroyForward, forward, type ForwardOptions, uploadBatch } from "../model/forward.ts";
import { encodeZeroFullGrads, type GpuFullParams, readFullState } from "../model/full.ts";
import { encodeZeroGrads, type GpuLora, type GpuModel, readAdapterGrads } from "../model/state.ts";

/** One sampled sequence: prompt + completion ids, the prompt's length, and its advantage. */
export interface PgSequence {
  ids: number[];
  promptLen: number;
  advantage: number;
}

/**
 * dL/dlogp per padded row (B, T) for the loss above: row b*T + t predicts ids[b][t+1], a
 * completion token when t + 1 >= promptLen; also the number of completion tokens.
 */
export function pgRowWeights(seqs: PgSequence[], T: number): { g: Float32Array; tokens: number } {
  let tokens = 0;
  for (const [i, s] of seqs.entries()) {
    if (!Number.isInteger(s.promptLen) || s.promptLen < 1 || s.promptLen > s.ids.length) {
      throw new Error(
        `sequence ${i}: prompt_len ${s.promptLen} must be in 1..${s.ids.length} (the first token has no prefix to predict it from)`,
      );
    }
    if (!Number.isFinite(s.advantage)) throw new Error(`sequence ${i}: advantage ${s.advantage} is not finite`);
    tokens += s.ids.length - s.promptLen;
  }
  const g = new Float32Array(seqs.length * T);
  if (tokens === 0) return { g, tokens };
  seqs.forEach((s, b) => {
    for (let t = s.promptLen - 1; t + 1 < s.ids.length; t++) g[b * T + t] = -s.advantage / tokens;
  });
  return { g, tokens };
}

/** The loss, its completion-token count and dL/d(every LoRA tensor) under PEFT names. */
export interface LoraGradResult {
  loss: number;
  tokens: number;
  grads: Map<string, Tensor>;
}

/** What pgGradients differentiates: an adapter, every base weight, or both. */
export interface PgGradTargets extends ForwardOptions {
  lora?: GpuLora;
  full?: GpuFullParams;
}

/** Forward + backward of the loss above; the targets' gradient buffers are overwritten. Returns the loss and token count. */
export async function pgGradients(
  model: GpuModel,
  seqs: PgSequence[],
  o: PgGradTargets,
): Promise<{ loss: number; tokens: number }> {
  const { device } = model;
  const batch = uploadBatch(device, seqs.map((s) => s.ids), model.cfg.vocabSize);
  const { g, tokens } = pgRowWeights(seqs, batch.T);
  const gBuf = storageBuffer(device, "dL-dlogp", g);
  const zero = device.createCommandEncoder({ label: "zero-grads" });
  if (o.lora) encodeZeroGrads(zero, o.lora);
  if (o.full) encodeZeroFullGrads(zero, o.full);
  device.queue.submit([zero.finish()]);
  reserveStepScratch(model, batch.B, batch.T);
  const f = await forward(model, o.lora, batch, o);
  await backward(model, o.lora, f, { g: gBuf, full: o.full });
  const logp = await readF32(device, f.lm.logp, batch.B * batch.T);
  let loss = 0;
  for (let i = 0; i < g.length; i++) if (g[i] !== 0) loss += g[i] * logp[i];
  destroyForward(f);
  gBuf.destroy();
  return { loss, tokens };
}

/** Forward + backward of the loss above; the adapter's gradient buffers are overwritten. */
export async function loraGradients(
  model: GpuModel,
  lora: GpuLora,
  seqs: PgSequence[],
  o: ForwardOptions = {},
): Promise<LoraGradResult> {
  const { loss, tokens } = await pgGradients(model, seqs, { ...o, lora });
  return { loss, tokens, grads: await readAdapterGrads(model.device, lora) };
}

/** The same loss differentiated with respect to every base weight (full fine-tuning), under HF names. */
export async function fullGradients(
  model: GpuModel,
  full: GpuFullParams,
  seqs: PgSequence[],
  o: ForwardOptions & { lora?: GpuLora } = {},
): Promise<LoraGradResult> {
  const { loss, tokens } = await pgGradients(model, seqs, { ...o, full });
  return { loss, tokens, grads: await readFullState(model, full) };
}
