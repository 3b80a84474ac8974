// Wrappers of add.wgsl (out = alpha*a + beta*b) and add_into.wgsl (y = alpha*x + beta*y).
import { computePipeline, dispatch, uniformBuffer } from "../device.ts";
import addIntoSource from "./add_into.wgsl" with { type: "text" };
import addSource from "./add.wgsl" with { type: "text" };
import { grid, packParams } from "./layer-common.ts";

const WG = 256;

/** Records out = alpha * a + beta * b over `count` elements; out must differ from a and b. */
export async function encodeAdd(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  a: GPUBuffer,
  b: GPUBuffer,
  out: GPUBuffer,
  count: number,
  alpha = 1,
  beta = 1,
): Promise<void> {
  const pipeline = await computePipeline(device, "add", addSource, { WG });
  const params = uniformBuffer(device, "add-params", packParams("uff", [count, alpha, beta]));
  dispatch(device, enc, pipeline, [a, b, out, params], grid(count, WG));
}

/** Records y = alpha * x + beta * y in place over `count` elements (y += alpha * x by default). */
export async function encodeAddInto(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  x: GPUBuffer,
  y: GPUBuffer,
  count: number,
  alpha = 1,
  beta = 1,
): Promise<void> {
  const pipeline = await computePipeline(device, "add_into", addIntoSource, { WG });
  const params = uniformBuffer(device, "add_into-params", packParams("uff", [count, alpha, beta]));
  dispatch(device, enc, pipeline, [x, y, params], grid(count, WG));
}
