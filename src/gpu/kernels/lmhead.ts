// Wrappers of the fused vocabulary head: lmhead.wgsl + lmhead_combine.wgsl (forward: logp, lse, entropy, streaming over
// V) and lmhead_grad_t128.wgsl + matmul.ts's kernels (backward, chunked over V: dz, then dh and, for full fine-tuning,
// dW). Layouts in docs/kernels.md, "Fused vocabulary head".
import { checkSizes, encodeKernel, unusedBinding } from "./layer-common.ts";
import partialSource from "./lmhead.wgsl" with { type: "text" };
import combineSource from "./lmhead_combine.wgsl" with { type: "text" };
import grad128Source from "./lmhead_grad_t128.wgsl" with { type: "text" };
import { encodeMatmulBindings } from "./matmul.ts";
import { expandKernel } from "./wgsl-parts.ts";

/** Sizes of the vocabulary head. */
export interface LmHeadDims {
  N: number;
  C: number;
  V: number;
}

/** Forward buffers: h (N, C), w (V, C), targets (N) u32; logp, lse, entropy (N); partials from lmheadPartialsBytes. */
export interface LmHeadForwardBuffers {
  h: GPUBuffer;
  w: GPUBuffer;
  targets: GPUBuffer;
  logp: GPUBuffer;
  lse: GPUBuffer;
  entropy: GPUBuffer;
  partials: GPUBuffer;
}

/** Backward buffers: forward inputs, its lse (and entropy with gEnt), upstream g (N), outputs dh (N, C), optional dw (V, C), scratch from lmheadScratchBytes. */
export interface LmHeadBackwardBuffers {
  h: GPUBuffer;
  w: GPUBuffer;
  targets: GPUBuffer;
  lse: GPUBuffer;
  g: GPUBuffer;
  entropy?: GPUBuffer;
  gEnt?: GPUBuffer;
  dh: GPUBuffer;
  dw?: GPUBuffer;
  scratch: GPUBuffer;
}

/**
 * Forward options: vocabulary columns per workgroup (a multiple of 64), the logit multiplier
 * (1 / temperature) and a cap on the bytes of one storage binding below the device's (tests: W in
 * several windows without a W past the device's limit).
 */
export interface LmHeadForwardOpts {
  vocabPerGroup?: number;
  scale?: number;
  bindingBytes?: number;
}

/** Backward options: vocabulary rows per chunk (a multiple of 64), the forward's logit multiplier, whether dh / dw add to their contents, a binding cap as the forward's. */
export interface LmHeadBackwardOpts {
  chunk?: number;
  scale?: number;
  accumulateDh?: boolean;
  accumulateDw?: boolean;
  bindingBytes?: number;
}

const DEFAULT_VS = 1024;
const DEFAULT_CHUNK = 8192;

function vocabPerGroup(o: LmHeadForwardOpts): number {
  const vs = o.vocabPerGroup ?? DEFAULT_VS;
  if (vs <= 0 || vs % 64 !== 0) throw new Error(`lmhead: vocabPerGroup ${vs} is not a positive multiple of 64`);
  return vs;
}

/** The largest storage binding the kernels may use: the device's limit, or `cap` below it. */
function bindingLimit(device: GPUDevice, cap = Infinity): number {
  return Math.min(device.limits.maxStorageBufferBindingSize, cap);
}

/** Bytes of the forward's partials buffer: (N, ceil(V / vocabPerGroup), 4) f32. */
export function lmheadPartialsBytes(d: LmHeadDims, o: LmHeadForwardOpts = {}): number {
  return d.N * Math.ceil(d.V / vocabPerGroup(o)) * 16;
}

/** Vocabulary rows per backward chunk, kept within the device's binding size for W and dz. */
export function lmheadChunk(device: GPUDevice, d: LmHeadDims, o: LmHeadBackwardOpts = {}): number {
  const want = o.chunk ?? DEFAULT_CHUNK;
  if (want <= 0 || want % 64 !== 0) throw new Error(`lmhead: chunk ${want} is not a positive multiple of 64`);
  const limit = bindingLimit(device, o.bindingBytes);
  const cap = Math.floor(limit / (4 * Math.max(d.N, d.C)) / 64) * 64;
  if (cap < 64) throw new Error(`lmhead: N ${d.N} or C ${d.C} too large for a 64-row chunk within ${limit} bytes`);
  return Math.min(want, cap, Math.ceil(d.V / 64) * 64);
}

/** Bytes of the backward's scratch buffer: the logit gradient of one chunk, (N, chunk) f32. */
export function lmheadScratchBytes(device: GPUDevice, d: LmHeadDims, o: LmHeadBackwardOpts = {}): number {
  return d.N * lmheadChunk(device, d, o) * 4;
}

/** Rows of W (V, C) from `start`, as a binding window. */
function rows(w: GPUBuffer, C: number, start: number, count: number): GPUBufferBinding {
  return { buffer: w, offset: start * C * 4, size: count * C * 4 };
}

/** Vocabulary rows of W the forward binds at a time: whole slices of `vocabPerGroup` within the binding limit. */
export function lmheadWindow(device: GPUDevice, d: LmHeadDims, o: LmHeadForwardOpts = {}): number {
  const VS = vocabPerGroup(o);
  return Math.floor(bindingLimit(device, o.bindingBytes) / (4 * d.C) / VS) * VS;
}

/** Records the forward: lmhead.wgsl over windows of W that fit a binding, then lmhead_combine.wgsl. */
export async function encodeLmheadForward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  buf: LmHeadForwardBuffers,
  d: LmHeadDims,
  o: LmHeadForwardOpts = {},
): Promise<void> {
  const VS = vocabPerGroup(o);
  const nSplit = Math.ceil(d.V / VS);
  const n4 = d.N * 4;
  checkSizes("lmhead", [
    ["h", buf.h, n4 * d.C],
    ["w", buf.w, d.V * d.C * 4],
    ["targets", buf.targets, n4],
    ["logp", buf.logp, n4],
    ["lse", buf.lse, n4],
    ["entropy", buf.entropy, n4],
    ["partials", buf.partials, lmheadPartialsBytes(d, o)],
  ]);
  const window = lmheadWindow(device, d, o);
  if (window < VS) throw new Error(`lmhead: one vocabulary slice of ${VS} x ${d.C} exceeds the binding limit`);
  const rowsPer = 64;
  for (let vStart = 0; vStart < d.V; vStart += window) {
    const vCount = Math.min(window, d.V - vStart);
    const u = new Uint32Array([d.N, d.C, vStart, vCount, VS, nSplit, vStart / VS, 0]);
    new Float32Array(u.buffer)[7] = o.scale ?? 1;
    const bind = [buf.h, rows(buf.w, d.C, vStart, vCount), buf.targets, buf.partials, u];
    const groups = [Math.ceil(vCount / VS), Math.ceil(d.N / rowsPer)] as const;
    await encodeKernel(device, enc, "lmhead-partials", partialSource, {}, bind, groups);
  }
  const perX = Math.min(d.N, 32768);
  const dims = new Uint32Array([d.N, d.V, nSplit, perX]);
  const bind = [buf.partials, buf.targets, buf.logp, buf.lse, buf.entropy, dims];
  await encodeKernel(device, enc, "lmhead-combine", combineSource, {}, bind, [perX, Math.ceil(d.N / perX)]);
}

/** Records the backward chunk by chunk over V: dz (scratch), dh (+)= scale dz W_chunk, and dW_chunk (+)= scale dz^T h when dw is given. */
export async function encodeLmheadBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  buf: LmHeadBackwardBuffers,
  d: LmHeadDims,
  o: LmHeadBackwardOpts = {},
): Promise<void> {
  const chunk = lmheadChunk(device, d, o);
  const n4 = d.N * 4;
  checkSizes("lmhead backward", [
    ["h", buf.h, n4 * d.C],
    ["w", buf.w, d.V * d.C * 4],
    ["targets", buf.targets, n4],
    ["lse", buf.lse, n4],
    ["g", buf.g, n4],
    ["entropy", buf.entropy, n4],
    ["gEnt", buf.gEnt, n4],
    ["dh", buf.dh, n4 * d.C],
    ["dw", buf.dw, d.V * d.C * 4],
    ["scratch", buf.scratch, n4 * chunk],
  ]);
  const hasEnt = buf.gEnt !== undefined;
  const scale = o.scale ?? 1;
  if (hasEnt && !buf.entropy) throw new Error("lmhead: gEnt needs the forward's entropy");
  const tile = 128;
  const grad = expandKernel("lmhead_grad_t128.wgsl", grad128Source);
  for (let vStart = 0; vStart < d.V; vStart += chunk) {
    const vCount = Math.min(chunk, d.V - vStart);
    const u = new Uint32Array([d.N, d.C, d.V, vStart, vCount, 0, 0, 0]);
    new Float32Array(u.buffer)[5] = scale;
    const dz: GPUBufferBinding = { buffer: buf.scratch, offset: 0, size: d.N * vCount * 4 };
    const wRows = rows(buf.w, d.C, vStart, vCount);
    const ent = [buf.entropy ?? unusedBinding(device), buf.gEnt ?? unusedBinding(device)];
    const groups = [Math.ceil(vCount / tile), Math.ceil(d.N / tile)] as const;
    const bind = [buf.h, wRows, buf.targets, buf.lse, buf.g, ...ent, dz, u];
    await encodeKernel(device, enc, "lmhead-grad-t128", grad, { HAS_ENT: hasEnt ? 1 : 0 }, bind, groups);
    // dh (N, C) (+)= dz (N, vCount) @ W_chunk (vCount, C)
    const o1 = { M: d.N, N: d.C, K: vCount, accumulate: vStart > 0 || (o.accumulateDh ?? false), alpha: scale };
    await encodeMatmulBindings(device, enc, dz, wRows, { buffer: buf.dh }, o1);
    // dW_chunk (vCount, C) (+)= dz^T (vCount, N) @ h (N, C)
    if (buf.dw) {
      const dwRows = rows(buf.dw, d.C, vStart, vCount);
      const o2 = { M: vCount, N: d.C, K: d.N, transA: true, accumulate: o.accumulateDw ?? false, alpha: scale };
      await encodeMatmulBindings(device, enc, dz, { buffer: buf.h }, dwRows, o2);
    }
  }
}
