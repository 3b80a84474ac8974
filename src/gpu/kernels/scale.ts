// Wrapper of scale.wgsl: y = alpha * y in place.
import { computePipeline, dispatch, uniformBuffer } from "../device.ts";
import { grid, packParams } from "./layer-common.ts";
import source from "./scale.wgsl" with { type: "text" };

const WG = 256;

/** Records y = alpha * y over `count` elements. */
export async function encodeScale(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  y: GPUBuffer,
  count: number,
  alpha: number,
): Promise<void> {
  const pipeline = await computePipeline(device, "scale", source, { WG });
  const params = uniformBuffer(device, "scale-params", packParams("uf", [count, alpha]));
  dispatch(device, enc, pipeline, [y, params], grid(count, WG));
}
