// Wrapper of swiglu_forward.wgsl and swiglu_backward.wgsl; gate, up and h are (N, F) f32 buffers.
import { computePipeline, dispatch, uniformBuffer } from "../device.ts";
import { grid, packParams } from "./layer-common.ts";
import backwardSource from "./swiglu_backward.wgsl" with { type: "text" };
import forwardSource from "./swiglu_forward.wgsl" with { type: "text" };

const WG = 256;

/** Records h = silu(gate) * up over `count` = N*F elements. */
export async function encodeSwigluForward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  gate: GPUBuffer,
  up: GPUBuffer,
  h: GPUBuffer,
  count: number,
): Promise<void> {
  const pipeline = await computePipeline(device, "swiglu_forward", forwardSource, { WG });
  const params = uniformBuffer(device, "swiglu_forward-params", packParams("u", [count]));
  dispatch(device, enc, pipeline, [gate, up, h, params], grid(count, WG));
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
  const pipeline = await computePipeline(device, "swiglu_backward", backwardSource, { WG });
  const params = uniformBuffer(device, "swiglu_backward-params", packParams("u", [count]));
  dispatch(device, enc, pipeline, [dh, gate, up, dgate, dup, params], grid(count, WG));
}
