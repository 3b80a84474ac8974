// Wrapper of the matmul kernels: C (b, M, N) = alpha * op(A) @ op(B), optionally accumulating into C.
// Three kernels share one contract (bindings, Dims, split-K convention):
//   tile64  matmul.wgsl         64x64 tiles, 4x4 per thread (the earlier kernel); f32 or f16 operands
//   tile128 matmul_t128.wgsl    128x128 tiles, 8x8 per thread; f32 or f16 operands
//   narrow  matmul_narrow.wgsl  64x16 tiles, for N <= 32 (and, transposed, M <= 32): LoRA rank products
//   tile128p matmul_t128p.wgsl  tile128 with the next step's loads in flight during the arithmetic
//   tile256 matmul_t256.wgsl    256x128 tiles (256 rows), 16x8 per thread: half the B tile loads per FMA
//                               (switch t256: the wide products tile128 would run)
//   tile128h matmul_t256.wgsl   128x128 tiles, 16x8 threads, 16x8 per thread: tile128's tile with tile256's inner loop
//                               (switch t128h: what tile128 would run)
//   tile96h matmul_t256.wgsl    96x128 tiles, 16x8 threads, 12x8 per thread (switch t96: what tile128h would run)
//   rank    matmul_rank.wgsl    the narrow kernel's products streamed for bandwidth (switch rank=stream; no tiles in
//                               workgroup memory, vec4 loads of the wide operand, no reduce pass but a small grid's)
// pickMatmul() chooses per shape; setMatmulKernel("tile64") (or RLVR_MATMUL=tile64 under Deno) keeps
// every product on the earlier kernel, "prefetch" puts tile128's products on tile128p, for A/B timing. f16 operands (frozen base weights stored
// as f16, state.ts) are widened to f32 in the tile loads of every kernel: sums are f32.
// Products with few output tiles and a long contracted dimension (the weight and LoRA gradients
// dW = dY^T X, where K is every token of the batch) are split along K: the slices run as the
// batches of one dispatch into a scratch buffer, and matmul_splitk_reduce.wgsl sums them into C.
import { CALL_SCRATCH, computePipeline, dispatch, existingScratch, retireBuffer, storageBuffer, uniformBuffer } from "../device.ts";
import { perfSwitches } from "../switches.ts";
import type { MatmulOpts } from "./matmul.ref.ts";
import source64 from "./matmul.wgsl" with { type: "text" };
import source128 from "./matmul_t128.wgsl" with { type: "text" };
import source128p from "./matmul_t128p.wgsl" with { type: "text" };
import source256 from "./matmul_t256.wgsl" with { type: "text" };
import sourceNarrow from "./matmul_narrow.wgsl" with { type: "text" };
import sourceRank from "./matmul_rank.wgsl" with { type: "text" };
import commonSource from "./matmul_common.wgsl" with { type: "text" };
import tailSource from "./matmul_tail.wgsl" with { type: "text" };
import tail256Source from "./matmul_tail256.wgsl" with { type: "text" };
import reduceSource from "./matmul_splitk_reduce.wgsl" with { type: "text" };

export type { MatmulOpts } from "./matmul.ref.ts";

/** The matmul kernels. */
export const MATMUL_VARIANTS = ["tile64", "tile128", "narrow", "tile128p", "rank", "tile256", "tile128h", "tile96h"] as const;
export type MatmulVariant = (typeof MATMUL_VARIANTS)[number];

/** Kernel policy: "auto" chooses per shape, "tile64" keeps every product on the earlier 64x64 kernel, "prefetch" is auto with tile128p for tile128. */
export type MatmulPolicy = "auto" | "tile64" | "prefetch";

/** The policy a string names ("auto" for anything else). */
export function matmulPolicyOf(s: string | undefined): MatmulPolicy {
  return s === "tile64" || s === "prefetch" ? s : "auto";
}

function envPolicy(): MatmulPolicy {
  const deno = (globalThis as { Deno?: { env: { get(k: string): string | undefined } } }).Deno;
  try {
    return matmulPolicyOf(deno?.env.get("RLVR_MATMUL"));
  } catch {
    return "auto"; // no --allow-env
  }
}

let policy: MatmulPolicy = envPolicy();

/** Sets the kernel policy for every later encodeMatmul (benchmarks A/B the kernels with it). */
export function setMatmulKernel(p: MatmulPolicy): void {
  policy = p;
}

/** The current kernel policy. */
export function matmulKernel(): MatmulPolicy {
  return policy;
}

/** Options of encodeMatmul beyond the product's shape. */
export interface EncodeMatmulOpts extends MatmulOpts {
  accumulate?: boolean;
  /**
   * (N) f32 added to every row of C after the rest (alpha, accumulate), unbatched products only: in the split-K
   * reduce where the product is split, else by a reduce-kernel pass of its own after it (the q/k/v biases).
   */
  bias?: GPUBuffer;
  /**
   * C also gets scale * a (M, r) op(b): b (N, r) when transB (the tail's own `transB`, else the product's), else (r, N) (the LoRA path's product: y += s (x A^T) B^T
   * forward, dx += s (dy B) A backward). Under the switch loraTail, where the product runs on tile128 unbatched, not
   * transposed, with A not transposed and alpha 1, as a tail of its kernel; otherwise (and by default) as a second
   * product accumulated into C after the product and its bias. f32 operands.
   */
  tail?: { a: GPUBuffer; b: GPUBuffer; r: number; scale: number; transB?: boolean };
  /** A (resp. B) holds f16 values (needs the device's shader-f16); products accumulate in f32. */
  aF16?: boolean;
  bF16?: boolean;
  /** Force a kernel (tests); otherwise pickMatmul decides. */
  variant?: MatmulVariant;
}

/** Widest side a product may have to go to the narrow kernel. */
const NARROW_MAX = 32;

/**
 * Contracted length at or under which a product with both sides >= 128 runs on tile64 rather than tile128: on the H200
 * (2026-12-04, docs/benchmarks.md) the k/v dx (6144 x 896 x 128) ran at 19.5 TFLOP/s on tile64 against 15.4 on tile128
 * (q4: 21.5 against 15.4, q4matmul.ts), and a LoRA tail product (6144 x 4864 x 16) at 6.8 against 5.6. Not where a LoRA
 * tail would run inside tile128 (switch loraTail): tile64 would add the tail's own pass over C, untimed against it.
 */
export const SHORT_K = 128;

/**
 * The kernel for a product, and whether it runs transposed (C^T = op(B)^T op(A)^T, stored back
 * transposed): narrow sides go to the narrow kernel, or to the rank kernel under the switch rank=stream
 * (rows transposed into columns) and, under rank=xa, only x A^T (N <= 32, B transposed, A not, M wide) goes to the
 * rank kernel; products whose sides both fill 128-wide tiles go to tile128, the rest to tile64.
 */
export function pickMatmul(o: EncodeMatmulOpts): { variant: MatmulVariant; swap: boolean } {
  if (o.variant) return { variant: o.variant, swap: (o.variant === "narrow" || o.variant === "rank") && o.M < o.N && o.M <= NARROW_MAX };
  if (policy === "tile64") return { variant: "tile64", swap: false };
  const rankSwitch = perfSwitches().rank;
  const narrow = rankSwitch === "stream" ? "rank" : "narrow";
  if (o.N <= NARROW_MAX) {
    const xa = rankSwitch === "xa" && (o.transB ?? false) && !(o.transA ?? false) && o.M > NARROW_MAX;
    return { variant: xa ? "rank" : narrow, swap: false };
  }
  if (o.M <= NARROW_MAX) return { variant: narrow, swap: true };
  if (o.M >= 128 && o.N >= 128) {
    const tailInside = !!o.tail && perfSwitches().loraTail === 1 && !(o.transA ?? false) && (o.alpha ?? 1) === 1 && !o.aF16;
    if (o.K <= SHORT_K && !tailInside) return { variant: "tile64", swap: false };
    if (policy === "prefetch") return { variant: "tile128p", swap: false };
    const wide = perfSwitches().t256 === 1 && (o.batch ?? 1) === 1 && Math.ceil(o.M / 256) * Math.ceil(o.N / 128) >= T256_MIN_TILES;
    return { variant: wide ? "tile256" : tileKernel(), swap: false };
  }
  return { variant: "tile64", swap: false };
}

/**
 * Fewest 256x128 tiles for tile256 under the switch t256: it holds one workgroup per multiprocessor on the H200
 * (~180 registers a thread, bench/vkstats), so a small grid idles most of the GPU. 2026-12-04 (docs/benchmarks.md): the 896-wide products at 6,144 rows (168 tiles) ran slower than tile128 (q/o 21.2 against 23.2
 * TFLOP/s, down 22.1 against 29.1 split 3), the 1152-wide q+k+v (216 tiles) faster (26.7 against 22.6).
 */
export const T256_MIN_TILES = 192;

/** The kernel the f32 products with both sides >= 128 run on under the current switches (t128h, t96): tile128h, tile96h or tile128. */
export function tileKernel(): "tile128" | "tile128h" | "tile96h" {
  const s = perfSwitches();
  return s.t128h === 1 ? (s.t96 === 1 ? "tile96h" : "tile128h") : "tile128";
}

/** Output tile (rows, columns) of each kernel. */
const TILE: Record<MatmulVariant, [number, number]> = { tile64: [64, 64], tile128: [128, 128], narrow: [64, 16], tile128p: [128, 128], rank: [16, 16], tile256: [256, 128], tile128h: [128, 128], tile96h: [96, 128] };

/** Workgroups below which a long-K product is split (about two per multiprocessor of a big GPU). */
const SPLIT_TARGET_WORKGROUPS = 256;
/** Contracted length each split slice keeps at least. */
const SPLIT_MIN_K = 256;
/** Largest scratch buffer the split may use. */
const SPLIT_MAX_BYTES = 64 * 2 ** 20;
/** Largest scratch buffer the switch wideSplit may use at 5 slices or more (experimental: up to 8 slices of a 6144 x 896 output). */
const WIDE_SPLIT_MAX_BYTES = 192 * 2 ** 20;

const scratch = new WeakMap<GPUDevice, GPUBuffer>();

/** One grow-only scratch buffer per device; passes run in queue order, so every split reuses it (q4matmul.ts's too). */
export function scratchBuffer(device: GPUDevice, bytes: number): GPUBuffer {
  let buf = scratch.get(device);
  if (!buf || buf.size < bytes) {
    // Passes recorded but not yet submitted may still use the old one: destroy it later.
    if (buf) retireBuffer(device, buf);
    buf = storageBuffer(device, "matmul-splitk-scratch", bytes);
    scratch.set(device, buf);
  }
  return buf;
}

/**
 * Whether a split product's partials of `bytes` go to the call scratch (device.ts CALL_SCRATCH: the attention backward's
 * dq partials, 275 MB at the 0.5B step, idle between calls) rather than the split scratch: a wide split's (over
 * SPLIT_MAX_BYTES: wideSplit 5-8) where that scratch already holds them. Then the split scratch never grows past
 * SPLIT_MAX_BYTES for them (wideSplit=7 added 147 MiB to the 0.5B step's peak, which the recomputed step, held to 3 GB,
 * could not take). A q4 product that dequantises its weight (switch q4deq) asks first and puts the weight in the other one.
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

/** The product a kernel runs: `o` itself, or its transpose when `swap`. */
function effective(o: EncodeMatmulOpts, swap: boolean): EncodeMatmulOpts {
  if (!swap) return o;
  return {
    ...o, M: o.N, N: o.M, transA: !(o.transB ?? false), transB: !(o.transA ?? false),
    broadcastA: o.broadcastB, broadcastB: o.broadcastA, aF16: o.bF16, bF16: o.aF16,
  };
}

/**
 * Slices of K a product is split into (1: not split): unbatched products whose grid has fewer than
 * half the target workgroups and a long K; any transpose (switch `splitK: "general"`: the rank-16
 * products x A^T and dy B, the k/v projections), or only transposed-A, plain-B ones (`"transA"`,
 * earlier: the weight gradients), after the narrow kernel's transpose.
 */
export function splitKSlices(o: EncodeMatmulOpts): number {
  const pick = pickMatmul(o);
  return slicesOf(effective(o, pick.swap), pick.variant);
}

/** 128x128 tiles below which a product may be split by the switch `wideSplit` (a few waves of a big GPU's multiprocessors). */
export const WIDE_SPLIT_TILES = 512;

/**
 * K slices the switch `wideSplit` gives a product on 128x128 tiles with `tiles` output tiles, contracted length K and an
 * (M x N =) `outElems` output: 1 unless the grid is under WIDE_SPLIT_TILES tiles; never slices under SPLIT_MIN_K long or a
 * scratch over SPLIT_MAX_BYTES (WIDE_SPLIT_MAX_BYTES at 5 slices or more). Shared by the f32 128-tile kernels and q4matmul.ts's.
 */
export function wideSplitSlices(tiles: number, K: number, outElems: number): number {
  const S = perfSwitches().wideSplit;
  if (S <= 1 || tiles >= WIDE_SPLIT_TILES) return 1;
  const cap = S >= 5 ? WIDE_SPLIT_MAX_BYTES : SPLIT_MAX_BYTES;
  return Math.max(1, Math.min(S, Math.floor(K / SPLIT_MIN_K), Math.floor(cap / (4 * outElems))));
}

function slicesOf(e: EncodeMatmulOpts, variant: MatmulVariant): number {
  const { M, N, K, batch = 1, transA = false, transB = false } = e;
  if (batch !== 1) return 1;
  // The rank kernel's rows form has a workgroup per 16 rows (8 where r > 16): never split.
  if (variant === "rank" && !transA) return 1;
  const [tm, tn] = variant === "rank" ? [16, 4 * rankShape(e).nq] : TILE[variant];
  const tiles = Math.ceil(M / tm) * Math.ceil(N / tn);
  if (tiles >= SPLIT_TARGET_WORKGROUPS / 2) {
    // wideSplit counts the grid in 128x128 tiles' area (tile96h's 96-row tiles are 3/4 of one).
    const wide = variant === "tile128" || variant === "tile128p" || variant === "tile128h" || variant === "tile96h";
    return wide ? wideSplitSlices(Math.ceil((tiles * tm * tn) / (128 * 128)), K, M * N) : 1;
  }
  if (perfSwitches().splitK === "transA" && (!transA || transB)) return 1;
  // The narrow kernel's products (the LoRA rank products) under the switches narrowWg / narrowMinK (1024 / 128 by default).
  const narrow = variant === "narrow";
  const byK = Math.floor(K / (narrow ? perfSwitches().narrowMinK : SPLIT_MIN_K));
  const byTiles = Math.ceil((narrow ? perfSwitches().narrowWg : SPLIT_TARGET_WORKGROUPS) / tiles);
  const byMemory = Math.floor(SPLIT_MAX_BYTES / (4 * M * N));
  return Math.max(1, Math.min(byK, byTiles, byMemory));
}

/**
 * How the rank kernel (matmul_rank.wgsl) runs the product `e` (after any swap): the entry point by A's layout ("rows": A
 * (M, K), "cols": A^T stored (K, M)), its vec4 columns of C per workgroup (nq: r / 4 rounded up, at most 8 in rows, 4 in
 * cols; wider products run in column blocks) and rows per thread (rpt: 4, 2 where nq > 4), so at most 16 vec4 sums per thread.
 */
export function rankShape(e: { N: number; transA?: boolean }): { form: "rows" | "cols"; nq: number; rpt: number } {
  const form = e.transA ? "cols" : "rows";
  const q = Math.ceil(Math.min(e.N, NARROW_MAX) / 4);
  const nq = form === "cols" ? Math.min(q, 4) : e.N > NARROW_MAX ? 4 : q;
  return { form, nq, rpt: nq > 4 ? 2 : 4 };
}

/** Whether the rank kernel adds its lanes with subgroup shuffles on `device` (its `subgroups` feature and the switch), else through workgroup memory. */
export function rankSubgroups(device: GPUDevice): boolean {
  return perfSwitches().subgroups && device.features.has("subgroups");
}

/** The rank kernel's lane sum, (v0 + v1) + (v2 + v3) over the four lanes of t / 4: subgroup shuffles, or matmul_rank.wgsl's laneSumShared. */
function rankLanes(sg: boolean): string {
  return sg
    ? "fn laneSum(v: vec4f, t: u32) -> vec4f {\n  let p = v + subgroupShuffleXor(v, 1u);\n  return p + subgroupShuffleXor(p, 2u);\n}\n"
    : "fn laneSum(v: vec4f, t: u32) -> vec4f { return laneSumShared(v, t); }\n";
}

/** Workgroup bytes of the 128-tile kernels (f32 and q4) at a contracted step of 16: two (16, 33) tiles of vec4. */
export const T128_K16_BYTES = 2 * 16 * 33 * 16;

/** Workgroup bytes of the f32 128-tile kernel at a contracted step of 32: two (32, 32) tiles of vec4 (rows unpadded). */
export const T128_K32_BYTES = 2 * 32 * 32 * 16;

/**
 * The 128-tile kernels' contracted step on `device`: `want` (default the switch tk), else the largest smaller step whose
 * tiles fit the device's workgroup memory (32 is the f32 kernel's only; the q4 kernels ask for 8 or 16).
 */
export function t128Step(device: GPUDevice, want: 8 | 16 | 32 = perfSwitches().tk): 8 | 16 | 32 {
  const room = device.limits.maxComputeWorkgroupStorageSize;
  if (want === 32 && room >= T128_K32_BYTES) return 32;
  return want >= 16 && room >= T128_K16_BYTES ? 16 : 8;
}

/** Workgroup bytes of the 256x128-tile kernel at a contracted step of 16: a (16, 65) and a (16, 33) tile of vec4. */
export const T256_K16_BYTES = 16 * (65 + 33) * 16;

/** matmul_t256.wgsl as tile128h: 128-row tiles, 16x8 threads. Exported for bench/ladder.bench.ts. */
export function halfThreads(source: string): string {
  let out = source.replace("const TM: u32 = 256u;", "const TM: u32 = 128u;").replace("const TY: u32 = 16u;", "const TY: u32 = 8u;");
  if (!out.includes("const TM: u32 = 128u;") || !out.includes("const TY: u32 = 8u;")) throw new Error("matmul_t256.wgsl: no TM / TY line to substitute");
  // At a step of 32 (withStep made TSV 32) A's rows go unpadded too: two (32, 32) tiles of vec4 fill 32 KiB exactly.
  if (out.includes("const TK: u32 = 32u;")) {
    const padded = out;
    out = out.replace("const TSVA: u32 = TM / 4u + 1u;", "const TSVA: u32 = TM / 4u;");
    if (out === padded) throw new Error("matmul_t256.wgsl: no TSVA line to substitute for a step of 32");
  }
  return out;
}

/**
 * tile128h's text (halfThreads, with its LoRA tail where it has one) as tile96h (switch t96): 96-row tiles, the 16 x 8
 * block's last row group (accumulators r12 .. r15, the tile read a3, the store rows m3) taken out, a 12 x 8 block a
 * thread. At a step of 8 the A tile's 192 quads do not split evenly over 128 threads: the last round of loads is guarded.
 */
export function rows96(text: string): string {
  let out = replaceExactly(text, "const TM: u32 = 128u;", "const TM: u32 = 96u;", 1, "matmul_t256.wgsl", "switch t96");
  if (out.includes("const TK: u32 = 8u;")) {
    out = replaceExactly(out, "const QA: u32 = TM * TK / (4u * NT);", "const QA: u32 = (TM * TK / 4u + NT - 1u) / NT;", 1, "matmul_t256.wgsl", "switch t96");
    out = replaceExactly(out, "for (var j = 0u; j < QA; j++) { storeA(tid + j * NT, fetchA(baseA, row0, k0, kEnd, tid + j * NT)); }",
      "for (var j = 0u; j < QA; j++) { if (tid + j * NT < TM * TK / 4u) { storeA(tid + j * NT, fetchA(baseA, row0, k0, kEnd, tid + j * NT)); } }", 1, "matmul_t256.wgsl", "switch t96");
  }
  // The main loop's and the tail's a3 lines (1 or 2), each with its four fma lines; 4 accumulator lines; m3 and its 4 store lines.
  const tails = out.includes("const TAIL_TRANS_B") ? 2 : 1;
  return withoutRowGroup3(out, 4 + 5 * tails + 5);
}

/**
 * `text` without the 16 x 8 block's fourth row group (rows96): every line (comments kept) naming its accumulators
 * r12 .. r15, its tile read a3 or its store row m3. Exactly `count` lines must go, else an error (a kernel text that
 * changed under the transform).
 */
function withoutRowGroup3(text: string, count: number): string {
  const lines = text.split("\n");
  const kept = lines.filter((l) => l.trimStart().startsWith("//") || !/\br1[2-5][lr]\b|let a3 = |let m3 = /.test(l));
  if (lines.length - kept.length !== count) throw new Error(`matmul_t256.wgsl: switch t96 took out ${lines.length - kept.length} lines, not ${count}`);
  return kept.join("\n");
}

/** The 256x128-tile kernel's contracted step on `device`: 16 where the switch tk asks for 16 or more and its tiles fit, else 8. */
export function t256Step(device: GPUDevice): 8 | 16 {
  return perfSwitches().tk >= 16 && device.limits.maxComputeWorkgroupStorageSize >= T256_K16_BYTES ? 16 : 8;
}

/**
 * `source` (a 128-tile kernel with the line `const TK: u32 = 8u;`) at a contracted step of `tk`; at 32 also its line
 * `const TSV: u32 = 33u;` becomes 32 (unpadded rows: the tiles fill 32 KiB exactly, the limit of many devices).
 */
export function withStep(source: string, tk: 8 | 16 | 32, name: string): string {
  if (tk === 8) return source;
  let out = source.replace("const TK: u32 = 8u;", `const TK: u32 = ${tk}u;`);
  if (out === source) throw new Error(`${name}: no TK line to substitute`);
  if (tk === 32) {
    const padded = out;
    out = out.replace("const TSV: u32 = 33u;", "const TSV: u32 = 32u;");
    if (out === padded) throw new Error(`${name}: no TSV line to substitute for a step of 32`);
  }
  return out;
}

/** `text` with each of the `count` occurrences of `from` replaced by `to`; throws naming `name` and `why` unless there are exactly `count`. */
export function replaceExactly(text: string, from: string, to: string, count: number, name: string, why: string): string {
  const parts = text.split(from);
  if (parts.length !== count + 1) throw new Error(`${name}: '${from.trim().split("\n")[0]}' ${parts.length - 1} times, expected ${count} (${why})`);
  return parts.join(to);
}

/** A 128-tile kernel's `source` with its main loop's arithmetic (the one `for (var kk ...)` block before the step's closing barrier) replaced by `loop`. */
export function withMainLoop(source: string, loop: string, name: string, why: string): string {
  const head = "    for (var kk = 0u; kk < TK; kk++) {";
  const start = source.indexOf(head);
  const end = source.indexOf("\n    }\n    workgroupBarrier();\n  }\n", start);
  if (start < 0 || end < 0 || source.indexOf(head, start + 1) >= 0) throw new Error(`${name}: no single main-loop arithmetic to replace (${why})`);
  return source.slice(0, start) + loop + source.slice(end + "\n    }".length);
}

/**
 * The main loop's arithmetic over an A tile kept k-fastest (element k of tile row m at tileA[m * TSKA + k / 4][k % 4];
 * switch ka): per group of four contracted steps a thread reads B's eight vec4 (two a step, as the default
 * loops), then for accumulator pair i (r{i}l, r{i}r) one vec4 of A, row 4 ty + rows[i] of the tile (a WGSL expression),
 * holding the row's four steps, and its eight fmas. Every accumulator takes the default loop's fmas in the same order.
 */
export function kFastLoop(rows: readonly string[]): string {
  const lines = [
    "    for (var kg = 0u; kg < TK / 4u; kg++) {",
    "      let kb = 4u * kg * TSV;",
    "      let b00 = tileB[kb + tx]; let b01 = tileB[kb + TSV + tx]; let b02 = tileB[kb + 2u * TSV + tx]; let b03 = tileB[kb + 3u * TSV + tx];",
    "      let b10 = tileB[kb + 16u + tx]; let b11 = tileB[kb + TSV + 16u + tx]; let b12 = tileB[kb + 2u * TSV + 16u + tx]; let b13 = tileB[kb + 3u * TSV + 16u + tx];",
    "      let ra = 4u * ty * TSKA + kg;",
  ];
  rows.forEach((row, i) => {
    const at = row === "0u" ? "ra" : row === "1u" ? "ra + TSKA" : /^\d+u$/.test(row) ? `ra + ${row} * TSKA` : `ra + (${row}) * TSKA`;
    lines.push(`      let a${i} = tileA[${at}];`);
    ["x", "y", "z", "w"].forEach((c, j) => lines.push(`      r${i}l = fma(vec4f(a${i}.${c}), b0${j}, r${i}l); r${i}r = fma(vec4f(a${i}.${c}), b1${j}, r${i}r);`));
  });
  lines.push("    }");
  return lines.join("\n");
}

/** Workgroup bytes of matmul_t256.wgsl under the switch ka at `tm` tile rows and contracted step `tk`: A's tile (tm, tk / 4 + 1) of vec4 (or the default layout's (tk, tm / 4 + 1) where larger: the LoRA tail still uses it), B's (tk, 33). */
export function kFastABytes(tm: number, tk: number): number {
  return 16 * (Math.max(tm * (tk / 4 + 1), tk * (tm / 4 + 1)) + tk * 33);
}

/**
 * Switch ka: `source` (matmul_t256.wgsl after withStep / halfThreads, before withTail) with A's tile k-fastest in
 * workgroup memory for an A that is (M, K) in memory (not transposed): storeA writes each quad as one vec4 to row m's
 * slot k / 4, and the main loop's arithmetic is kFastLoop's (the same fmas in the same order: bitwise the same sums). Only for a kernel compiled with TRANS_A false; the LoRA tail keeps its own layout in
 * the same array (sized for both).
 */
export function withKFastA(source: string, name: string): string {
  let out = replaceExactly(source, "var<workgroup> tileA: array<vec4f, TK * TSVA>;", "const TSKA: u32 = TK / 4u + 1u; // row stride in vec4 of A's k-fastest tile (switch ka)\nvar<workgroup> tileA: array<vec4f, max(TK * TSVA, TM * TSKA)>;", 1, name, "switch ka");
  out = replaceExactly(out, "  let t = 4u * (q % (TK / 4u)) * TSVA + mm / 4u; let l = mm % 4u;\n  tileA[t][l] = v.x; tileA[t + TSVA][l] = v.y; tileA[t + 2u * TSVA][l] = v.z; tileA[t + 3u * TSVA][l] = v.w;\n", "  tileA[mm * TSKA + (q % (TK / 4u))] = v;\n", 1, name, "switch ka");
  // The 16x8 block's rows 32 g + 4 ty + i: accumulator pair 4 g + i.
  const rows = [0, 1, 2, 3].flatMap((g) => [0, 1, 2, 3].map((i) => (g === 0 ? `${i}u` : `${4 * g}u * TY${i ? ` + ${i}u` : ""}`)));
  return withMainLoop(out, kFastLoop(rows), name, "switch ka");
}

/**
 * Operand X's ("A" or "B", binding x) part of a kernel's prelude (matmul_common.wgsl describes it): the binding's element
 * type, elemX (one element as f32), quadX (four as a vec4f) and VEC_X. The kernels read X through them only, so either
 * form of the binding compiles with the same kernel text; only matmul_t128.wgsl calls quadX (under VEC_X).
 */
function operandPrelude(X: "A" | "B", f16: boolean, vec: boolean): string {
  const x = X.toLowerCase();
  if (vec) {
    return `alias ${X}Elem = vec4f;\nconst VEC_${X}: bool = true;\n` +
      `fn elem${X}(i: u32) -> f32 { return ${x}[i / 4u][i % 4u]; }\nfn quad${X}(q: u32) -> vec4f { return ${x}[q]; }\n`;
  }
  return `alias ${X}Elem = ${f16 ? "f16" : "f32"};\nconst VEC_${X}: bool = false;\nfn elem${X}(i: u32) -> f32 { return f32(${x}[i]); }\n` +
    `fn quad${X}(q: u32) -> vec4f { return vec4f(elem${X}(4u * q), elem${X}(4u * q + 1u), elem${X}(4u * q + 2u), elem${X}(4u * q + 3u)); }\n`;
}

/** Where a 128-tile kernel takes matmul_tail.wgsl (the line is a comment otherwise). */
const TAIL_MARK = "  // TAIL: matmul_tail.wgsl goes here under the switch loraTail (matmul.ts withTail).";

/** The same line in matmul_t256.wgsl, where matmul_tail256.wgsl goes. */
const TAIL256_MARK = "  // TAIL256: matmul_tail256.wgsl goes here under the switch loraTail (matmul.ts withTail).";

/**
 * `source` (a 128-tile kernel with the TAIL line: matmul_t128.wgsl, q4matmul_t128.wgsl, q4matmul_t_t128.wgsl; or
 * matmul_t256.wgsl with its TAIL256 line) with the LoRA tail (EncodeMatmulOpts.tail): the block of matmul_tail.wgsl
 * (matmul_tail256.wgsl) at that line and, before the kernel, its bindings
 * (`bindings`: a2, b2, the Tail uniform), B2's layout (`transB`: (cols, r), else (r, cols)) and the loads bounded by
 * the kernel's output `rows` and `cols` (WGSL expressions over its Dims).
 */
export function withTail(source: string, o: { bindings: readonly [number, number, number]; rows: string; cols: string; transB: boolean; quads?: boolean }, name: string): string {
  const tall = source.includes(TAIL256_MARK);
  if (!tall && !source.includes(TAIL_MARK)) throw new Error(`${name}: no TAIL line for the LoRA tail`);
  if (o.quads && tall) return quadTailPrelude(o) + source.replace(TAIL256_MARK, quadTail(name));
  const prelude = `${tailBindings(o, false)}fn tailA(m: u32, j: u32) -> f32 {
  if (m >= ${o.rows} || j >= tail.r) { return 0.0; }
  return tail.scale * a2[m * tail.r + j];
}
fn tailB(j: u32, n: u32) -> f32 {
  if (n >= ${o.cols} || j >= tail.r) { return 0.0; }
  if (TAIL_TRANS_B) { return b2[n * tail.r + j]; }
  return b2[j * ${o.cols} + n];
}
`;
  return prelude + (tall ? source.replace(TAIL256_MARK, tail256Source) : source.replace(TAIL_MARK, tailSource));
}

/** A kernel's full source: the operand prelude (element types: WGSL has no type-valued override constants), matmul_common.wgsl, the kernel. */
export function typedSource(body: string, aF16: boolean, bF16: boolean, vec: VecLoads = NO_VEC): string {
  return `${aF16 || bF16 ? "enable f16;\n" : ""}${operandPrelude("A", aF16, vec.a)}${operandPrelude("B", bF16, vec.b)}${commonSource}\n${body}`;
}

const STORE4_SCALAR = `fn store4(baseC: u32, m: u32, n: u32, v: vec4f) {
  if (m >= dims.M) { return; }
  for (var q = 0u; q < 4u; q++) {
    let col = n + q;
    if (col < dims.N) {
      let idx = baseC + m * dims.N + col;
      var x = dims.alpha * v[q];
      if (ACCUMULATE) { x += c[idx]; }
      c[idx] = x;
    }
  }
}`;
const STORE4_VEC = `fn store4(baseC: u32, m: u32, n: u32, v: vec4f) {
  if (m >= dims.M || n >= dims.N) { return; }
  let idx = (baseC + m * dims.N + n) / 4u;
  var x = dims.alpha * v;
  if (ACCUMULATE) { x += c[idx]; }
  c[idx] = x;
}`;

/**
 * Switch st4: a tile kernel's full source with C bound as vec4 and its epilogue's store4 writing a row quad as one vec4
 * (the caller checks vecC: N a multiple of 4, C's binding on 16 bytes; n is then a multiple of 4 too, so n < N puts the
 * whole quad inside the row). alpha and the accumulation act per element as in the scalar store4: bitwise the same C.
 */
export function withVecC(text: string, what: string): string {
  const out = replaceExactly(text, "var<storage, read_write> c: array<f32>;", "var<storage, read_write> c: array<vec4f>;", 1, what, "switch st4");
  return replaceExactly(out, STORE4_SCALAR, STORE4_VEC, 1, what, "switch st4");
}

/** The 128-column tile kernels (tile128, tile256, tile128h, tile96h): the ones with vec4 loads (vload), the LoRA tail inside, vec4 stores (st4). */
function tiled(v: MatmulVariant): boolean {
  return v === "tile128" || v === "tile256" || v === "tile128h" || v === "tile96h";
}

/** Whether a tile kernel's C (row length N, batch stride `strideC`, binding offset `offsetC` in bytes) takes vec4 stores (switch st4). */
export function vecC(N: number, strideC: number, offsetC: number): boolean {
  return perfSwitches().st4 >= 1 && N % 4 === 0 && strideC % 4 === 0 && offsetC % 16 === 0;
}

/** Which operands a tile128 dispatch loads as vec4 (switch vload; matmul_t128.wgsl). */
export interface VecLoads {
  a: boolean;
  b: boolean;
}

const NO_VEC: VecLoads = { a: false, b: false };

/** What vecOperands decides on: one dispatch's Dims fields, its operands' transposes and element types, and the byte offsets of their bindings. */
export interface LoadLayout {
  M: number;
  N: number;
  /** The batch's (slice's) contracted length, and the whole length when split (kTotal, else 0). */
  K: number;
  kTotal: number;
  strideA: number;
  strideB: number;
  transA: boolean;
  transB: boolean;
  aF16: boolean;
  bF16: boolean;
  offsetA: number;
  offsetB: number;
}

/**
 * The operands of a dispatch of matmul_t128.wgsl that can load as vec4 along their memory-fastest dimension (A: k, or m
 * when transposed; B: n, or k when transposed): f32 elements, binding offsets on 16 bytes, batch strides and rows along
 * that dimension a multiple of 4 elements (then every vec4 starts on a multiple of 4 and lies wholly inside or outside the
 * valid rows; the tile edges, TS = 128 and TK = 8 or 16, are multiples of 4 too). A k-fastest operand also needs its slices'
 * ends (K, and kTotal - z K of split-K) on a multiple of 4, so that no vec4 straddles the end of the contracted range: K and
 * kTotal a multiple of 4; a slice that would end mid-vec4 is refused (the scalar loads run) rather than masked per component.
 * A and B decide separately (four pipelines: neither, A, B, both): the conditions differ per operand — a k-major operand
 * needs nothing of K, an odd K leaves the other operand's vec4 — and the frozen weights may be f16 beside f32 activations.
 */
export function vecOperands(l: LoadLayout): VecLoads {
  const rowK = l.kTotal === 0 ? l.K : l.kTotal;
  const kFastest = l.K % 4 === 0 && rowK % 4 === 0;
  return {
    a: !l.aF16 && l.offsetA % 16 === 0 && l.strideA % 4 === 0 && (l.transA ? l.M % 4 === 0 : kFastest),
    b: !l.bF16 && l.offsetB % 16 === 0 && l.strideB % 4 === 0 && (l.transB ? kFastest : l.N % 4 === 0),
  };
}

/** The LoRA tail's bindings (a2, b2 of f32, or of vec4 under the switch tq; the Tail uniform) and its b2 layout constant. */
function tailBindings(o: { bindings: readonly [number, number, number]; transB: boolean }, quads: boolean): string {
  const [ba, bb, bu] = o.bindings;
  const t = quads ? "vec4f" : "f32";
  return `struct Tail { r: u32, scale: f32, _pad0: u32, _pad1: u32 }
@group(0) @binding(${ba}) var<storage, read> a2: array<${t}>; // (rows, r)${quads ? ", quads along r (switch tq)" : ""}
@group(0) @binding(${bb}) var<storage, read> b2: array<${t}>; // (cols, r) when TAIL_TRANS_B, else (r, cols)${quads ? ": quads along the fastest side" : ""}
@group(0) @binding(${bu}) var<uniform> tail: Tail;
const TAIL_TRANS_B: bool = ${o.transB};
`;
}

/**
 * Switch tq: matmul_tail256.wgsl's bindings as vec4 (a2 (rows, r) and b2 (cols, r) or (r, cols), each in quads along its
 * memory-fastest side; the caller checks r % 4 == 0 and, for b2 (r, cols), cols % 4 == 0) with quad loaders: zeros
 * outside rows / cols / r, as tailA / tailB give per element, scale times a2's quad (the same products, elementwise).
 */
function quadTailPrelude(o: { bindings: readonly [number, number, number]; rows: string; cols: string; transB: boolean }): string {
  return `${tailBindings(o, true)}fn tailA4(m: u32, j: u32) -> vec4f {
  if (m >= ${o.rows} || j >= tail.r) { return vec4f(0.0); }
  return tail.scale * a2[(m * tail.r + j) / 4u];
}
fn tailB4(j: u32, n: u32) -> vec4f {
  if (n >= ${o.cols} || j >= tail.r) { return vec4f(0.0); }
  if (TAIL_TRANS_B) { return b2[(n * tail.r + j) / 4u]; }
  return b2[(j * ${o.cols} + n) / 4u];
}
`;
}

/**
 * matmul_tail256.wgsl with its scalar tile loads as quad loads (switch tq): a quad of a2 (four steps of one row) and, where
 * b2 is (cols, r), of b2 go to four tile rows as four scalar stores, as the kernel's own k-fastest quads (storeA / storeB);
 * b2 (r, cols) quads go to one tile row as a vec4. The tiles hold the same elements: bitwise the scalar tail. Where the
 * tile's quads do not split evenly over the threads (96 rows at a step of 8) the last round is guarded.
 */
function quadTail(name: string): string {
  const once = (text: string, from: string, to: string) => replaceExactly(text, from, to, 1, name, "switch tq");
  let out = once(tail256Source, `      for (var i = 0u; i < LOADS_A; i++) {
        let e = tid + i * NT;
        let ka = e % TK; let mm = e / TK;
        tileA[ka * TSVA + mm / 4u][mm % 4u] = tailA(row0 + mm, j0 + ka);
      }
`, `      for (var i = 0u; i < (TM * TK / 4u + NT - 1u) / NT; i++) {
        let q = tid + i * NT;
        if (q < TM * TK / 4u) {
          let kq = q % (TK / 4u); let mm = q / (TK / 4u);
          let v = tailA4(row0 + mm, j0 + 4u * kq);
          let t = 4u * kq * TSVA + mm / 4u; let l = mm % 4u;
          tileA[t][l] = v.x; tileA[t + TSVA][l] = v.y; tileA[t + 2u * TSVA][l] = v.z; tileA[t + 3u * TSVA][l] = v.w;
        }
      }
`);
  out = once(out, `      for (var i = 0u; i < LOADS; i++) {
        let e = tid + i * NT;
        var nn: u32; var kb: u32;
        if (TAIL_TRANS_B) { kb = e % TK; nn = e / TK; } else { nn = e % TS; kb = e / TS; }
        tileB[kb * TSV + nn / 4u][nn % 4u] = tailB(j0 + kb, col0 + nn);
      }
`, `      for (var i = 0u; i < TS * TK / (4u * NT); i++) {
        let q = tid + i * NT;
        if (TAIL_TRANS_B) {
          let kq = q % (TK / 4u); let nn = q / (TK / 4u);
          let v = tailB4(j0 + 4u * kq, col0 + nn);
          let t = 4u * kq * TSV + nn / 4u; let l = nn % 4u;
          tileB[t][l] = v.x; tileB[t + TSV][l] = v.y; tileB[t + 2u * TSV][l] = v.z; tileB[t + 3u * TSV][l] = v.w;
        } else {
          let nq = q % (TS / 4u); let kb = q / (TS / 4u);
          tileB[kb * TSV + nq] = tailB4(j0 + kb, col0 + 4u * nq);
        }
      }
`);
  return out;
}

/** Whether `e`'s LoRA tail can load quads (switch tq): r a multiple of 4, both buffers whole quads, and for b2 (r, N) N too. */
function quadTailFits(e: EncodeMatmulOpts, tailB: boolean | undefined): boolean {
  const t = e.tail;
  return !!t && t.r % 4 === 0 && t.a.size % 16 === 0 && t.b.size % 16 === 0 && (!!tailB || e.N % 4 === 0);
}

/** The layout of `o`'s tail b2: (N, r) when true, else (r, N); undefined without a tail. */
function tailLayout(o: EncodeMatmulOpts): boolean | undefined {
  return o.tail ? (o.tail.transB ?? o.transB ?? false) : undefined;
}

/**
 * A pipeline of one of the tile kernels (tile128, tile256, tile128h) from its source at contracted step `tk`, with the LoRA
 * tail where `tailB` gives its b2 layout (matmul_t256.wgsl's A tile k-fastest under the switch ka). The label names the
 * step, the vec4 loads, the transposes and the tail, so a profile (src/gpu/profile.ts, by label and grid) tells forward
 * from backward products.
 */
function tiledPipeline(device: GPUDevice, stem: string, body: string, file: string, tk: number, e: EncodeMatmulOpts, vec: VecLoads, tailB: boolean | undefined, constants: Record<string, number>, c4: boolean, post: (text: string) => string = (t) => t): Promise<GPUComputePipeline> {
  const tail = tailB !== undefined;
  // tile96h (switch t96) does not take ka: kFastLoop is written for four row groups.
  const t256Text = file === "matmul_t256.wgsl" && stem !== "matmul_t96h";
  // Switch ka: A's tile k-fastest where A is (M, K) and the tiles fit (withKFastA).
  const tm = stem === "matmul_t256" ? 256 : 128;
  const kaMode = perfSwitches().ka;
  const ka = t256Text && !e.transA && tk !== 32 && (kaMode === 1 || (kaMode === 2 && !!e.transB)) && kFastABytes(tm, tk) <= device.limits.maxComputeWorkgroupStorageSize;
  if (ka) body = withKFastA(body, file);
  // Switch tq: matmul_t256.wgsl's LoRA tail loads quads where r and (for b2 (r, N)) N are multiples of 4.
  const tq = tail && file === "matmul_t256.wgsl" && perfSwitches().tq === 1 && quadTailFits(e, tailB);
  const label = `${stem}${ka ? "_ka" : ""}${tk === 8 ? "" : `_k${tk}`}${vec.a || vec.b ? `_v${vec.a ? "A" : ""}${vec.b ? "B" : ""}` : ""}${e.transA ? "_tA" : ""}${e.transB ? "_tB" : ""}${tail ? "_tail" : ""}${tq ? "_tq" : ""}${c4 ? "_c4" : ""}`;
  const src = tail ? withTail(body, { bindings: [4, 5, 6], rows: "dims.M", cols: "dims.N", transB: tailB, quads: tq }, file) : body;
  const text = typedSource(post(src), e.aF16 ?? false, e.bF16 ?? false, vec);
  return computePipeline(device, label, c4 ? withVecC(text, label) : text, constants);
}

/** `tailB`: the LoRA tail's b2 layout where the kernel runs one (tailLayout), undefined for none. */
function pipelineFor(device: GPUDevice, variant: MatmulVariant, e: EncodeMatmulOpts, accumulate: boolean, transC: boolean, vec: VecLoads, tailB?: boolean, c4 = false): Promise<GPUComputePipeline> {
  const constants: Record<string, number> = { TRANS_A: e.transA ? 1 : 0, TRANS_B: e.transB ? 1 : 0, ACCUMULATE: accumulate ? 1 : 0 };
  const aF16 = e.aF16 ?? false, bF16 = e.bF16 ?? false;
  switch (variant) {
    case "tile64":
      return computePipeline(device, "matmul", typedSource(source64, aF16, bF16), constants);
    case "tile128": {
      const tk = t128Step(device);
      return tiledPipeline(device, "matmul_t128", withStep(source128, tk, "matmul_t128.wgsl"), "matmul_t128.wgsl", tk, e, vec, tailB, constants, c4);
    }
    case "tile128p":
      return computePipeline(device, "matmul_t128p", typedSource(source128p, aF16, bF16), constants);
    case "tile256": {
      const tk = t256Step(device);
      return tiledPipeline(device, "matmul_t256", withStep(source256, tk, "matmul_t256.wgsl"), "matmul_t256.wgsl", tk, e, vec, tailB, constants, c4);
    }
    case "tile128h": {
      const tk = t128Step(device);
      return tiledPipeline(device, "matmul_t128h", halfThreads(withStep(source256, tk, "matmul_t256.wgsl")), "matmul_t256.wgsl", tk, e, vec, tailB, constants, c4);
    }
    case "tile96h": {
      const tk = t128Step(device);
      return tiledPipeline(device, "matmul_t96h", halfThreads(withStep(source256, tk, "matmul_t256.wgsl")), "matmul_t256.wgsl", tk, e, vec, tailB, constants, c4, rows96);
    }
    case "narrow":
      return computePipeline(device, "matmul_narrow", typedSource(sourceNarrow, aF16, bF16), { ...constants, TRANS_C: transC ? 1 : 0 });
    case "rank": {
      const { form, nq, rpt } = rankShape(e);
      const sg = rankSubgroups(device);
      let body = sourceRank.replace("const RPT: u32 = 4u;", `const RPT: u32 = ${rpt}u;`).replace("const NQ: u32 = 4u;", `const NQ: u32 = ${nq}u;`);
      if (!body.includes(`const RPT: u32 = ${rpt}u;`) || !body.includes(`const NQ: u32 = ${nq}u;`)) throw new Error("matmul_rank.wgsl: no RPT / NQ line to substitute");
      body = rankLanes(sg) + body;
      const label = `matmul_rank_${form}_q${nq}${sg ? "_sg" : ""}${vec.a || vec.b ? `_v${vec.a ? "A" : ""}${vec.b ? "B" : ""}` : ""}${e.transB ? "_tB" : ""}`;
      // A's transpose is the entry point (rows: A (M, K); cols: A (K, M)), not a constant.
      const rankConstants = { TRANS_B: constants.TRANS_B, ACCUMULATE: constants.ACCUMULATE, TRANS_C: transC ? 1 : 0 };
      return computePipeline(device, label, (sg ? "enable subgroups;\n" : "") + typedSource(body, aF16, bF16, vec), rankConstants, form);
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

/** A product as encodeMatmulBindings dispatches it: the kernel, the product it runs (`e`, transposed when `swap`), its Dims and grid, and the vec4 loads. */
interface MatmulPlan {
  variant: MatmulVariant;
  swap: boolean;
  e: EncodeMatmulOpts;
  /** K slices (1: not split). */
  slices: number;
  /** The Dims uniform's eight words. */
  dims: Uint32Array;
  grid: [number, number, number];
  vec: VecLoads;
  /** C stored as vec4 (switch st4; the tile kernels, unswapped). */
  c4: boolean;
}

function planMatmul(o: EncodeMatmulOpts, offsetA: number, offsetB: number, offsetC = 0): MatmulPlan {
  const { variant, swap } = pickMatmul(o);
  const e = effective(o, swap);
  const [offA, offB] = swap ? [offsetB, offsetA] : [offsetA, offsetB];
  const S = slicesOf(e, variant);
  const { M, N, K, batch = 1, alpha = 1 } = e;
  const [tm, tn] = TILE[variant];
  const words = new ArrayBuffer(32);
  const u = new Uint32Array(words);
  let slices = 1, z = batch;
  if (S > 1) {
    // Slice z of a k-major operand (A^T (K, M), B (K, N)) is contiguous: rows [z Kc, (z + 1) Kc);
    // of a k-fastest one (A (M, K), B^T (N, K)) it is columns [z Kc, (z + 1) Kc) of rows of K.
    const Kc = Math.ceil(K / S / 16) * 16;
    slices = z = Math.ceil(K / Kc);
    u.set([M, N, Kc]);
    new Float32Array(words)[3] = 1;
    u.set([e.transA ? Kc * M : Kc, e.transB ? Kc : Kc * N, M * N, K], 4);
  } else {
    u.set([M, N, K]);
    new Float32Array(words)[3] = alpha;
    u.set([e.broadcastA ? 0 : M * K, e.broadcastB ? 0 : K * N, M * N, 0], 4);
  }
  const vec = (tiled(variant) && perfSwitches().vload === 1) || variant === "rank"
    ? vecOperands({
      M, N, K: u[2], kTotal: u[7], strideA: u[4], strideB: u[5], transA: e.transA ?? false, transB: e.transB ?? false,
      aF16: e.aF16 ?? false, bF16: e.bF16 ?? false, offsetA: offA, offsetB: offB,
    })
    : NO_VEC;
  if (variant === "rank") {
    const r = rankShape(e);
    return { variant, swap, e, slices, dims: u, grid: [Math.ceil(N / (4 * r.nq)), Math.ceil(M / (r.form === "rows" ? 4 * r.rpt : 16)), z], vec, c4: false };
  }
  // Split: the slices go to the scratch (offset 0, slices M N apart).
  const c4 = tiled(variant) && !swap && vecC(N, u[6], slices > 1 ? 0 : offsetC);
  return { variant, swap, e, slices, dims: u, grid: [Math.ceil(N / tn), Math.ceil(M / tm), z], vec, c4 };
}

/** Whether `o`'s tail runs inside its kernel (EncodeMatmulOpts.tail): switch loraTail, tile128 not swapped, A not transposed, alpha 1. */
function tailFuses(o: EncodeMatmulOpts, p: MatmulPlan): boolean {
  return perfSwitches().loraTail === 1 && tiled(p.variant) && !p.swap && !(o.transA ?? false) && (o.alpha ?? 1) === 1 && !o.aF16;
}

/** The Tail uniform: r, scale. */
export function tailWords(t: { r: number; scale: number }): Uint32Array {
  const w = new ArrayBuffer(16);
  new Uint32Array(w)[0] = t.r;
  new Float32Array(w)[1] = t.scale;
  return new Uint32Array(w);
}

/** Whether encodeMatmul runs `o`'s tail inside its kernel (tests). */
export function tailFused(o: EncodeMatmulOpts): boolean {
  return !!o.tail && tailFuses(o, planMatmul(o, 0, 0));
}

/** Whether encodeMatmulBindings stores `o`'s C (bound at byte `offsetC`) as vec4 quads (switch st4), for tests. */
export function storesVec4(o: EncodeMatmulOpts, offsetC = 0): boolean {
  return planMatmul(o, 0, 0, offsetC).c4;
}

/** The operands `o` loads as vec4 (in `o`'s own order, before any swap): what encodeMatmulBindings decides for it, for tests. */
export function vecLoads(o: EncodeMatmulOpts, offsetA = 0, offsetB = 0): VecLoads {
  const p = planMatmul(o, offsetA, offsetB);
  return p.swap ? { a: p.vec.b, b: p.vec.a } : p.vec;
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
  if ((o.bias || o.tail) && (o.batch ?? 1) !== 1) throw new Error("encodeMatmul: a bias or tail needs an unbatched product");
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
  if (p.slices > 1) {
    const part = splitPartials(device, 4 * p.slices * M * N, [a.buffer, b.buffer, c.buffer, ...(t ? [t.a, t.b] : [])]);
    const pipeline = await pipelineFor(device, p.variant, e, false, p.swap, p.vec, tailLayout(o), p.c4);
    dispatch(device, enc, pipeline, [x, y, part, uniformBuffer(device, "matmul-dims", p.dims), ...tailBind], p.grid);
    await encodeSplitReduce(device, enc, part, c, M * N, p.slices, alpha, accumulate, o.bias ? { bias: o.bias, N: o.N } : undefined);
    return;
  }
  const pipeline = await pipelineFor(device, p.variant, e, accumulate, p.swap, p.vec, tailLayout(o), p.c4);
  dispatch(device, enc, pipeline, [x, y, c, { buffer: uniformBuffer(device, "matmul-dims", p.dims) }, ...tailBind], p.grid);
  // C += bias: the reduce's bias entry over no slices (its partials binding unread; any buffer but C).
  if (o.bias) await encodeSplitReduce(device, enc, scratchBuffer(device, 4), c, o.M * o.N, 0, 1, true, { bias: o.bias, N: o.N });
}

/**
 * Records C (M, N) += scale * a (M, r) op(b) as its own product (b (N, r) when transB, else (r, N)): a LoRA tail where
 * it does not run inside its base product's kernel (EncodeMatmulOpts.tail, Q4MatmulOpts.tail).
 */
export function encodeTailProduct(device: GPUDevice, enc: GPUCommandEncoder, t: { a: GPUBuffer; b: GPUBuffer; r: number; scale: number }, c: GPUBufferBinding, M: number, N: number, transB: boolean): Promise<void> {
  return encodeMatmulBindings(device, enc, { buffer: t.a }, { buffer: t.b }, c, { M, N, K: t.r, transB, alpha: t.scale, accumulate: true });
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
  const prm = new ArrayBuffer(16);
  new Uint32Array(prm).set([MN, S, 0, bias?.N ?? 0]);
  new Float32Array(prm)[2] = alpha;
  const groups = Math.ceil(MN / 256);
  const gx = Math.min(groups, 65535);
  const params = uniformBuffer(device, "matmul-splitk-params", new Uint32Array(prm));
  dispatch(device, enc, reduce, bias ? [part, c, params, bias.bias] : [part, c, params], [gx, Math.ceil(groups / gx)]);
}

/** Floating-point operations of one matmul, for throughput figures. */
export function matmulFlops(o: MatmulOpts): number {
  return 2 * o.M * o.N * o.K * (o.batch ?? 1);
}
