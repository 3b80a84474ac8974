// The matmul plan: for a product's shape and layout, the kernel it runs on, whether it runs transposed, its K slices,
// its Dims uniform and grid, its vec4 loads and stores and whether a LoRA tail runs inside it. Pure (no GPU): matmul.ts
// encodes what this decides. The kernels, split-K and the vec4 rules: docs/kernels.md, "Matmul".
import { perfSwitches } from "../switches.ts";

/** Options shared by the kernel and its reference. */
export interface MatmulOpts {
  M: number;
  N: number;
  K: number;
  transA?: boolean; // A stored (K, M)
  transB?: boolean; // B stored (N, K)
  alpha?: number;
}

/** The matmul kernels. */
export const MATMUL_VARIANTS = ["tile64", "tile96h", "narrow"] as const;
export type MatmulVariant = (typeof MATMUL_VARIANTS)[number];

/** A LoRA tail's operands (EncodeMatmulOpts.tail); the plan reads only their sizes. */
export interface TailOperands<Buf> {
  a: Buf;
  b: Buf;
  r: number;
  scale: number;
  transB?: boolean;
}

/** Options of encodeMatmul beyond the product's shape. */
export interface EncodeMatmulOpts extends MatmulOpts {
  accumulate?: boolean;
  /** (N) f32 added to every row of C after alpha and accumulate (the q/k/v biases). */
  bias?: GPUBuffer;
  /**
   * C also gets scale * a (M, r) op(b), b (N, r) when transB (the tail's own, else the product's), else (r, N): the
   * LoRA product, inside tile96h where tailFuses says so, else a second product after the bias. f32 operands.
   */
  tail?: TailOperands<GPUBuffer>;
  /** A (resp. B) holds f16 values (needs the device's shader-f16); products accumulate in f32. */
  aF16?: boolean;
  bF16?: boolean;
  /** Force a kernel (tests); otherwise pickMatmul decides. */
  variant?: MatmulVariant;
  /** Force tile96h's contracted step (tests; at most what the device's workgroup memory allows); otherwise the largest that fits. */
  step?: 8 | 16;
}

/** Widest side a product may have to go to the narrow kernel. */
export const NARROW_MAX = 32;

/** Contracted length at or under which a product runs on tile64 unless its LoRA tail would run inside tile96h. */
export const SHORT_K = 128;

/**
 * The kernel for a product, and whether it runs transposed (C^T = op(B)^T op(A)^T, stored back transposed): narrow sides
 * go to the narrow kernel, products whose sides both fill 128-wide tiles to tile96h (tile64 at a short K), the rest to
 * tile64.
 */
export function pickMatmul(o: EncodeMatmulOpts): { variant: MatmulVariant; swap: boolean } {
  if (o.variant) return { variant: o.variant, swap: o.variant === "narrow" && o.M < o.N && o.M <= NARROW_MAX };
  if (o.N <= NARROW_MAX) return { variant: "narrow", swap: false };
  if (o.M <= NARROW_MAX) return { variant: "narrow", swap: true };
  if (o.M >= 128 && o.N >= 128) {
    const tailInside = !!o.tail && !(o.transA ?? false) && (o.alpha ?? 1) === 1 && !o.aF16;
    if (o.K <= SHORT_K && !tailInside) return { variant: "tile64", swap: false };
    return { variant: "tile96h", swap: false };
  }
  return { variant: "tile64", swap: false };
}

/** Output tile (rows, columns) of each kernel. */
const TILE: Record<MatmulVariant, [number, number]> = { tile64: [64, 64], tile96h: [96, 128], narrow: [64, 16] };

/** Workgroups below which a long-K product is split (about two per multiprocessor of a big GPU). */
const SPLIT_TARGET_WORKGROUPS = 256;
/** Contracted length each split slice keeps at least. */
const SPLIT_MIN_K = 256;
/** Largest scratch buffer the split may use. */
export const SPLIT_MAX_BYTES = 64 * 2 ** 20;
/** Largest scratch buffer the knob wideSplit may use at 5 slices or more (8 slices of a 6144 x 896 output). */
const WIDE_SPLIT_MAX_BYTES = 192 * 2 ** 20;

/** The product a kernel runs: `o` itself, or its transpose when `swap`. */
function effective(o: EncodeMatmulOpts, swap: boolean): EncodeMatmulOpts {
  if (!swap) return o;
  return {
    ...o,
    M: o.N,
    N: o.M,
    transA: !(o.transB ?? false),
    transB: !(o.transA ?? false),
    aF16: o.bF16,
    bF16: o.aF16,
  };
}

/** Slices of K a product is split into (1: not split): products whose grid has fewer than half the target workgroups and a long K. */
export function splitKSlices(o: EncodeMatmulOpts): number {
  const pick = pickMatmul(o);
  return slicesOf(effective(o, pick.swap), pick.variant);
}

/** 128x128 tiles below which a product may be split by the knob `wideSplit` (a few waves of a big GPU's multiprocessors). */
export const WIDE_SPLIT_TILES = 512;

/**
 * K slices the knob `wideSplit` gives a tile product (f32 or q4) of `tiles` 128x128 tiles' area, contracted length K and
 * `outElems` outputs: none from WIDE_SPLIT_TILES tiles, no slice under SPLIT_MIN_K, no scratch over the byte caps.
 */
export function wideSplitSlices(tiles: number, K: number, outElems: number): number {
  const S = perfSwitches().wideSplit;
  if (S <= 1 || tiles >= WIDE_SPLIT_TILES) return 1;
  const cap = S >= 5 ? WIDE_SPLIT_MAX_BYTES : SPLIT_MAX_BYTES;
  return Math.max(1, Math.min(S, Math.floor(K / SPLIT_MIN_K), Math.floor(cap / (4 * outElems))));
}

function slicesOf(e: EncodeMatmulOpts, variant: MatmulVariant): number {
  const { M, N, K } = e;
  const [tm, tn] = TILE[variant];
  const tiles = Math.ceil(M / tm) * Math.ceil(N / tn);
  if (tiles >= SPLIT_TARGET_WORKGROUPS / 2) {
    // wideSplit counts the grid in 128x128 tiles' area (tile96h's 96-row tiles are 3/4 of one).
    return variant === "tile96h" ? wideSplitSlices(Math.ceil((tiles * tm * tn) / (128 * 128)), K, M * N) : 1;
  }
  // The narrow kernel's products (the LoRA rank products) under the knobs narrowWg / narrowMinK.
  const narrow = variant === "narrow";
  const byK = Math.floor(K / (narrow ? perfSwitches().narrowMinK : SPLIT_MIN_K));
  const byTiles = Math.ceil((narrow ? perfSwitches().narrowWg : SPLIT_TARGET_WORKGROUPS) / tiles);
  const byMemory = Math.floor(SPLIT_MAX_BYTES / (4 * M * N));
  return Math.max(1, Math.min(byK, byTiles, byMemory));
}

/** Workgroup bytes of the 128-column tile kernels (f32 and q4) at a contracted step of 16: two (16, 33) tiles of vec4. */
const T128_K16_BYTES = 2 * 16 * 33 * 16;

/** The tile kernels' contracted step on a device with `workgroupBytes` of workgroup memory: 16 where the tiles fit, else 8. */
export function tileStep(workgroupBytes: number): 8 | 16 {
  return workgroupBytes >= T128_K16_BYTES ? 16 : 8;
}

/** Which operands a tile dispatch loads as vec4. */
export interface VecLoads {
  a: boolean;
  b: boolean;
}

export const NO_VEC: VecLoads = { a: false, b: false };

/**
 * The operands of product `e` (Dims words `d`, bindings at byte offsets offA, offB) that load as vec4 along their
 * memory-fastest dimension: f32, offset on 16 bytes, split-K slice stride and rows a multiple of 4, and for a k-fastest operand
 * also the slices' ends (K, kTotal) so that no vec4 straddles the contracted range's end. A and B decide apart.
 */
function vecOperands(e: EncodeMatmulOpts, d: Uint32Array, offA: number, offB: number): VecLoads {
  const [M, N, K, , strideA, strideB, , kTotal] = d;
  const kFastest = K % 4 === 0 && (kTotal === 0 ? K : kTotal) % 4 === 0;
  return {
    a: !e.aF16 && offA % 16 === 0 && strideA % 4 === 0 && (e.transA ? M % 4 === 0 : kFastest),
    b: !e.bF16 && offB % 16 === 0 && strideB % 4 === 0 && (e.transB ? kFastest : N % 4 === 0),
  };
}

/** A product as encodeMatmulBindings dispatches it: the kernel, the product it runs (`e`, transposed when `swap`), its Dims and grid, and the vec4 loads. */
export interface MatmulPlan {
  variant: MatmulVariant;
  swap: boolean;
  e: EncodeMatmulOpts;
  /** K slices (1: not split). */
  slices: number;
  /** The Dims uniform's eight words. */
  dims: Uint32Array;
  grid: [number, number, number];
  vec: VecLoads;
  /** C stored as vec4 (tile96h, unswapped, aligned). */
  c4: boolean;
}

/** The plan of product `o` with its operands bound at byte offsets offsetA, offsetB and offsetC. */
export function planMatmul(o: EncodeMatmulOpts, offsetA: number, offsetB: number, offsetC = 0): MatmulPlan {
  const { variant, swap } = pickMatmul(o);
  const e = effective(o, swap);
  const [offA, offB] = swap ? [offsetB, offsetA] : [offsetA, offsetB];
  const S = slicesOf(e, variant);
  const { M, N, K, alpha = 1 } = e;
  const [tm, tn] = TILE[variant];
  const words = new ArrayBuffer(32);
  const u = new Uint32Array(words);
  let slices = 1;
  if (S > 1) {
    // Slice z of a k-major operand (A^T (K, M), B (K, N)) is contiguous: rows [z Kc, (z + 1) Kc);
    // of a k-fastest one (A (M, K), B^T (N, K)) it is columns [z Kc, (z + 1) Kc) of rows of K.
    const Kc = Math.ceil(K / S / 16) * 16;
    slices = Math.ceil(K / Kc);
    u.set([M, N, Kc]);
    new Float32Array(words)[3] = 1;
    u.set([e.transA ? Kc * M : Kc, e.transB ? Kc : Kc * N, M * N, K], 4);
  } else {
    u.set([M, N, K]);
    new Float32Array(words)[3] = alpha;
    u.set([M * K, K * N, M * N, 0], 4);
  }
  const tiled = variant === "tile96h";
  const vec = tiled ? vecOperands(e, u, offA, offB) : NO_VEC;
  // vec4 stores: rows and slice stride whole quads, the binding on 16 bytes (split: the scratch at offset 0).
  const c4 = tiled && !swap && N % 4 === 0 && u[6] % 4 === 0 && (slices > 1 ? 0 : offsetC) % 16 === 0;
  return { variant, swap, e, slices, dims: u, grid: [Math.ceil(N / tn), Math.ceil(M / tm), slices], vec, c4 };
}

/** Whether `o`'s tail runs inside its kernel (EncodeMatmulOpts.tail): tile96h not swapped, A not transposed, alpha 1. */
export function tailFuses(o: EncodeMatmulOpts, p: MatmulPlan): boolean {
  return p.variant === "tile96h" && !p.swap && !(o.transA ?? false) && (o.alpha ?? 1) === 1 && !o.aF16;
}

/** The layout of `o`'s tail b2: (N, r) when true, else (r, N); undefined without a tail. */
export function tailLayout(o: EncodeMatmulOpts): boolean | undefined {
  return o.tail ? (o.tail.transB ?? o.transB ?? false) : undefined;
}

/** Whether `e`'s LoRA tail loads quads: r a multiple of 4, both buffers whole quads, and for b2 (r, N) N too. */
export function quadTailFits(e: EncodeMatmulOpts, tailB: boolean | undefined): boolean {
  const t = e.tail;
  return !!t && t.r % 4 === 0 && t.a.size % 16 === 0 && t.b.size % 16 === 0 && (!!tailB || e.N % 4 === 0);
}

/** Whether encodeMatmul runs `o`'s tail inside its kernel (tests). */
export function tailFused(o: EncodeMatmulOpts): boolean {
  return !!o.tail && tailFuses(o, planMatmul(o, 0, 0));
}

/** Whether encodeMatmulBindings stores `o`'s C (bound at byte `offsetC`) as vec4 quads, for tests. */
export function storesVec4(o: EncodeMatmulOpts, offsetC = 0): boolean {
  return planMatmul(o, 0, 0, offsetC).c4;
}

/** The operands `o` loads as vec4 (in `o`'s own order, before any swap): what encodeMatmulBindings decides for it, for tests. */
export function vecLoads(o: EncodeMatmulOpts, offsetA = 0, offsetB = 0): VecLoads {
  const p = planMatmul(o, offsetA, offsetB);
  return p.swap ? { a: p.vec.b, b: p.vec.a } : p.vec;
}

/** Floating-point operations of one matmul, for throughput figures. */
export function matmulFlops(o: MatmulOpts): number {
  return 2 * o.M * o.N * o.K;
}
