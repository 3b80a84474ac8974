// Full fine-tuning state: a gradient and AdamW moments for every f32 weight of the model (tied
// embeddings share one slot). For small models: every
// weight, its gradient and two moments live on the GPU at once.
import { expectedShapes } from "../../model/config.ts";
import type { Tensor } from "../../model/tensor.ts";
import { f32Weights, type GpuModel, optimiserBuffers, readTensors } from "./state.ts";

/** One trained buffer: its parameter, gradient and moments, `count` floats each. */
export interface FullSlot {
  name: string;
  param: GPUBuffer;
  grad: GPUBuffer;
  m: GPUBuffer;
  v: GPUBuffer;
  count: number;
}

/** Gradients and moments of every weight, looked up by the parameter's buffer. */
export interface GpuFullParams {
  slots: Map<GPUBuffer, FullSlot>;
}

/** Allocates full fine-tuning state for `m` (which must hold no q4 weights: a q4 base is frozen). */
export function fullParams(m: GpuModel): GpuFullParams {
  if (m.q4.size > 0) throw new Error("fullParams: the model holds q4 weights; full fine-tuning needs an f32 upload");
  if (m.half.size > 0) throw new Error("fullParams: the model holds f16 weights; full fine-tuning needs an f32 upload");
  const slots = new Map<GPUBuffer, FullSlot>();
  for (const [name, param] of f32Weights(m)) {
    const count = param.size / 4;
    slots.set(param, { name, param, count, ...optimiserBuffers(m.device, name, count) });
  }
  return { slots };
}

/** The gradient buffer of parameter `param`. */
export function gradOf(f: GpuFullParams, param: GPUBuffer): GPUBuffer {
  const s = f.slots.get(param);
  if (!s) throw new Error(`full fine-tuning: no gradient slot for ${param.label}`);
  return s.grad;
}

/** Zeroes every gradient. */
export function encodeZeroFullGrads(enc: GPUCommandEncoder, f: GpuFullParams): void {
  for (const s of f.slots.values()) enc.clearBuffer(s.grad);
}

/** Reads one part of every slot (the gradients by default) back under the weights' HF names. */
export function readFullState(
  m: GpuModel,
  f: GpuFullParams,
  part: "param" | "grad" | "m" | "v" = "grad",
): Promise<Map<string, Tensor>> {
  const shapes = expectedShapes(m.cfg);
  const parts = f32Weights(m).flatMap(([name, buf]) => {
    const s = f.slots.get(buf), shape = shapes.get(name);
    return s && shape ? [{ name, shape, buffer: s[part] }] : [];
  });
  return readTensors(m.device, parts);
}

/** Frees the gradients and moments (not the parameters, which belong to the model). */
export function destroyFullParams(f: GpuFullParams): void {
  for (const s of f.slots.values()) for (const b of [s.grad, s.m, s.v]) b.destroy();
}
