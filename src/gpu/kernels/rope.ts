// Wrapper of rope.wgsl: rotary embedding of (N, H, D) rows at u32 positions, forward or backward.
import { encodeKernel, grid, packParams } from "./layer-common.ts";
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
  const name = d.backward ? "rope_backward" : "rope_forward", BACKWARD = d.backward ? 1 : 0;
  const bind = [x, pos, invFreq, y, packParams("uuu", [d.N, d.H, d.D])];
  await encodeKernel(device, enc, name, source, { WG, BACKWARD }, bind, grid((d.N * d.H * d.D) / 2, WG));
}
