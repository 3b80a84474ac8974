// Small helpers shared by the kernels' wrappers: one kernel's dispatch with its parameter uniform, grid sizing past the
// 65535-workgroup limit, packing of uniform structs whose fields are u32 or f32 words, the check of buffer sizes against
// a shape, a placeholder binding.
import { computePipeline, dispatch, storageBuffer, uniformBuffer } from "../device.ts";
import type { Bindable } from "../recorder.ts";

/** Records `code`'s pipeline (`name`, override `constants`) over `bindings`, a Uint32Array among them as a uniform. */
export async function encodeKernel(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  name: string,
  code: string,
  constants: Record<string, number>,
  bindings: readonly (Bindable | Uint32Array)[],
  groups: readonly [number, number?, number?],
): Promise<void> {
  const pipeline = await computePipeline(device, name, code, constants);
  const resources = bindings.map((b) => b instanceof Uint32Array ? uniformBuffer(device, `${name}-params`, b) : b);
  dispatch(device, enc, pipeline, resources, groups);
}

/** The most workgroups one dispatch dimension may have (WebGPU's default limit). */
export const MAX_GROUPS_PER_DIM = 65535;

/**
 * A 2-D workgroup grid covering `count` items at `perGroup` items per workgroup, folded into y
 * once x reaches the limit; kernels recover the flat group index as `wg.y * nwg.x + wg.x`.
 */
export function grid(count: number, perGroup: number): [number, number] {
  const groups = Math.max(1, Math.ceil(count / perGroup));
  const x = Math.min(groups, MAX_GROUPS_PER_DIM);
  return [x, Math.ceil(groups / x)];
}

/** Packs `values` as 32-bit words, `kinds[i]` being "u" (u32) or "f" (f32) for each field in order. */
export function packParams(kinds: string, values: readonly number[]): Uint32Array {
  if (kinds.length !== values.length) throw new Error(`packParams: ${kinds.length} kinds for ${values.length} values`);
  const words = new Uint32Array(Math.max(4, Math.ceil(values.length / 4) * 4));
  const floats = new Float32Array(words.buffer);
  for (let i = 0; i < values.length; i++) {
    const k = kinds[i];
    if (k === "u") {
      if (!Number.isInteger(values[i]) || values[i] < 0 || values[i] > 0xffffffff) {
        throw new Error(`packParams: field ${i} = ${values[i]} is not a u32`);
      }
      words[i] = values[i];
    } else if (k === "f") {
      floats[i] = values[i];
    } else {
      throw new Error(`packParams: unknown kind ${JSON.stringify(k)}`);
    }
  }
  return words;
}

/** The smallest power of two >= n, clamped to [lo, hi]: a workgroup size fitted to a row length. */
export function fitPow2(n: number, lo: number, hi: number): number {
  let p = lo;
  while (p < n && p < hi) p *= 2;
  return p;
}

/** Throws unless every named buffer holds at least the bytes its shape needs. */
export function checkSizes(kernel: string, need: Array<[string, GPUBuffer | undefined, number]>): void {
  for (const [name, buf, bytes] of need) {
    if (buf && buf.size < bytes) {
      throw new Error(`${kernel}: ${name} (${buf.label}) has ${buf.size} bytes, needs ${bytes}`);
    }
  }
}

const placeholders = new WeakMap<GPUDevice, GPUBuffer>();

/** A 4-byte storage buffer per device, bound where a kernel's optional input is absent (its override leaves it unread). */
export function unusedBinding(device: GPUDevice): GPUBuffer {
  let b = placeholders.get(device);
  if (!b) placeholders.set(device, b = storageBuffer(device, "unused-binding", 4));
  return b;
}
