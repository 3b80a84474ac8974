// Wrapper of the RMSNorm kernels. The per-head variant (Qwen3 q/k norms) is the same call with
// rows = N*H and C = D on a (N, H, D) tensor and a (D) weight. Forward and input backward
// (rmsnorm.wgsl, a template) reduce a row with subgroup operations where the device has
// `subgroups` (the pipelines labelled *_sg), through workgroup memory elsewhere.
import { computePipeline, dispatch, sharedScratch, uniformBuffer } from "../device.ts";
import { checkSizes, fitPow2, grid, packParams } from "./layer-common.ts";
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

/** The forward or backward pipeline of rmsnorm.wgsl, its row's sum by subgroups where `sg`. */
function rowPipeline(device: GPUDevice, backward: boolean, sg: boolean, constants: Record<string, number>) {
  const name = `rmsnorm_${backward ? "backward" : "forward"}${sg ? "_sg" : ""}`;
  const code = expandKernel("rmsnorm.wgsl", source, { BACKWARD: backward, SUBGROUPS: sg });
  return computePipeline(device, name, code, constants);
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
  const sg = rmsnormSubgroups(device, d.subgroups);
  const pipeline = await rowPipeline(device, false, sg, { WG: rowThreads(d.C) });
  const params = uniformBuffer(device, "rmsnorm_forward-params", packParams("uuf", [d.rows, d.C, d.eps]));
  dispatch(device, enc, pipeline, [x, w, y, rstd, params], grid(d.rows, 1));
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
  const sg = rmsnormSubgroups(device, d.subgroups);
  const pipeline = await rowPipeline(device, true, sg, { WG: rowThreads(d.C), ACCUMULATE: d.accumulate ? 1 : 0 });
  const params = uniformBuffer(device, "rmsnorm_backward-params", packParams("uu", [d.rows, d.C]));
  dispatch(device, enc, pipeline, [dy, x, w, rstd, dx, params], grid(d.rows, 1));
}

/** Rows each slice of the dw reduction covers: about 256 per slice, at most 64 slices. */
function dwRowsPerSlice(rows: number): number {
  const slices = Math.min(64, Math.max(1, Math.ceil(rows / 256)));
  return Math.max(1, Math.ceil(rows / slices));
}

/** Bytes of the (S, C) scratch encodeRmsNormWeightGrad needs for `rows` x `C` (0: none). */
export function rmsnormDwScratchBytes(rows: number, C: number): number {
  const slices = Math.max(1, Math.ceil(rows / dwRowsPerSlice(rows)));
  return slices === 1 ? 0 : slices * C * 4;
}

/**
 * Records dw (C) = sum over rows of dy * x * rstd; adds to dw when `accumulate`. Rows are split
 * into slices reduced by separate workgroups (then summed in slice order), so per-head norms
 * (C = D, R = N*H) still fill the GPU; the result is deterministic. `scratch` (at least
 * rmsnormDwScratchBytes) is the caller's; without it, the device's grow-only scratch (sharedScratch).
 */
export async function encodeRmsNormWeightGrad(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  dy: GPUBuffer,
  x: GPUBuffer,
  rstd: GPUBuffer,
  dw: GPUBuffer,
  d: RmsNormDims & { accumulate?: boolean; scratch?: GPUBuffer },
): Promise<void> {
  const rowsPerSlice = dwRowsPerSlice(d.rows);
  const slices = Math.max(1, Math.ceil(d.rows / rowsPerSlice));
  const direct = slices === 1;
  const pipeline = await computePipeline(device, "rmsnorm_dw", dwSource, {
    ACCUMULATE: direct && d.accumulate ? 1 : 0,
  });
  const params = uniformBuffer(device, "rmsnorm_dw-params", packParams("uuu", [d.rows, d.C, rowsPerSlice]));
  const need = slices * d.C * 4;
  if (!direct) checkSizes("rmsnorm dw", [["scratch", d.scratch, need]]);
  const out = direct ? dw : (d.scratch ?? sharedScratch(device, "rmsnorm_dw-partials", need));
  dispatch(device, enc, pipeline, [dy, x, rstd, out, params], [Math.ceil(d.C / 64), slices]);
  if (direct) return;
  const reduce = await computePipeline(device, "rmsnorm_dw_reduce", dwReduceSource, {
    WG: 256,
    ACCUMULATE: d.accumulate ? 1 : 0,
  });
  const reduceParams = uniformBuffer(device, "rmsnorm_dw_reduce-params", packParams("uu", [d.C, slices]));
  dispatch(device, enc, reduce, [out, dw, reduceParams], [Math.ceil(d.C / 256)]);
}
