// Wrappers of the PRM's scalar head: prm_head_forward.wgsl (z = h w + b), prm_head_loss.wgsl
// (weighted BCE on logits and dL/dz), prm_head_backward.wgsl (dh = dz w) and prm_head_dw.wgsl
// (dw = dz^T h, db = sum dz). Formulas in tests/gpu-ref/prm_head.ref.ts.
import { checkSizes, encodeKernel, fitPow2, grid, packParams } from "./layer-common.ts";
import forwardSource from "./prm_head_forward.wgsl" with { type: "text" };
import lossSource from "./prm_head_loss.wgsl" with { type: "text" };
import backwardSource from "./prm_head_backward.wgsl" with { type: "text" };
import dwSource from "./prm_head_dw.wgsl" with { type: "text" };

/** Sizes of the head. */
export interface PrmHeadDims {
  N: number;
  C: number;
}

const WG = 256;
const DW_WG = 64;

/** Records z (N) = h (N, C) w + b, with wb (C + 1) = [w, b]. */
export async function encodePrmHeadForward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  b: { h: GPUBuffer; wb: GPUBuffer; z: GPUBuffer },
  d: PrmHeadDims,
): Promise<void> {
  checkSizes("prm head", [["h", b.h, d.N * d.C * 4], ["wb", b.wb, (d.C + 1) * 4], ["z", b.z, d.N * 4]]);
  const bind = [b.h, b.wb, b.z, packParams("uu", [d.N, d.C])];
  await encodeKernel(device, enc, "prm_head_forward", forwardSource, { WG: fitPow2(d.C, 32, 256) }, bind, grid(d.N, 1));
}

/** Records the weighted BCE per row, loss (N), and its gradient dz (N), from logits z, labels and weights (N). */
export async function encodePrmBce(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  b: { z: GPUBuffer; labels: GPUBuffer; weights: GPUBuffer; dz: GPUBuffer; loss: GPUBuffer },
  N: number,
): Promise<void> {
  const n = N * 4;
  checkSizes("prm loss", [
    ["z", b.z, n],
    ["labels", b.labels, n],
    ["weights", b.weights, n],
    ["dz", b.dz, n],
    ["loss", b.loss, n],
  ]);
  const bind = [b.z, b.labels, b.weights, b.dz, b.loss, packParams("u", [N])];
  await encodeKernel(device, enc, "prm_head_loss", lossSource, { WG }, bind, grid(N, WG));
}

/** Records dh (N, C) (+)= dz (N) w. */
export async function encodePrmHeadBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  b: { dz: GPUBuffer; wb: GPUBuffer; dh: GPUBuffer },
  d: PrmHeadDims & { accumulate?: boolean },
): Promise<void> {
  checkSizes("prm head backward", [["dz", b.dz, d.N * 4], ["wb", b.wb, (d.C + 1) * 4], ["dh", b.dh, d.N * d.C * 4]]);
  const constants = { WG, ACCUMULATE: d.accumulate ? 1 : 0 };
  const bind = [b.dz, b.wb, b.dh, packParams("uu", [d.N, d.C])];
  await encodeKernel(device, enc, "prm_head_backward", backwardSource, constants, bind, grid(d.N * d.C, WG));
}

/** Records dwb (C + 1) (+)= [dz^T h, sum dz]: the head's parameter gradient. */
export async function encodePrmHeadWeightGrad(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  b: { dz: GPUBuffer; h: GPUBuffer; dwb: GPUBuffer },
  d: PrmHeadDims & { accumulate?: boolean },
): Promise<void> {
  checkSizes("prm head dw", [["dz", b.dz, d.N * 4], ["h", b.h, d.N * d.C * 4], ["dwb", b.dwb, (d.C + 1) * 4]]);
  const constants = { WG: DW_WG, ACCUMULATE: d.accumulate ? 1 : 0 };
  const bind = [b.dz, b.h, b.dwb, packParams("uu", [d.N, d.C])];
  await encodeKernel(device, enc, "prm_head_dw", dwSource, constants, bind, [Math.ceil((d.C + 1) / DW_WG)]);
}
