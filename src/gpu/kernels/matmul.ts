// Encoding of the matmul kernels: C (M, N) = alpha * op(A) @ op(B), optionally accumulating into C. matmul-plan.ts
// decides the kernel, its splits, Dims and grid (pure); matmul-source.ts gives each kernel's WGSL text. f16 operands
// (frozen base weights stored as f16, state.ts) are widened to f32 in the tile loads: sums are f32.
import { CALL_SCRATCH, computePipeline, dispatch, existingScratch, sharedScratch, uniformBuffer } from "../device.ts";
import {
  type EncodeMatmulOpts,
  type MatmulPlan,
  planMatmul,
  quadTailFits,
  SPLIT_MAX_BYTES,
  tailFuses,
  tailLayout,
  tileStep,
} from "./matmul-plan.ts";
import { grid, packParams } from "./layer-common.ts";
import { tile96hBody, typedSource } from "./matmul-source.ts";
import source64 from "./matmul.wgsl" with { type: "text" };
import sourceNarrow from "./matmul_narrow.wgsl" with { type: "text" };
import reduceSource from "./matmul_splitk_reduce.wgsl" with { type: "text" };

export {
  type EncodeMatmulOpts,
  MATMUL_VARIANTS,
  matmulFlops,
  type MatmulVariant,
  pickMatmul,
  splitKSlices,
  storesVec4,
  tailFused,
  vecLoads,
  wideSplitSlices,
} from "./matmul-plan.ts";

/** The device's grow-only split-K scratch (sharedScratch): passes run in queue order, so every split reuses it. */
export function scratchBuffer(device: GPUDevice, bytes: number): GPUBuffer {
  return sharedScratch(device, "matmul-splitk-scratch", bytes);
}

/**
 * Whether a split product's partials of `bytes` go to the call scratch (device.ts CALL_SCRATCH) rather than the split
 * scratch: a wide split's (over SPLIT_MAX_BYTES) where that scratch already holds them, so that the split scratch does
 * not grow for them (docs/kernels.md, "Matmul", split-K).
 */
export function wideSplitInCallScratch(device: GPUDevice, bytes: number): boolean {
  if (bytes <= SPLIT_MAX_BYTES) return false;
  const call = existingScratch(device, CALL_SCRATCH);
  return !!call && call.size >= bytes;
}

/**
 * The partials of a split product: the call scratch where wideSplitInCallScratch says so and no operand is bound to it (a
 * dispatch can't read and write one buffer), else the split scratch. The same values either way.
 */
export function splitPartials(device: GPUDevice, bytes: number, operands: readonly GPUBuffer[]): GPUBufferBinding {
  const call = wideSplitInCallScratch(device, bytes) ? existingScratch(device, CALL_SCRATCH) : undefined;
  if (call && !operands.includes(call)) return { buffer: call, offset: 0, size: bytes };
  return { buffer: scratchBuffer(device, bytes) };
}

/** The tile kernels' contracted step on `device`: 16 where its tiles fit the device's workgroup memory, else 8. */
export function t128Step(device: GPUDevice): 8 | 16 {
  return tileStep(device.limits.maxComputeWorkgroupStorageSize);
}

/**
 * The pipeline of plan `p` (with the LoRA tail of b2 layout `tailB` inside, where given). A tile96h label names its
 * variant (a profile names kernels by it): the step, the vec4 loads, the transposes, the tail, its quad loads, vec4 stores.
 */
function pipelineFor(device: GPUDevice, p: MatmulPlan, accumulate: boolean, tailB?: boolean) {
  const { e, vec, c4 } = p;
  const constants = { TRANS_A: e.transA ? 1 : 0, TRANS_B: e.transB ? 1 : 0, ACCUMULATE: accumulate ? 1 : 0 };
  const aF16 = e.aF16 ?? false, bF16 = e.bF16 ?? false;
  switch (p.variant) {
    case "tile64":
      return computePipeline(device, "matmul", typedSource(source64, aF16, bF16), constants);
    case "narrow": {
      const narrow = typedSource(sourceNarrow, aF16, bF16);
      return computePipeline(device, "matmul_narrow", narrow, { ...constants, TRANS_C: p.swap ? 1 : 0 });
    }
    case "tile96h": {
      const tk = e.step ?? t128Step(device);
      const tq = tailB !== undefined && quadTailFits(e, tailB);
      const flags = [e.transA && "_tA", e.transB && "_tB", tailB !== undefined && "_tail", tq && "_tq", c4 && "_c4"];
      const v = vec.a || vec.b ? `_v${vec.a ? "A" : ""}${vec.b ? "B" : ""}` : "";
      const label = `matmul_t96h${tk === 8 ? "" : `_k${tk}`}${v}${flags.filter(Boolean).join("")}`;
      const code = typedSource(tile96hBody(tk, tailB, tq, c4), aF16, bF16, vec, c4);
      return computePipeline(device, label, code, constants);
    }
  }
}

/** Records the matmul into `enc`; A, B and C are storage buffers laid out as in matmul.wgsl (A, B f16 when flagged). */
export function encodeMatmul(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  a: GPUBuffer,
  b: GPUBuffer,
  c: GPUBuffer,
  o: EncodeMatmulOpts,
): Promise<void> {
  return encodeMatmulBindings(device, enc, { buffer: a }, { buffer: b }, { buffer: c }, o);
}

/** The Tail uniform: r, scale. */
export function tailWords(t: { r: number; scale: number }): Uint32Array {
  const w = new ArrayBuffer(16);
  new Uint32Array(w)[0] = t.r;
  new Float32Array(w)[1] = t.scale;
  return new Uint32Array(w);
}

/**
 * Records the matmul on buffer windows (bindings with offsets, as the vocabulary head binds row chunks of W),
 * the kernel chosen by pickMatmul and split along K as splitKSlices says (the slices go to the scratch buffer,
 * then a reduce into C's window).
 */
export async function encodeMatmulBindings(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  a: GPUBufferBinding,
  b: GPUBufferBinding,
  c: GPUBufferBinding,
  o: EncodeMatmulOpts,
): Promise<void> {
  const p = planMatmul(o, a.offset ?? 0, b.offset ?? 0, c.offset ?? 0);
  const { e } = p;
  const [x, y] = p.swap ? [b, a] : [a, b];
  const { M, N, alpha = 1, accumulate = false } = e;
  const t = o.tail;
  if (t && !tailFuses(o, p)) {
    // The tail as its own product accumulated into C, after the product and its bias (the order without the switch).
    await encodeMatmulBindings(device, enc, a, b, c, { ...o, tail: undefined });
    await encodeTailProduct(device, enc, t, c, o.M, o.N, tailLayout(o) ?? false);
    return;
  }
  // Fused: the kernel's bindings 4-6 (a2, b2, the Tail uniform); the bias still comes after, in the reduce.
  const tailBind = t ? [t.a, t.b, uniformBuffer(device, "matmul-tail", tailWords(t))] : [];
  const dims = uniformBuffer(device, "matmul-dims", p.dims);
  if (p.slices > 1) {
    const part = splitPartials(device, 4 * p.slices * M * N, [a.buffer, b.buffer, c.buffer, ...(t ? [t.a, t.b] : [])]);
    const pipeline = await pipelineFor(device, p, false, tailLayout(o));
    dispatch(device, enc, pipeline, [x, y, part, dims, ...tailBind], p.grid);
    const bias = o.bias ? { bias: o.bias, N: o.N } : undefined;
    await encodeSplitReduce(device, enc, part, c, M * N, p.slices, alpha, accumulate, bias);
    return;
  }
  const pipeline = await pipelineFor(device, p, accumulate, tailLayout(o));
  dispatch(device, enc, pipeline, [x, y, c, dims, ...tailBind], p.grid);
  // C += bias: the reduce's bias entry over no slices (its partials binding unread; any buffer but C).
  if (o.bias) {
    await encodeSplitReduce(device, enc, scratchBuffer(device, 4), c, o.M * o.N, 0, 1, true, { bias: o.bias, N: o.N });
  }
}

/**
 * Records C (M, N) += scale * a (M, r) op(b) as its own product (b (N, r) when transB, else (r, N)): a LoRA tail where
 * it does not run inside its base product's kernel (EncodeMatmulOpts.tail, Q4MatmulOpts.tail).
 */
export function encodeTailProduct(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  t: { a: GPUBuffer; b: GPUBuffer; r: number; scale: number },
  c: GPUBufferBinding,
  M: number,
  N: number,
  transB: boolean,
): Promise<void> {
  const o = { M, N, K: t.r, transB, alpha: t.scale, accumulate: true };
  return encodeMatmulBindings(device, enc, { buffer: t.a }, { buffer: t.b }, c, o);
}

/**
 * Records C[i] = alpha * sum over s < S of part[s, i] (+ C[i] when accumulate) (+ bias[i % N] with `bias`, C (MN / N, N)),
 * i < MN: the end of a split-K product.
 */
export async function encodeSplitReduce(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  part: GPUBuffer | GPUBufferBinding,
  c: GPUBuffer | GPUBufferBinding,
  MN: number,
  S: number,
  alpha: number,
  accumulate: boolean,
  bias?: { bias: GPUBuffer; N: number },
): Promise<void> {
  const constants = { ACCUMULATE: accumulate ? 1 : 0 };
  const reduce = bias
    ? await computePipeline(device, "matmul_splitk_reduce_bias", reduceSource, constants, "main_bias")
    : await computePipeline(device, "matmul_splitk_reduce", reduceSource, constants);
  const params = uniformBuffer(device, "matmul-splitk-params", packParams("uufu", [MN, S, alpha, bias?.N ?? 0]));
  dispatch(device, enc, reduce, bias ? [part, c, params, bias.bias] : [part, c, params], grid(MN, 256));
}
