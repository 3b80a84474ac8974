// Wrapper of the RMSNorm kernels. The per-head variant (Qwen3 q/k norms) is the same call with
// rows = N*H and C = D on a (N, H, D) tensor and a (D) weight. Forward and input backward
// (rmsnorm.wgsl, a template) reduce a row with subgroup operations where the device has
// `subgroups` (the pipelines labelled *_sg), through workgroup memory elsewhere.
import { sharedScratch } from "../device.ts";
import { encodeKernel, fitPow2, grid, packParams } from "./layer-common.ts";
import dwReduceSource from "./rmsnorm_dw_reduce.wgsl" with { type: "text" };
import dwSource from "./rmsnorm_dw.wgsl" with { type: "text" };
import source from "./rmsnorm.wgsl" with { type: "text" };
import { expandKernel } from "./wgsl-parts.ts";

/** Shape and epsilon shared by the kernels and the reference. */
export interface RmsNormDims {
  /** Rows R: N tokens, or N*H for Qwen3's per-head q/k norms (then C = D). */
  rows: number;
  C: number;
  eps: number;
}

/** Threads per row: a power of two fitted to C, between 32 and 256. */
function rowThreads(C: number): number {
  return fitPow2(C, 32, 256);
}

/** Whether the row reductions use subgroup operations on `device` (its `subgroups` feature); `force` false turns them off (tests). */
export function rmsnormSubgroups(device: GPUDevice, force?: boolean): boolean {
  return (force ?? true) && device.features.has("subgroups");
}

/** The label and text of rmsnorm.wgsl's forward or backward kernel, its row's sum by subgroups where `sg`. */
function rowKernel(backward: boolean, sg: boolean): [string, string] {
  const name = `rmsnorm_${backward ? "backward" : "forward"}${sg ? "_sg" : ""}`;
  return [name, expandKernel("rmsnorm.wgsl", source, { BACKWARD: backward, SUBGROUPS: sg })];
}

/** Records y (R, C) = rmsnorm(x) * w and rstd (R) into `enc`; `subgroups` forces the reduction's kind (tests). */
export async function encodeRmsNormForward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  x: GPUBuffer,
  w: GPUBuffer,
  y: GPUBuffer,
  rstd: GPUBuffer,
  d: RmsNormDims & { subgroups?: boolean },
): Promise<void> {
  const kernel = rowKernel(false, rmsnormSubgroups(device, d.subgroups));
  const bind = [x, w, y, rstd, packParams("uuf", [d.rows, d.C, d.eps])];
  await encodeKernel(device, enc, ...kernel, { WG: rowThreads(d.C) }, bind, grid(d.rows, 1));
}

/** Records dx (R, C) from dy, x, w and the saved rstd; adds to dx when `accumulate`; `subgroups` forces the reduction's kind (tests). */
export async function encodeRmsNormBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  dy: GPUBuffer,
  x: GPUBuffer,
  w: GPUBuffer,
  rstd: GPUBuffer,
  dx: GPUBuffer,
  d: RmsNormDims & { accumulate?: boolean; subgroups?: boolean },
): Promise<void> {
  const kernel = rowKernel(true, rmsnormSubgroups(device, d.subgroups));
  const constants = { WG: rowThreads(d.C), ACCUMULATE: d.accumulate ? 1 : 0 };
  const bind = [dy, x, w, rstd, dx, packParams("uu", [d.rows, d.C])];
  await encodeKernel(device, enc, ...kernel, constants, bind, grid(d.rows, 1));
}

/** Rows each slice of the dw reduction covers: about 256 per slice, at most 64 slices. */
function dwRowsPerSlice(rows: number): number {
  const slices = Math.min(64, Math.max(1, Math.ceil(rows / 256)));
  return Math.max(1, Math.ceil(rows / slices));
}

/**
 * Records dw (C) = sum over rows of dy * x * rstd; adds to dw when `accumulate`. Rows are split
 * into slices reduced by separate workgroups (then summed in slice order), so per-head norms
 * (C = D, R = N*H) still fill the GPU; the result is deterministic. The slices' partials go to the device's
 * grow-only scratch (sharedScratch).
 */
export async function encodeRmsNormWeightGrad(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  dy: GPUBuffer,
  x: GPUBuffer,
  rstd: GPUBuffer,
  dw: GPUBuffer,
  d: RmsNormDims & { accumulate?: boolean },
): Promise<void> {
  const rowsPerSlice = dwRowsPerSlice(d.rows);
  const slices = Math.max(1, Math.ceil(d.rows / rowsPerSlice));
  const direct = slices === 1;
  const out = direct ? dw : sharedScratch(device, "rmsnorm_dw-partials", slices * d.C * 4);
  const constants = { ACCUMULATE: direct && d.accumulate ? 1 : 0 };
  const bind = [dy, x, rstd, out, packParams("uuu", [d.rows, d.C, rowsPerSlice])];
  await encodeKernel(device, enc, "rmsnorm_dw", dwSource, constants, bind, [Math.ceil(d.C / 64), slices]);
  if (direct) return;
  const reduce = { WG: 256, ACCUMULATE: d.accumulate ? 1 : 0 };
  const bindReduce = [out, dw, packParams("uu", [d.C, slices])];
  await encodeKernel(device, enc, "rmsnorm_dw_reduce", dwReduceSource, reduce, bindReduce, [Math.ceil(d.C / 256)]);
}
