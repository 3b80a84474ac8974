// Wrapper of rope.wgsl: rotary embedding of (N, H, D) rows at u32 positions, forward or backward.
import { computePipeline, dispatch, uniformBuffer } from "../device.ts";
import { grid, packParams } from "./layer-common.ts";
import source from "./rope.wgsl" with { type: "text" };

/** Shape shared by the kernel and the reference. */
export interface RopeDims {
  N: number;
  H: number;
  D: number;
}

const WG = 256;

/**
 * Records y = rope(x) (or, with `backward`, dx = rope^T(dy)) into `enc`; `pos` is a u32 (N)
 * buffer and `invFreq` a f32 (D/2) buffer with any frequency scaling (llama3) already applied.
 * `y` must be a different buffer from `x`.
 */
export async function encodeRope(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  x: GPUBuffer,
  pos: GPUBuffer,
  invFreq: GPUBuffer,
  y: GPUBuffer,
  d: RopeDims & { backward?: boolean },
): Promise<void> {
  if (d.D % 2 !== 0) throw new Error(`rope: head dim D=${d.D} must be even`);
  const pipeline = await computePipeline(device, d.backward ? "rope_backward" : "rope_forward", source, {
    WG,
    BACKWARD: d.backward ? 1 : 0,
  });
  const params = uniformBuffer(device, "rope-params", packParams("uuu", [d.N, d.H, d.D]));
  dispatch(device, enc, pipeline, [x, pos, invFreq, y, params], grid((d.N * d.H * d.D) / 2, WG));
}
