// Wrappers of the q4 products, W in onnxruntime's MatMulNBits layout (4 bits, block 32): y = x @ dequant(W)^T and
// dx = dy @ dequant(W) on 64x64 tiles (q4matmul.wgsl) or 128x128 tiles (q4matmul_t128.wgsl, split-K as matmul.ts's),
// or, for many rows, W dequantised and the f32 kernels (knob q4deq). docs/kernels.md, "q4 matmul".
import { CALL_SCRATCH, computePipeline, dispatch, sharedScratch, storageBuffer, uniformBuffer } from "../device.ts";
import { perfSwitches } from "../switches.ts";
import { checkSizes, encodeKernel, unusedBinding } from "./layer-common.ts";
import {
  encodeMatmul,
  encodeSplitReduce,
  encodeTailProduct,
  scratchBuffer,
  t128Step,
  tailWords,
  wideSplitInCallScratch,
} from "./matmul.ts";
import { type EncodeMatmulOpts, SHORT_K, splitKSlices, wideSplitSlices } from "./matmul-plan.ts";
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

/** The q4 kernels. */
export const Q4_VARIANTS = ["tile64", "tile128"] as const;
export type Q4Variant = (typeof Q4_VARIANTS)[number];

/** Fewest 128x128 workgroups for tile128 (the k/v projections' forward, 6144 x 128, makes 48): a guess until measured. */
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

/** Output handling: overwrite (default) or add into the output buffer (a LoRA path, a residual gradient); `variant` forces a kernel (tests, benchmarks). */
export interface Q4MatmulOpts {
  accumulate?: boolean;
  variant?: Q4Variant;
  /** Force the 128-tile kernels' contracted step (tests; at most what the device's workgroup memory allows). */
  step?: 8 | 16;
  /**
   * Also add scale * a (N, r) op(b), the LoRA product (forward a = x A^T, b = B (Nout, r); transposed a = dy B,
   * b = A (r, K)): inside the 128-tile kernels, else as a second product after the product and its bias.
   */
  tail?: { a: GPUBuffer; b: GPUBuffer; r: number; scale: number };
}

/** Forward options: also a bias (Nout) f32 buffer added to every row (Qwen2's q/k/v projections). */
export interface Q4MatmulForwardOpts extends Q4MatmulOpts {
  bias?: GPUBuffer;
}

/** Rows of x from which a q4 product dequantises W whole and runs the f32 kernels under the knob q4deq=1 (2: any rows). */
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
  checkSizes("q4 dequant", [["output", out, w.Nout * w.K * 4], ["packed", w.packed, w.Nout * nb * 16]]);
  checkSizes("q4 dequant", [["scales", w.scales, w.Nout * nb * 4]]);
  const name = `q4-dequant${transposed ? "-t" : ""}`;
  const constants = { HAS_ZP: w.zeroPoints ? 1 : 0, TRANSPOSED: transposed ? 1 : 0 };
  const dims = new Uint32Array([w.Nout, w.K, nb, zpBytes]);
  const bind = [w.packed, w.scales, w.zeroPoints ?? unusedBinding(device), out, dims];
  await encodeKernel(device, enc, name, dequantSource, constants, bind, dequantGrid(w, transposed));
}

/**
 * Whether a q4 product of N rows dequantises W into the call scratch and runs the f32 kernels (knob q4deq; not with a
 * forced q4 kernel): the forward writes W^T (K, Nout), the transposed product W (Nout, K), which dequantProblem allows.
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
  return encodeQ4(device, enc, false, x, w, y, N, opts);
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
  return encodeQ4(device, enc, true, dy, w, dx, N, opts);
}

/**
 * Records out (N, outCols) (+)= input (N, inCols) through W: the forward (`trans` false: inCols K, outCols Nout) or the
 * transposed product. Where W is dequantised (q4Dequantises), into the call scratch, or the split scratch where the
 * product's split partials take the call scratch (wideSplitInCallScratch), then the f32 product reads it as B.
 */
async function encodeQ4(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  trans: boolean,
  input: GPUBuffer,
  w: Q4WeightGpu,
  out: GPUBuffer,
  N: number,
  opts: Q4MatmulForwardOpts,
): Promise<void> {
  const [inCols, outCols] = trans ? [w.Nout, w.K] : [w.K, w.Nout];
  const name = trans ? "q4matmul_t" : "q4matmul";
  const { nb, zpBytes } = q4Geometry(w.K);
  checkSizes(name, [["input", input, N * inCols * 4], ["output", out, N * outCols * 4]]);
  checkSizes(name, [["bias", opts.bias, w.Nout * 4], ["packed", w.packed, w.Nout * nb * 16]]);
  checkSizes(name, [["scales", w.scales, w.Nout * nb * 4]]);
  if (q4Dequantises(device, N, w, trans, opts.variant)) {
    // The forward reads W^T (K, Nout) as the f32 step reads its stored W^T (knob wT), the transposed product W.
    const tail = opts.tail && { ...opts.tail, transB: !trans };
    const o: EncodeMatmulOpts = { M: N, N: outCols, K: inCols, accumulate: opts.accumulate, bias: opts.bias, tail };
    const S = splitKSlices(o), bytes = w.Nout * w.K * 4;
    const wd = S > 1 && wideSplitInCallScratch(device, 4 * S * o.M * o.N)
      ? scratchBuffer(device, bytes)
      : sharedScratch(device, CALL_SCRATCH, bytes);
    await encodeQ4Dequant(device, enc, w, wd, !trans);
    return encodeMatmul(device, enc, input, wd, out, o);
  }
  const variant = pickQ4(N, outCols, opts.variant, inCols, !!opts.tail);
  const tile = variant === "tile128" ? 128 : 64;
  const tk = variant === "tile128" ? (opts.step ?? t128Step(device)) : 8;
  const grid = [Math.ceil(outCols / tile), Math.ceil(N / tile)] as const;
  // Split-K (the 128-tile kernels, knob wideSplit): slices of the contracted length in whole blocks of 32.
  const S = variant === "tile128" ? wideSplitSlices(grid[0] * grid[1], inCols, N * outCols) : 1;
  const kSlice = S > 1 ? Math.ceil(inCols / S / 32) * 32 : 0;
  const slices = S > 1 ? Math.ceil(inCols / kSlice) : 1;
  const split = slices > 1;
  // The LoRA tail on the 128-tile kernels: bindings 7-9 after the forward's bias (6), 6-8 in the transposed kernel.
  const t = opts.tail && q4TailFuses(N, outCols, opts.variant, inCols) ? opts.tail : undefined;
  const extra = trans ? [] : [opts.bias ?? unusedBinding(device)];
  const b0 = 6 + extra.length;
  const cols = trans ? "dims.K" : "dims.Nout";
  const body = variant === "tile128"
    ? q4TileBody(trans, tk, t && { bindings: [b0, b0 + 1, b0 + 2], rows: "dims.N", cols, transB: !trans })
    : expandKernel("q4matmul.wgsl", tile64Source, { TRANS: trans });
  const label = `${name}${variant === "tile128" ? `_t128${tk === 16 ? "_k16" : ""}` : ""}${t ? "_tail" : ""}`;
  const accumulate = opts.accumulate ? 1 : 0;
  const constants: Record<string, number> = trans
    ? { ACCUMULATE: accumulate }
    : { ACCUMULATE: accumulate, HAS_BIAS: opts.bias ? 1 : 0 };
  const pipeline = await computePipeline(device, label, `${commonSource}\n${body}`, {
    HAS_ZP: w.zeroPoints ? 1 : 0,
    ...constants,
    ...(split ? { ACCUMULATE: 0 } : {}),
  });
  const dims = uniformBuffer(
    device,
    `${name}-dims`,
    new Uint32Array([N, w.K, w.Nout, nb, zpBytes, split ? kSlice : 0, 0, 0]),
  );
  const tailBind = t ? [t.a, t.b, uniformBuffer(device, `${name}-tail`, tailWords(t))] : [];
  const target = split ? scratchBuffer(device, 4 * slices * N * outCols) : out;
  const bind = [input, w.packed, w.scales, w.zeroPoints ?? unusedBinding(device), target, dims, ...extra, ...tailBind];
  dispatch(device, enc, pipeline, bind, [...grid, slices]);
  if (split) await encodeSplitReduce(device, enc, target, out, N * outCols, slices, 1, accumulate === 1);
  if (opts.tail && !t) await encodeTailProduct(device, enc, opts.tail, { buffer: out }, N, outCols, !trans);
}
