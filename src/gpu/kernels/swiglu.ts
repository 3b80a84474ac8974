// Wrapper of swiglu.wgsl (a template: BACKWARD); gate, up and h are (N, F) f32 buffers.
import { encodeKernel, grid, packParams } from "./layer-common.ts";
import source from "./swiglu.wgsl" with { type: "text" };
import { expandKernel } from "./wgsl-parts.ts";

const WG = 256;
const code = (backward: boolean) => expandKernel("swiglu.wgsl", source, { BACKWARD: backward });

/** Records h = silu(gate) * up over `count` = N*F elements. */
export async function encodeSwigluForward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  gate: GPUBuffer,
  up: GPUBuffer,
  h: GPUBuffer,
  count: number,
): Promise<void> {
  const params = packParams("u", [count]);
  await encodeKernel(device, enc, "swiglu_forward", code(false), { WG }, [gate, up, h, params], grid(count, WG));
}

/** Records dgate and dup from dh, gate and up over `count` = N*F elements. */
export async function encodeSwigluBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  dh: GPUBuffer,
  gate: GPUBuffer,
  up: GPUBuffer,
  dgate: GPUBuffer,
  dup: GPUBuffer,
  count: number,
): Promise<void> {
  const bind = [dh, gate, up, dgate, dup, packParams("u", [count])];
  await encodeKernel(device, enc, "swiglu_backward", code(true), { WG }, bind, grid(count, WG));
}
