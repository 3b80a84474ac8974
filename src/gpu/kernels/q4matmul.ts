// Wrappers of the q4 products, W in onnxruntime's MatMulNBits layout (4 bits, block 32); see
// docs/kernels.md. Two kernels each way, with the same bindings:
//   tile64   q4matmul.wgsl (a template: TRANS)          64x64 tiles, 4x4 per thread
//   tile128  q4matmul_t128.wgsl (a template: TRANS)     128x128 tiles, 8x8 per thread
// y = x @ dequant(W)^T (forward) and dx = dy @ dequant(W) (backward). tile128 where both output
// sides fill a 128-wide tile and the grid is not too small. A 128-tile product with a small grid (the 0.5B's
// 896-wide outputs) is split along its contracted dimension as matmul.ts splits its own (knob wideSplit).
// Products of many rows dequantise W and run the f32 kernels instead (knob q4deq).
import { CALL_SCRATCH, computePipeline, dispatch, sharedScratch, storageBuffer, uniformBuffer } from "../device.ts";
import { perfSwitches } from "../switches.ts";
import { checkSizes } from "./layer-common.ts";
import {
  encodeMatmul,
  type EncodeMatmulOpts,
  encodeSplitReduce,
  encodeTailProduct,
  scratchBuffer,
  SHORT_K,
  splitKSlices,
  t128Step,
  tailWords,
  wideSplitInCallScratch,
  wideSplitSlices,
} from "./matmul.ts";
import { q4TileBody } from "./matmul-source.ts";
import tile64Source from "./q4matmul.wgsl" with { type: "text" };
import commonSource from "./q4matmul_common.wgsl" with { type: "text" };
import dequantSource from "./q4_dequant.wgsl" with { type: "text" };
import { expandKernel } from "./wgsl-parts.ts";

/** Elements per quantisation block. */
export const Q4_BLOCK = 32;

/** A weight in MatMulNBits layout (bits 4, block 32). */
export interface Q4Weight {
  Nout: number;
  K: number;
  packed: Uint8Array; // (Nout, nb, 16)
  scales: Float32Array; // (Nout, nb)
  zeroPoints?: Uint8Array; // (Nout, ceil(nb / 2))
}

/** Blocks per row and zero-point bytes per row for `K` input features. */
export function q4Geometry(K: number): { nb: number; zpBytes: number } {
  const nb = Math.ceil(K / Q4_BLOCK);
  return { nb, zpBytes: Math.ceil(nb / 2) };
}

/** A q4 weight resident on the GPU: packed nibbles, scales and optional packed zero points. */
export interface Q4WeightGpu {
  Nout: number;
  K: number;
  packed: GPUBuffer; // (Nout, nb, 16) bytes, bound as array<u32>
  scales: GPUBuffer; // (Nout, nb) f32
  zeroPoints?: GPUBuffer; // (Nout, ceil(nb / 2)) bytes, bound as array<u32>
}

/** Uploads a q4 weight; the packed byte arrays are padded to whole u32 words. */
export function uploadQ4(device: GPUDevice, label: string, w: Q4Weight): Q4WeightGpu {
  const { nb, zpBytes } = q4Geometry(w.K);
  if (w.packed.length !== w.Nout * nb * 16) {
    throw new Error(`${label}: packed has ${w.packed.length} bytes, want ${w.Nout * nb * 16}`);
  }
  if (w.scales.length !== w.Nout * nb) {
    throw new Error(`${label}: scales has ${w.scales.length} values, want ${w.Nout * nb}`);
  }
  if (w.zeroPoints && w.zeroPoints.length !== w.Nout * zpBytes) {
    throw new Error(`${label}: zeroPoints has ${w.zeroPoints.length} bytes, want ${w.Nout * zpBytes}`);
  }
  return {
    Nout: w.Nout,
    K: w.K,
    packed: storageBuffer(device, `${label}-q4`, w.packed),
    scales: storageBuffer(device, `${label}-scales`, w.scales),
    zeroPoints: w.zeroPoints ? storageBuffer(device, `${label}-zp`, w.zeroPoints) : undefined,
  };
}

const dummies = new WeakMap<GPUDevice, GPUBuffer>();

function placeholder(device: GPUDevice): GPUBuffer {
  let b = dummies.get(device);
  if (!b) dummies.set(device, b = storageBuffer(device, "q4-unused-binding", 4));
  return b;
}

/** The q4 kernels. */
export const Q4_VARIANTS = ["tile64", "tile128"] as const;
export type Q4Variant = (typeof Q4_VARIANTS)[number];

/**
 * Fewest 128x128 workgroups for tile128: below this (the k/v projections' forward, 6144 x 128: 48
 * workgroups, a third of a big GPU's multiprocessors) tile64's four times as many workgroups keep
 * more of it busy. A guess until measured.
 */
const Q4_MIN_WORKGROUPS_128 = 96;

/**
 * The kernel for an (N, outCols) output over inCols contracted columns (omitted: any): tile128 when both sides fill
 * 128-wide tiles and its grid is large enough, except a short contracted length (inCols <= matmul.ts's SHORT_K: the k/v
 * dx, faster on tile64) where no LoRA tail (`tail`) would run inside the 128-tile kernel.
 */
export function pickQ4(N: number, outCols: number, forced?: Q4Variant, inCols?: number, tail = false): Q4Variant {
  if (forced) return forced;
  if (inCols !== undefined && inCols <= SHORT_K && !tail) return "tile64";
  const big = N >= 128 && outCols >= 128 && Math.ceil(N / 128) * Math.ceil(outCols / 128) >= Q4_MIN_WORKGROUPS_128;
  return big ? "tile128" : "tile64";
}

/** Whether a q4 product of N rows, outCols columns (and inCols contracted ones) runs a LoRA tail inside its kernel (the 128-tile kernels). */
export function q4TailFuses(N: number, outCols: number, forced?: Q4Variant, inCols?: number): boolean {
  return pickQ4(N, outCols, forced, inCols, true) === "tile128";
}

/** One q4 product: `input` (N, inCols) through W into `out` (N, outCols); `extra`: the bindings after the dims. */
interface Q4Product {
  name: "q4matmul" | "q4matmul_t";
  input: GPUBuffer;
  w: Q4WeightGpu;
  out: GPUBuffer;
  N: number;
  inCols: number;
  outCols: number;
  constants: Record<string, number>;
  extra: GPUBuffer[];
  forced?: Q4Variant;
  tail?: Q4Tail;
  step?: 8 | 16;
}

async function encode(device: GPUDevice, enc: GPUCommandEncoder, p: Q4Product): Promise<void> {
  const { name, input, w, out, N, inCols, outCols, constants, extra, forced, tail, step } = p;
  const trans = name === "q4matmul_t";
  const { nb, zpBytes } = q4Geometry(w.K);
  checkSizes(name, [["input", input, N * inCols * 4], ["output", out, N * outCols * 4], [
    "packed",
    w.packed,
    w.Nout * nb * 16,
  ], ["scales", w.scales, w.Nout * nb * 4]]);
  const variant = pickQ4(N, outCols, forced, inCols, !!tail);
  const tile = variant === "tile128" ? 128 : 64;
  const tk = variant === "tile128" ? (step ?? t128Step(device)) : 8;
  const label = variant === "tile128" ? `${name}_t128${tk === 16 ? "_k16" : ""}` : name;
  const grid: [number, number] = [Math.ceil(outCols / tile), Math.ceil(N / tile)];
  // Split-K (the 128-tile kernels, knob wideSplit): slices of the contracted length in whole blocks of 32.
  const S = variant === "tile128" ? wideSplitSlices(grid[0] * grid[1], inCols, N * outCols) : 1;
  const kSlice = S > 1 ? Math.ceil(inCols / S / 32) * 32 : 0;
  const slices = S > 1 ? Math.ceil(inCols / kSlice) : 1;
  const split = slices > 1;
  // The LoRA tail on the 128-tile kernels: bindings 7-9 after the forward's bias (6), 6-8 in the
  // transposed kernel, which has no bias (the bind group's entries are numbered in order).
  const fused = !!tail && q4TailFuses(N, outCols, forced, inCols);
  const b0 = 6 + extra.length;
  const body = variant === "tile128"
    ? q4TileBody(
      trans,
      tk,
      fused && tail
        ? { bindings: [b0, b0 + 1, b0 + 2], rows: "dims.N", cols: tail.cols, transB: tail.transB }
        : undefined,
    )
    : expandKernel("q4matmul.wgsl", tile64Source, { TRANS: trans });
  const pipeline = await computePipeline(device, `${label}${fused ? "_tail" : ""}`, `${commonSource}\n${body}`, {
    HAS_ZP: w.zeroPoints ? 1 : 0,
    ...constants,
    ...(split ? { ACCUMULATE: 0 } : {}),
  });
  const dims = uniformBuffer(
    device,
    `${name}-dims`,
    new Uint32Array([N, w.K, w.Nout, nb, zpBytes, split ? kSlice : 0, 0, 0]),
  );
  const zp = w.zeroPoints ?? placeholder(device);
  const tailBind = fused && tail ? [tail.a, tail.b, uniformBuffer(device, `${name}-tail`, tailWords(tail))] : [];
  const separate = async () => {
    if (tail && !fused) await encodeTailProduct(device, enc, tail, { buffer: out }, N, outCols, tail.transB);
  };
  if (!split) {
    dispatch(device, enc, pipeline, [input, w.packed, w.scales, zp, out, dims, ...extra, ...tailBind], grid);
    await separate();
    return;
  }
  const part = scratchBuffer(device, 4 * slices * N * outCols);
  dispatch(device, enc, pipeline, [input, w.packed, w.scales, zp, part, dims, ...extra, ...tailBind], [
    ...grid,
    slices,
  ]);
  await encodeSplitReduce(device, enc, part, out, N * outCols, slices, 1, constants.ACCUMULATE === 1);
  await separate();
}

/** A LoRA product added to a q4 product's output (EncodeMatmulOpts.tail's role; the kernel's columns `cols` as WGSL). */
interface Q4Tail {
  a: GPUBuffer;
  b: GPUBuffer;
  r: number;
  scale: number;
  transB: boolean;
  cols: string;
}

/** Output handling: overwrite (default) or add into the output buffer (a LoRA path, a residual gradient); `variant` forces a kernel (tests, benchmarks). */
export interface Q4MatmulOpts {
  accumulate?: boolean;
  variant?: Q4Variant;
  /** Force the 128-tile kernels' contracted step (tests; at most what the device's workgroup memory allows). */
  step?: 8 | 16;
  /**
   * Also add scale * a (N, r) op(b) (the LoRA product: forward a = x A^T, b = B (Nout, r); transposed a = dy B,
   * b = A (r, K)): on the 128-tile kernels inside the product's kernel, else as a second
   * product accumulated into the output after it (and after the bias).
   */
  tail?: { a: GPUBuffer; b: GPUBuffer; r: number; scale: number };
}

/** Forward options: also a bias (Nout) f32 buffer added to every row (Qwen2's q/k/v projections). */
export interface Q4MatmulForwardOpts extends Q4MatmulOpts {
  bias?: GPUBuffer;
}

/**
 * Rows of x from which a q4 product dequantises W whole and runs the f32 kernels under the knob q4deq=1 (2: any rows).
 * Writing and reading the f32 matrix costs about 8 Nout K bytes against 2 N Nout K flops: at 3 TB/s and 35 TFLOP/s
 * 47 / N of the product's time (0.8% at the 0.5B step's 6,144 rows, 2.3% here); decoding's few rows keep the q4
 * kernels, which read an eighth of the bytes. A guess, measured only at 6,144 rows.
 */
export const Q4_DEQUANT_MIN_ROWS = 2048;

/** q4_dequant.wgsl's grid: a thread per quad of rows and packed word (W^T), or per packed word (W); 64 threads a workgroup along x. */
function dequantGrid(w: { Nout: number; K: number }, transposed: boolean): [number, number] {
  const words = q4Geometry(w.K).nb * 4;
  return transposed ? [Math.ceil(w.Nout / 4 / 64), words] : [Math.ceil(words / 64), w.Nout];
}

/** Why the dequantisation of W (W^T when `transposed`) can't run, or undefined: its rows must be whole vec4, its grid within the device's limits. */
function dequantProblem(device: GPUDevice, w: { Nout: number; K: number }, transposed: boolean): string | undefined {
  if (transposed ? w.Nout % 4 !== 0 : w.K % 4 !== 0) {
    return `${transposed ? `Nout ${w.Nout}` : `K ${w.K}`} is not a multiple of 4`;
  }
  const grid = dequantGrid(w, transposed), max = device.limits.maxComputeWorkgroupsPerDimension;
  if (grid[0] > max || grid[1] > max) {
    return `grid ${grid.join(" x ")} exceeds the device's ${max} workgroups per dimension`;
  }
  return undefined;
}

/**
 * Records out = dequant(W) as f32, (Nout, K) row-major or, `transposed`, W^T (K, Nout) (q4_dequant.wgsl): bitwise the
 * values the q4 product kernels multiply with. The natural layout needs K % 4 == 0, the transposed Nout % 4 == 0.
 */
export async function encodeQ4Dequant(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  w: Q4WeightGpu,
  out: GPUBuffer,
  transposed: boolean,
): Promise<void> {
  const { nb, zpBytes } = q4Geometry(w.K);
  const problem = dequantProblem(device, w, transposed);
  if (problem) throw new Error(`q4 dequant: ${problem}`);
  checkSizes("q4 dequant", [["output", out, w.Nout * w.K * 4], ["packed", w.packed, w.Nout * nb * 16], [
    "scales",
    w.scales,
    w.Nout * nb * 4,
  ]]);
  const grid = dequantGrid(w, transposed);
  const pipeline = await computePipeline(device, `q4-dequant${transposed ? "-t" : ""}`, dequantSource, {
    HAS_ZP: w.zeroPoints ? 1 : 0,
    TRANSPOSED: transposed ? 1 : 0,
  });
  const dims = uniformBuffer(device, "q4-dequant-dims", new Uint32Array([w.Nout, w.K, nb, zpBytes]));
  dispatch(device, enc, pipeline, [w.packed, w.scales, w.zeroPoints ?? placeholder(device), out, dims], grid);
}

/**
 * Whether a q4 product of N rows dequantises W into the call scratch and runs the f32 kernels (knob q4deq; not with a
 * forced q4 kernel): the layout's side a multiple of 4 (the forward writes W^T (K, Nout), the transpose W (Nout, K)) and
 * its grid within the device's limits.
 */
export function q4Dequantises(
  device: GPUDevice,
  N: number,
  w: { Nout: number; K: number },
  transposedProduct: boolean,
  forced?: Q4Variant,
): boolean {
  const sw = perfSwitches().q4deq;
  if (sw === 0 || forced || (sw === 1 && N < Q4_DEQUANT_MIN_ROWS)) return false;
  // The forward reads W^T, the transposed product W.
  return dequantProblem(device, w, !transposedProduct) === undefined;
}

/** The call scratch bytes the q4 products of N rows over these weights take under the knob q4deq (0 where none dequantises). */
export function q4DequantScratchBytes(
  device: GPUDevice,
  N: number,
  weights: Iterable<{ Nout: number; K: number }>,
): number {
  let bytes = 0;
  for (const w of weights) {
    if (q4Dequantises(device, N, w, false) || q4Dequantises(device, N, w, true)) {
      bytes = Math.max(bytes, w.Nout * w.K * 4);
    }
  }
  return bytes;
}

/**
 * Records dequant(W) (W^T when `transposed`) into a scratch and then the f32 product `o` reading it as B (knob q4deq).
 * The weight goes to the call scratch, unless the product's split partials go there (wideSplitInCallScratch: a wide
 * split, wideSplit 5-8): then to the split scratch, which such a product leaves alone.
 */
async function encodeDequantised(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  w: Q4WeightGpu,
  transposed: boolean,
  a: GPUBuffer,
  c: GPUBuffer,
  o: EncodeMatmulOpts,
): Promise<void> {
  const bytes = w.Nout * w.K * 4;
  const S = splitKSlices(o);
  const wd = S > 1 && wideSplitInCallScratch(device, 4 * S * o.M * o.N)
    ? scratchBuffer(device, bytes)
    : sharedScratch(device, CALL_SCRATCH, bytes);
  await encodeQ4Dequant(device, enc, w, wd, transposed);
  await encodeMatmul(device, enc, a, wd, c, o);
}

/** Records y (N, Nout) (+)= x (N, K) @ dequant(W)^T (+ bias). */
export function encodeQ4Matmul(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  x: GPUBuffer,
  w: Q4WeightGpu,
  y: GPUBuffer,
  N: number,
  opts: Q4MatmulForwardOpts = {},
): Promise<void> {
  const constants = { ACCUMULATE: opts.accumulate ? 1 : 0, HAS_BIAS: opts.bias ? 1 : 0 };
  checkSizes("q4matmul", [["bias", opts.bias, w.Nout * 4]]);
  if (q4Dequantises(device, N, w, false, opts.variant)) {
    // W^T (K, Nout), then the f32 product as the f32 step runs it on its stored W^T (knob wT).
    return encodeDequantised(device, enc, w, true, x, y, {
      M: N,
      N: w.Nout,
      K: w.K,
      accumulate: opts.accumulate,
      bias: opts.bias,
      tail: opts.tail && { ...opts.tail, transB: true },
    });
  }
  const tail = opts.tail ? { ...opts.tail, transB: true, cols: "dims.Nout" } : undefined;
  return encode(device, enc, {
    name: "q4matmul",
    input: x,
    w,
    out: y,
    N,
    inCols: w.K,
    outCols: w.Nout,
    constants,
    extra: [opts.bias ?? placeholder(device)],
    forced: opts.variant,
    tail,
    step: opts.step,
  });
}

/** Records dx (N, K) (+)= dy (N, Nout) @ dequant(W), the gradient through a frozen q4 weight. */
export function encodeQ4MatmulTransposed(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  dy: GPUBuffer,
  w: Q4WeightGpu,
  dx: GPUBuffer,
  N: number,
  opts: Q4MatmulOpts = {},
): Promise<void> {
  if (q4Dequantises(device, N, w, true, opts.variant)) {
    // W (Nout, K), then the f32 product dy W as the f32 step runs it.
    return encodeDequantised(device, enc, w, false, dy, dx, {
      M: N,
      N: w.K,
      K: w.Nout,
      accumulate: opts.accumulate,
      tail: opts.tail,
    });
  }
  const tail = opts.tail ? { ...opts.tail, transB: false, cols: "dims.K" } : undefined;
  return encode(device, enc, {
    name: "q4matmul_t",
    input: dy,
    w,
    out: dx,
    N,
    inCols: w.Nout,
    outCols: w.K,
    constants: { ACCUMULATE: opts.accumulate ? 1 : 0 },
    extra: [],
    forced: opts.variant,
    tail,
    step: opts.step,
  });
}
