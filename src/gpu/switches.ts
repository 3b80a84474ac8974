// Switches between the trainer's speed variants, so that one benchmark process can time the earlier
// and the current way side by side (every variant computes the same values; tests run both where
// they differ in more than scheduling). Read once from RLVR_PERF under Deno — a comma-separated
// list of name=value, or "old" for every earlier behaviour at once — and changed by benchmarks
// with setPerfSwitches. Each switch names what the earlier behaviour was.
import { denoEnv } from "../core/deno-env.ts";

/** The variants. */
export interface PerfSwitches {
  /** "merged": consecutive dispatches of a step's encoder share one compute pass; "split": a pass per dispatch (earlier; the profiler's per-kernel mode). */
  passes: "merged" | "split";
  /** "layer": forward and backward submit their work layer by layer, so the GPU runs while the host records; "once": one submit each (earlier). */
  submit: "layer" | "once";
  /** q4 projections on "tile128" kernels (128x128 tiles, the f32 kernel's inner loop) or "tile64" (earlier). */
  q4: "tile128" | "tile64";
  /** Bind groups cached per pipeline and bindings (true) or made per dispatch (false, earlier). */
  bindCache: boolean;
  /** A step's activations, scratch and batch inputs from arena.ts, kept from step to step (true), or created and destroyed per step (false, earlier). */
  arena: boolean;
  /** Split-K for every transpose of a narrow product with a small grid ("general") or only transposed-A products ("transA", earlier). */
  splitK: "general" | "transA";
  /** Subgroup reductions where the device has the feature (true), or the workgroup-memory reductions everywhere (false, earlier). */
  subgroups: boolean;
  /** Recomputation in the backward skips each layer's output (down_proj's product and the residual copy), which it does not need (true), or re-runs the whole layer (false, earlier). */
  recomputeLean: boolean;
  /** The GRPO step runs the vocabulary head on the completion rows its loss reads (true), or on every row (false, earlier). */
  headRows: boolean;
  /**
   * K slices (1, earlier: none) for a product on 128x128 tiles (f32 tile128 / tile128p, q4 tile128) whose grid is a few
   * workgroups per multiprocessor of a big GPU (fewer than WIDE_SPLIT_TILES tiles: the 0.5B's 896-wide outputs, 336 tiles
   * at 6,144 rows, run 1.3 waves of an H200 and idle most of the second): the slices run as more workgroups and a reduce sums them.
   * The split scratch holds at most 64 MiB (matmul.ts SPLIT_MAX_BYTES: 3 slices of a 6144 x 896 output), so 4 gives 3 there;
   * 5-8 may use up to 192 MiB (WIDE_SPLIT_MAX_BYTES: 8 slices of it), for grids that then fill whole waves (at two
   * workgroups a multiprocessor, 336 tiles x 7 slices are 8.9 waves of 264); those partials go to the call scratch where
   * it already holds them (matmul.ts wideSplitInCallScratch: the 0.5B steps, whose peak they then leave alone). 7 is the
   * default since 2026-12-05 (fourteenth session; 3 before): the 896-wide products 34.1-34.8 -> 35.4-35.9 TFLOP/s.
   */
  wideSplit: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
  /**
   * The f32 128-tile kernel's contracted step (matmul_t128.wgsl's TK): 8 (earlier), 16 (half the barriers per k, 16.9 KiB
   * of workgroup memory) or 32 (a quarter, 32 KiB: unpadded tile rows); the largest the device's workgroup memory allows.
   */
  tk: 8 | 16 | 32;
  /** The same for the q4 128-tile kernels (q4matmul_t128.wgsl, q4matmul_t_t128.wgsl: one whole word of nibbles per thread and step at 16). */
  q4tk: 8 | 16;
  /**
   * The f32 128-tile kernel (matmul_t128.wgsl) loads A and B from global memory as vec4 along each operand's memory-fastest
   * dimension where matmul.ts's vecLoads finds the layout aligned (1), or one bounds-checked scalar per element (0, earlier).
   * Same tiles and sums either way (bitwise the same results).
   */
  vload: 0 | 1;
  /**
   * f32 projections with LoRA: the adapter's accumulate product (y += s (x A^T) B^T forward, dx += s (dy B) A backward)
   * runs as a tail of the base product's 128-tile kernel (1: one extra contracted step of r on the tile's registers,
   * in split-K slice 0) instead of its own memory-bound pass over C (0, earlier). Where the base product is not on
   * 128-tiles (small models) the separate pass stays.
   */
  loraTail: 0 | 1;
  /** The embedding table's gradient (full fine-tuning, pretraining): "links" (a links pass and a chain walk per id, model/ops.ts) or "scan" (a thread per table element over every id, earlier). */
  embedBack: "links" | "scan";
  /** The attention kernels' per-thread state (the forward's max, sum and output, the backward's dq and dk / dv sums) in named registers (1) or in arrays indexed in loops (0, the default); a variant of the lane kernels only. Same sums in the same order. H200 2026-12-03: no faster (docs/benchmarks.md). */
  attnNamed: 0 | 1;
  /**
   * The attention backward's kernels: "lanes" (attention_bwd_dq.wgsl and attention_bwd_dkv.wgsl, 16 lanes a row) or
   * "blocked" (the default since 2026-12-03: register-blocked tiles where D % 4 == 0, else the lane kernels;
   * attention_bwd_*_rb.wgsl; dk/dv 10% faster on the H200). Same values up to rounding (the sums run in another order).
   */
  attnBwd: "lanes" | "blocked";
  /**
   * The attention forward's kernel: "lanes" (attention.wgsl, 16 lanes a row) or "blocked" (the default since 2026-12-03:
   * register-blocked tiles where D % 4 == 0, else the lane kernel; attention_rb.wgsl; 16% faster on the H200). Same values
   * up to rounding (the sums run in another order).
   */
  attnFwd: "lanes" | "blocked";
  /**
   * The LoRA rank products that read a whole activation or gradient and write r columns (x A^T, dy B, dA, dB): on
   * "narrow" (matmul_narrow.wgsl, 64 x 16 tiles, split-K slices and a reduce; the default) or "stream" (a kernel that
   * streams the wide operand once with vec4 loads at full occupancy: matmul_rank.wgsl; on the H200 2.1% slower in the 0.5B q4 step, 2026-12-04: faster on x A^T, twice as slow on dA
   * and dB, docs/benchmarks.md); or "xa": the rank kernel for x A^T alone (N <= 32, B transposed, A not), where it
   * was faster on the H200 (0.069 against 0.141 ms at K = 4864, 0.013-0.016 against 0.026 at K = 896), narrow for the
   * rest (dy B, dA, dB, where narrow was faster). Same sums up to rounding. "xa" not measured in a step yet.
   */
  rank: "narrow" | "stream" | "xa";
  /**
   * The attention backward's dq: "fused" (the default since 2026-12-04: the register-blocked dk/dv kernel, which has dS in
   * workgroup memory, writes each key block's dS K to a scratch and a reduce sums the blocks; delta by a small kernel of
   * its own; where D % 4 == 0 and the scratch fits attention.ts's DQ_SCRATCH_CAP) or "kernel" (earlier: the dq kernel
   * recomputes S and dP, attention_bwd_dq*.wgsl). Same values up to rounding (dk, dv bitwise). H200: pretraining 141-143k
   * -> 152-154k tok/s, the 0.5B q4 step 520.5 -> 507.5 ms (docs/benchmarks.md).
   */
  attnDq: "kernel" | "fused";
  /**
   * f32 products that would run on the 128-tile kernel and have at least matmul.ts's T256_MIN_TILES 256x128 tiles run on
   * the 256x128-tile kernel (1: matmul_t256.wgsl, LoRA tail included) or stay on tile128 (0, the default and the earlier
   * behaviour). Same sums in the same k order (bitwise the tile128 results without split-K). H200, 2026-12-04: the wide
   * products 32.9 TFLOP/s against tile128's 31.6-31.8 (docs/benchmarks.md).
   */
  t256: 0 | 1;
  /**
   * f32 products that would run on the 128-tile kernel (and not on tile256 under t256) run on tile128h (1, the default
   * since 2026-12-04: matmul_t256.wgsl with 128-row tiles and 16x8 threads, tile128's tile and split-K with tile256's
   * 16x8 block per thread, LoRA tail included) or on tile128 (0, earlier). Same sums in the same k order (bitwise
   * tile128). H200: the f32 0.5B step 520.7 -> 506.5 ms, pretraining +2% (docs/benchmarks.md).
   */
  t128h: 0 | 1;
  /**
   * LoRA training on f32 projections uploads each frozen projection a second time, transposed (1, the default since
   * 2026-12-04: uploadModel's transposedBase, GpuModel.transposed; the forward's x W^T then reads W row-fastest, the
   * faster loads; twice the projections' memory, +1.4 GB at the 0.5B shape), or once (0, earlier). Bitwise the same
   * results. H200: the f32 0.5B step 508.6-509.9 -> 502.9-504.2 ms, q4's 506.0-506.4 in the same call. Read by the
   * callers of uploadModel that train adapters (the notebook's runtime, the benchmarks), never by full fine-tuning.
   */
  wT: 0 | 1;
  /**
   * Where A is k-fastest in memory ((M, K), not transposed: every f32 projection's forward x W^T and its dx = dy W):
   * tile128h / tile256 keep A's tile k-fastest in workgroup memory too, each loaded quad one vec4 store instead of four
   * scalar stores to four tile rows, and read it a vec4 per row and four steps (1, matmul.ts kFastLoop); or transpose it
   * into k-major rows (0, the default); 2: only where B is k-fastest too ((N, K), transposed: x W^T without the transposed
   * base copy, as pretraining runs it). The same fmas in the same order: bitwise the same sums. Experimental (issue 16's
   * >= 35 TFLOP/s). H200 2026-12-05 (docs/benchmarks.md): the x W^T products 0.6-1.6 TFLOP/s faster, dy W 0.1-1.2 slower.
   */
  ka: 0 | 1 | 2;
  /**
   * tile128h's products on 96 x 128 tiles (1, matmul.ts rows96: tile96h, matmul_t256.wgsl with three of the 16 x 8
   * block's four row groups, a 12 x 8 block a thread, 96 accumulators instead of 128), so that fewer registers a thread
   * may let three 128-thread workgroups share a multiprocessor instead of two; or on tile128h (0, earlier). Each
   * element's fmas run in the same order: bitwise the same sums. H200 2026-12-05: 158-168 registers (190-195 with the
   * LoRA tail); with wideSplit=7 the big f32 products 33.1-35.4 TFLOP/s (tile128h 30.6-34.7), the f32 step slower (531.0
   * against 503.2 ms), before st4. The default since 2026-12-05 (fourteenth session, with tq=1, q4deq=1, wideSplit=7): on
   * an H100 the q4 step 468.6 -> 459.2 ms and the f32 step 468.9 -> 459.7 under t96=1,tq=1, every big product the
   * steps run at 35.4-37.0 TFLOP/s (docs/benchmarks.md, call defaults14).
   */
  t96: 0 | 1;
  /**
   * The LoRA tail inside matmul_t256.wgsl's kernels (tile128h, tile96h, tile256) loads a2 and b2 as vec4 quads (1, where
   * r and, for b2 (r, N), N are multiples of 4: matmul.ts quadTail), or one bounds-checked scalar at a time (0,
   * earlier). The tiles hold the same elements: bitwise the same sums. 2026-12-05: the scalar tail kernels took 27-43
   * more registers than the kernels without it on the H200; under tq 159-168 (tile96h), 182-191 (tile128h), but the f32
   * step the same (501.1 against 501.0 ms). The default since the fourteenth session, with t96=1 (see there).
   */
  tq: 0 | 1;
  /**
   * The narrow kernel's split along K (the LoRA rank products: x A^T and dy B with r columns, dB = dy^T (xA), dA as its
   * transpose; matmul.ts slicesOf): slices until the grid has about `narrowWg` workgroups (256 before, every
   * product's rule) with at least `narrowMinK` contracted elements each (256 before). These products read
   * a whole activation (119.5 MB at 6144 x 4864) for 16 columns; on the H200 they ran at 0.85-1.0 TB/s, a fifth of its
   * bandwidth, on grids of 14-96 workgroups split 3-19 ways (2026-12-04): more, shorter slices put more loads in flight.
   * Defaults 1024 and 128 since 2026-12-05 (the 0.5B q4 step 510.8 -> 501.0 ms on an H100; 256 / 256 before). The sums
   * differ only in how the slices split K.
   */
  narrowWg: 256 | 512 | 1024 | 2048;
  narrowMinK: 64 | 128 | 256;
  /**
   * The vocabulary head's forward partials and its backward's dz on 128 x 128 tiles with an 8 x 8 block a thread (1:
   * lmhead_t128.wgsl, where the slice width is a multiple of 128, as the default 1024 is, and lmhead_grad_t128.wgsl), or
   * on 64 x 64 tiles with a 4 x 4 block (0: lmhead.wgsl, lmhead_grad.wgsl). The same partials up to float rounding (the
   * column tiles fold in another grouping); dz bitwise. 2 (the default since 2026-12-05): dz alone on 128 x 128 tiles.
   * On an H100 (2026-12-05) the 128-tile partials took 37.9 ms of the q4 0.5B step against 34.7 (170 registers), dz
   * 26.7 against 29.4; under 2 the q4 step 487.0 -> 482.2 ms (H200) and 490.5 -> 487.2 (H100), each in one process.
   */
  lm128: 0 | 1 | 2;
  /**
   * The register-blocked dk/dv kernel's query heads: every head of a kv group in a workgroup of its own, the group's
   * partial dk and dv summed by a reduce (1, the default since 2026-12-05: attention_dkv_reduce.wgsl; the partials,
   * (B, T, Hkv, H / Hkv, D) each, in the split-K scratch), or the group's heads one after another in one workgroup (0). At the 0.5B step (7 heads a group) the grid
   * is 384 workgroups, one wave of the H200, whose first key blocks each run 7 x 48 query tiles; split, 2,688 of at
   * most 48. The same values up to rounding (the heads' sums are grouped differently). Measured on an H100 (2026-12-05):
   * the 0.5B q4 step 510.1 -> 498.0 ms, pretraining's dk/dv kernel 23.1 -> 21.4 ms.
   */
  attnSplit: 0 | 1;
  /**
   * The 128-tile kernels' epilogue stores each thread's row quads of C as one vec4 where C's row length is a multiple of
   * 4 and its binding starts on 16 bytes (matmul.ts vecC, q4matmul.ts q4StoresVec4), else as four bounds-checked
   * scalars: 1 (the default since 2026-12-05) in the f32 kernels (tile128, tile128h, tile96h, tile256), 2 in those and
   * the q4 128-tile kernels (q4matmul_t128.wgsl, q4matmul_t_t128.wgsl), 0 nowhere. The same values in the same places:
   * bitwise the same C. Why: on the H200 the ladder's inner rung (tile128h without loads, tile stores or barriers) ran
   * at 42.7 TFLOP/s with the epilogue's 128 scalar stores a thread and 50.1 with one store a thread. On an H100
   * (2026-12-05): the f32 step 490.3 -> 466.1 ms, pretraining +3.5%, the big f32 products +0.9 to +2.6 TFLOP/s; the q4
   * kernels without a LoRA tail 25% slower (34.1 -> 26.7 TFLOP/s; 126 registers against 115-122), with it level.
   */
  st4: 0 | 1 | 2;
  /**
   * q4 products of at least Q4_DEQUANT_MIN_ROWS rows (q4matmul.ts; 2048) dequantise W whole into the call scratch
   * (q4_dequant.wgsl: W^T for the forward, W for dx, bitwise the values the q4 kernels multiply with) and run the f32
   * kernels on it, as the f32 step runs its stored W^T and W (1, the default since 2026-12-05); 2 at any rows (tests);
   * 0: the q4 kernels, which dequantise in their tile loaders (earlier). On an H100 (call q4deq) the 0.5B q4 step 486.9
   * -> 464.0 ms, recomputed 583.5 ms at the same 2,847.0 MiB peak, the dequant kernels 4.4 ms of the step. The scratch is the attention backward's (device.ts CALL_SCRATCH), which
   * is larger at the 0.5B step: no memory added there. The same products up to float rounding (the f32 kernels group
   * the sums differently). Why: on an H100 (2026-12-05) the f32 step ran 467.5 ms against the q4 step's 491.3, and the
   * big f32 products reached 35.1-36.7 TFLOP/s under t96=1,tq=1,wideSplit=7, the q4 ones 31.7-34.2 under any switch.
   */
  q4deq: 0 | 1 | 2;
}

/** The current defaults. */
export const NEW_SWITCHES: Readonly<PerfSwitches> = { passes: "merged", submit: "layer", q4: "tile128", bindCache: true, arena: true, splitK: "general", subgroups: true, recomputeLean: true, headRows: true, wideSplit: 7, tk: 16, q4tk: 16, vload: 1, loraTail: 1, embedBack: "links", attnNamed: 0, attnBwd: "blocked", attnFwd: "blocked", rank: "narrow", attnDq: "fused", t256: 0, t128h: 1, wT: 1, ka: 0, t96: 1, tq: 1, narrowWg: 1024, narrowMinK: 128, lm128: 2, attnSplit: 1, st4: 1, q4deq: 1 };
/** Every earlier behaviour. */
export const OLD_SWITCHES: Readonly<PerfSwitches> = { passes: "split", submit: "once", q4: "tile64", bindCache: false, arena: false, splitK: "transA", subgroups: false, recomputeLean: false, headRows: false, wideSplit: 1, tk: 8, q4tk: 8, vload: 0, loraTail: 0, embedBack: "scan", attnNamed: 0, attnBwd: "lanes", attnFwd: "lanes", rank: "narrow", attnDq: "kernel", t256: 0, t128h: 0, wT: 0, ka: 0, t96: 0, tq: 0, narrowWg: 256, narrowMinK: 256, lm128: 0, attnSplit: 0, st4: 0, q4deq: 0 };

const CHOICES: { [K in keyof PerfSwitches]: readonly string[] } = {
  passes: ["merged", "split"],
  submit: ["layer", "once"],
  q4: ["tile128", "tile64"],
  bindCache: ["1", "0"],
  arena: ["1", "0"],
  splitK: ["general", "transA"],
  subgroups: ["1", "0"],
  recomputeLean: ["1", "0"],
  headRows: ["1", "0"],
  wideSplit: ["1", "2", "3", "4", "5", "6", "7", "8"],
  tk: ["8", "16", "32"],
  q4tk: ["8", "16"],
  vload: ["0", "1"],
  loraTail: ["0", "1"],
  embedBack: ["links", "scan"],
  attnNamed: ["0", "1"],
  attnBwd: ["lanes", "blocked"],
  attnFwd: ["lanes", "blocked"],
  rank: ["narrow", "stream", "xa"],
  attnDq: ["kernel", "fused"],
  t256: ["0", "1"],
  t128h: ["0", "1"],
  wT: ["0", "1"],
  ka: ["0", "1", "2"],
  t96: ["0", "1"],
  tq: ["0", "1"],
  narrowWg: ["256", "512", "1024", "2048"],
  narrowMinK: ["64", "128", "256"],
  lm128: ["0", "1", "2"],
  attnSplit: ["0", "1"],
  st4: ["0", "1", "2"],
  q4deq: ["0", "1", "2"],
};

function isKey(k: string): k is keyof PerfSwitches {
  return Object.prototype.hasOwnProperty.call(CHOICES, k);
}

/** Parses "old", "new", or "name=value,..." (on top of `base`) into switches; throws on unknown names or values. */
export function parsePerfSwitches(spec: string, base: Readonly<PerfSwitches> = NEW_SWITCHES): PerfSwitches {
  const out: PerfSwitches = { ...base };
  for (const part of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    if (part === "old") {
      Object.assign(out, OLD_SWITCHES);
      continue;
    }
    if (part === "new") {
      Object.assign(out, NEW_SWITCHES);
      continue;
    }
    const eq = part.indexOf("=");
    const k = part.slice(0, eq), v = part.slice(eq + 1);
    if (eq < 0 || !isKey(k)) throw new Error(`perf switch '${part}': one of old, new, ${Object.keys(CHOICES).map((c) => `${c}=`).join(", ")}`);
    if (!CHOICES[k].includes(v)) throw new Error(`perf switch ${k}: one of ${CHOICES[k].join(", ")}, got ${v}`);
    switch (k) {
      case "passes":
        out.passes = v === "split" ? "split" : "merged";
        break;
      case "submit":
        out.submit = v === "once" ? "once" : "layer";
        break;
      case "q4":
        out.q4 = v === "tile64" ? "tile64" : "tile128";
        break;
      case "bindCache":
        out.bindCache = v === "1";
        break;
      case "arena":
        out.arena = v === "1";
        break;
      case "splitK":
        out.splitK = v === "transA" ? "transA" : "general";
        break;
      case "subgroups":
        out.subgroups = v === "1";
        break;
      case "recomputeLean":
        out.recomputeLean = v === "1";
        break;
      case "headRows":
        out.headRows = v === "1";
        break;
      case "wideSplit":
        out.wideSplit = Number(v) as PerfSwitches["wideSplit"];
        break;
      case "tk":
        out.tk = v === "32" ? 32 : v === "16" ? 16 : 8;
        break;
      case "q4tk":
        out.q4tk = v === "16" ? 16 : 8;
        break;
      case "vload":
        out.vload = v === "1" ? 1 : 0;
        break;
      case "loraTail":
        out.loraTail = v === "1" ? 1 : 0;
        break;
      case "embedBack":
        out.embedBack = v === "scan" ? "scan" : "links";
        break;
      case "attnNamed":
        out.attnNamed = v === "1" ? 1 : 0;
        break;
      case "attnBwd":
        out.attnBwd = v === "blocked" ? "blocked" : "lanes";
        break;
      case "attnFwd":
        out.attnFwd = v === "blocked" ? "blocked" : "lanes";
        break;
      case "rank":
        out.rank = v === "stream" || v === "xa" ? v : "narrow";
        break;
      case "attnDq":
        out.attnDq = v === "fused" ? "fused" : "kernel";
        break;
      case "t256":
        out.t256 = v === "1" ? 1 : 0;
        break;
      case "t128h":
        out.t128h = v === "1" ? 1 : 0;
        break;
      case "wT":
        out.wT = v === "1" ? 1 : 0;
        break;
      case "ka":
        out.ka = v === "1" ? 1 : v === "2" ? 2 : 0;
        break;
      case "t96":
        out.t96 = v === "1" ? 1 : 0;
        break;
      case "tq":
        out.tq = v === "1" ? 1 : 0;
        break;
      case "narrowWg":
        out.narrowWg = Number(v) as PerfSwitches["narrowWg"];
        break;
      case "narrowMinK":
        out.narrowMinK = Number(v) as PerfSwitches["narrowMinK"];
        break;
      case "lm128":
        out.lm128 = v === "1" ? 1 : v === "2" ? 2 : 0;
        break;
      case "attnSplit":
        out.attnSplit = v === "1" ? 1 : 0;
        break;
      case "st4":
        out.st4 = v === "1" ? 1 : v === "2" ? 2 : 0;
        break;
      case "q4deq":
        out.q4deq = v === "1" ? 1 : v === "2" ? 2 : 0;
        break;
    }
  }
  return out;
}

/** "passes=merged,submit=layer,...": the form RLVR_PERF and the benches' perf= take. */
export function formatPerfSwitches(s: Readonly<PerfSwitches>): string {
  return `passes=${s.passes},submit=${s.submit},q4=${s.q4},bindCache=${s.bindCache ? 1 : 0},arena=${s.arena ? 1 : 0},splitK=${s.splitK},subgroups=${s.subgroups ? 1 : 0},recomputeLean=${s.recomputeLean ? 1 : 0},headRows=${s.headRows ? 1 : 0},wideSplit=${s.wideSplit},tk=${s.tk},q4tk=${s.q4tk},vload=${s.vload},loraTail=${s.loraTail},embedBack=${s.embedBack},attnNamed=${s.attnNamed},attnBwd=${s.attnBwd},attnFwd=${s.attnFwd},rank=${s.rank},attnDq=${s.attnDq},t256=${s.t256},t128h=${s.t128h},wT=${s.wT},ka=${s.ka},t96=${s.t96},tq=${s.tq},narrowWg=${s.narrowWg},narrowMinK=${s.narrowMinK},lm128=${s.lm128},attnSplit=${s.attnSplit},st4=${s.st4},q4deq=${s.q4deq}`;
}

function fromEnv(): PerfSwitches {
  const spec = denoEnv("RLVR_PERF");
  return spec ? parsePerfSwitches(spec) : { ...NEW_SWITCHES };
}

let current: PerfSwitches = fromEnv();

/** The switches in force. */
export function perfSwitches(): Readonly<PerfSwitches> {
  return current;
}

/** Changes some switches for every later step (benchmarks); returns the previous ones. */
export function setPerfSwitches(s: Partial<PerfSwitches>): PerfSwitches {
  const prev = current;
  current = { ...current, ...s };
  return prev;
}
