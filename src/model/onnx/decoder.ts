// The ONNX decoder graph for Qwen2 / Llama / Qwen3 built from HF weights, with explicit standard
// ops (RMSNorm, RoPE from cos/sin caches, grouped-query attention with a KV cache and an additive
// causal+padding mask) so it runs on onnxruntime-web's WebGPU EP; q4 linear layers use
// com.microsoft MatMulNBits. LoRA adapters are graph inputs: updating them needs no rebuild.
//
// Dimension letters: B batch, S new tokens, P past tokens, T = P + S, H query heads, K kv heads,
// G = H / K, D head dim, C hidden size, V vocabulary, r LoRA rank.
import type { ModelConfig } from "../config.ts";
import { fromF16, toF16 as toF16Js } from "../half.ts";
import { type Q4Weight, quantizeQ4 } from "../quant.ts";
import { baseKey, LORA_TARGETS, type LoraTarget, targetDims } from "../lora.ts";
import { getTensor, type Tensor, transpose2d, type Weights } from "../tensor.ts";
import { type AttrValue, type Dim, DT, type DType, type ExternalFile, GraphBuilder } from "./proto.ts";
import { ropeInvFreq } from "./rope.ts";

/** Attention's key axis is padded to a multiple of this (masked) so ORT's vec4 MatMul kernel runs. */
export const ATTN_ALIGN = 4;

/** Weight storage of the built graph. */
export const WEIGHT_DTYPES = ["f32", "f16", "q4"] as const;
export type WeightDtype = (typeof WEIGHT_DTYPES)[number];

/**
 * How attention is built: "explicit" (standard ONNX ops, every dtype and head size) or "gqa" (one
 * com.microsoft GroupQueryAttention per layer: fewer dispatches per decoding step). "gqa" applies to
 * f32 and q4 graphs with a head dim that is a multiple of 8 (ORT's GQA requires it); other graphs
 * are built with explicit attention (`BuiltDecoder.attention` says which was built).
 */
export const ATTENTION_KINDS = ["explicit", "gqa"] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

/** What to build. */
export interface DecoderOptions {
  dtype: WeightDtype;
  /** Attention operators (default "explicit"); see AttentionKind. */
  attention?: AttentionKind;
  /** Linear layers (in every layer) that get `lora.{layer}.{target}.A/B` inputs (plus `lora_scale`); empty = none. */
  loraTargets?: readonly LoraTarget[];
  /**
   * The adapters' alpha / r fixed in the graph (the second LoRA Gemm's `alpha`) instead of the
   * `lora_scale` input and its Muls: 4 dispatches fewer per layer with every target. Left out: the input.
   */
  loraScale?: number;
  /** `past_key_values.*` inputs and `present.*` outputs (the past may have length 0). */
  kvCache: boolean;
  /** Positions the RoPE cache covers: the longest prompt + completion the graph accepts. */
  maxPositions: number;
  /** Initializers this large or larger go to external data (default 1 MiB). */
  externalMinBytes?: number;
  /**
   * The `target_ids` input and `target_logprobs` output of a graph without staticDecode (default true). Off for
   * a graph another runtime drives with the standard inputs alone (bench/suites/decode-tjs.ts: transformers.js's
   * generate), whose `num_logits_to_keep` is then a scalar as there.
   */
  logprobs?: boolean;
  /**
   * Whether the device runs f16 arithmetic (WebGPU's shader-f16; default true). Without it no
   * tensor of the graph is f16: "f16" weights are rounded to f16 and stored and computed as f32,
   * and "q4" graphs keep MatMulNBits (f32 in and out) with the embedding and the head in f32 (as the
   * WGSL trainer holds them), instead of an f16 embedding and a q4 head.
   */
  shaderF16?: boolean;
  /**
   * A decoding-only graph of fixed shapes for ORT's graph capture (docs/policy.md, "Captured decoding"):
   * one token per row for `batch` rows over a preallocated cache of `maxT` columns that GroupQueryAttention
   * writes in place (past and present fed as one buffer). Inputs `input_ids` (B, 1), `position_ids` (B, 1),
   * `attention_bias` (B, 1, 1, maxT), `seqlens_k` (B) int32 and `total_sequence_length` (1) int32 replace
   * the mask and `num_logits_to_keep`; no `target_ids` / `target_logprobs`; no Shape operator anywhere,
   * so nothing runs on the CPU. Needs attention "gqa" (where GQA does not apply, the build throws).
   *
   * `seq` > 1 makes the same graph a fixed-shape prefill (captured.ts CapturedPrefill): `seq` tokens a
   * row, rows right-padded (causal attention keeps a row's tokens from seeing its pads), the cache of
   * `maxT` (>= seq) columns written from column 0, and an input `last_index` (B) int64, row b's flat
   * index b * seq + len_b - 1, from which the head computes the (B, V) logits of each row's last token.
   */
  staticDecode?: { batch: number; maxT: number; seq?: number };
  /**
   * MatMulNBits' `accuracy_level` for "q4" graphs (default 0, unset: f32 activations). 4 lets
   * onnxruntime's WebGPU EP quantise each product's activations to int8 per 32-block and multiply with
   * dot4I8Packed (its DP4A kernel; taken where the device has subgroups and is not Apple's, K % 128 == 0,
   * N % 16 == 0, from 4 rows): faster prefill and batched decoding at a small cost in log-probability.
   */
  q4Accuracy?: 0 | 4;
  /**
   * staticDecode graphs whose head is f32 (no shader-f16, or f32 graphs): the head as MatMul over a (C, V)
   * transposed copy instead of Gemm with transB over the (V, C) matrix (tied embeddings then stored twice
   * in that session: +V*C floats). A switch measured on the H200 (RLVR_CAPTURED_HEAD=matmul, capture-host.ts).
   */
  headMatMul?: boolean;
  /**
   * How staticDecode "q4" graphs run their projections (f32 graphs: below): "auto" (the default) is "rows" up to
   * ROWS_AUTO_MAX rows, "fused" between and "split" from SPLIT_MIN_ROWS (each the faster where measured); "split" stacks q/k/v and
   * gate/up into one MatMulNBits each (a Split after; exact: the blocks are per row) and splits a product along K
   * where onnxruntime's kernel would run it on few workgroups (q4SplitK: its MatMulNBitsWideTile kernel takes 16 x 128
   * output tiles, so at 8-64 decoding rows a 896-wide product is 7-28 workgroups each walking all of K); "fused" only
   * stacks; "plain" is one MatMulNBits per projection (earlier); "rows" (a variant, 4-16 rows) stacks and runs each
   * product as row groups of under ORT_WIDE_TILE_MIN_M, so that onnxruntime takes its decoding kernel. Measured on the
   * H200: docs/benchmarks.md. f32-compute staticDecode graphs of float weights stack q/k/v and gate/up (one product
   * and a Split each, where every part of the group is adapted or none is) except under "plain".
   */
  decodeProducts?: DecodeProducts;
  /**
   * The K columns a slice of a LoRA A product of a staticDecode decoding graph (seq 1) takes (loraSplitK; default
   * LORA_K_SLICE). Tests make it small so that the tiny models' products are split too.
   */
  loraKSlice?: number;
  /**
   * Converted weights (q4 blocks, transposes, f16 roundings) shared between builds of the same
   * weights, so a second graph of one model (the captured decoding graph beside the policy's) costs
   * no second quantisation; keyed by the source arrays. Drop it once the sessions exist.
   */
  prepared?: PreparedWeights;
}

/** DecoderOptions.decodeProducts. */
export type DecodeProducts = "auto" | "plain" | "fused" | "split" | "rows";
export const DECODE_PRODUCTS: readonly DecodeProducts[] = ["auto", "plain", "fused", "split", "rows"];
/**
 * The most rows "auto" runs as row groups ("rows"): measured faster at 8 on the H200 and at 12 (the Hub GRPO step's
 * 2 x G 6) on an H100 (docs/performance.md); at 9-11 and 13-16 rows unmeasured.
 */
export const ROWS_AUTO_MAX = 12;

/** onnxruntime's MatMulNBits takes its decoding kernel (MatMulNBitsProgram) under this many rows, the wide-tile one from it. */
export const ORT_WIDE_TILE_MIN_M = 4;

/** Output tiles of onnxruntime's MatMulNBitsWideTile kernel (16 rows x 128 columns per workgroup). */
const WIDE_TILE = { m: 16, n: 128 };
/** A product with at least this many of those tiles is not split (about one wave of a big GPU's multiprocessors). */
export const SPLIT_ENOUGH_TILES = 128;
/** Splits stop before the tiles of the split product pass this many (its arithmetic grows with the slices, below). */
export const SPLIT_MAX_TILES = 256;
/**
 * Rows from which a product is split, and the most slices: measured on the H200 (docs/benchmarks.md, call J), at 8 rows
 * splits of up to 8 slices made a decoding step 46% slower than stacking alone, at 64 rows two slices 4% faster.
 */
export const SPLIT_MIN_ROWS = 32;
export const SPLIT_MAX_SLICES = 2;

/**
 * K slices for a MatMulNBits product of M rows, N outputs and K inputs (block 32) in a staticDecode graph: 1 under
 * SPLIT_MIN_ROWS rows or where its grid already has SPLIT_ENOUGH_TILES wide tiles; else the most slices S (up to
 * SPLIT_MAX_SLICES, dividing K's blocks, K / S >= 128) whose split product stays within SPLIT_MAX_TILES tiles. The split product multiplies x as (M S, K / S) (row m S + s:
 * slice s of row m) by W as (N S, K / S) (row n S + t: slice t of row n, the same bytes in MatMulNBits' layout) and
 * keeps the S diagonal terms of each (m, n): S times the arithmetic of the product, on S^2 times the workgroups,
 * each walking K / S.
 */
export function q4SplitK(M: number, N: number, K: number): number {
  if (K % 32 !== 0 || M < SPLIT_MIN_ROWS) return 1;
  const tiles = (s: number) => Math.ceil((N * s) / WIDE_TILE.n) * Math.ceil((M * s) / WIDE_TILE.m);
  if (tiles(1) >= SPLIT_ENOUGH_TILES) return 1;
  const nb = K / 32;
  let best = 1;
  for (let s = 2; s <= Math.min(nb, SPLIT_MAX_SLICES) && K / s >= 128; s++) {
    if (nb % s) continue;
    if (tiles(s) > SPLIT_MAX_TILES) break;
    best = s;
  }
  return best;
}

/** The K width loraSplitK aims each slice of a captured decoding graph's LoRA A product at. */
export const LORA_K_SLICE = 128;

/**
 * K slices S of a LoRA A product x A^T (K inputs) in a staticDecode decoding graph: the divisor of K whose slice width
 * K / S is a multiple of 4 (onnxruntime's vec4 MatMul) and nearest `slice` (the smaller S on a tie); 1 where K is not
 * a multiple of 4. onnxruntime's Gemm runs x A^T (M = rows, N = rank) as one or two 32 x 32 output tiles that walk all
 * of K; split, the product is one broadcast MatMul of M S workgroups each walking K / S (LoraStack.slices).
 */
export function loraSplitK(K: number, slice = LORA_K_SLICE): number {
  if (!(Number.isInteger(K) && K > 0 && K % 4 === 0) || !(slice > 0)) return 1;
  let best = 1;
  for (let s = 2; s <= K / 4; s++) {
    if (K % s || (K / s) % 4) continue;
    if (Math.abs(K / s - slice) < Math.abs(K / best - slice)) best = s;
  }
  return best;
}

/** q4 weights stacked by rows (the parts share K): what one MatMulNBits over q/k/v or gate/up reads. */
export function stackQ4(parts: readonly Q4Weight[]): Q4Weight {
  const { K, blockSize } = parts[0];
  if (parts.some((p) => p.K !== K || p.blockSize !== blockSize || !p.zeroPoints !== !parts[0].zeroPoints)) {
    throw new Error("stackQ4: parts differ in K, block size or zero points");
  }
  const cat = <T extends Uint8Array | Float32Array>(xs: T[], make: (n: number) => T): T => {
    const out = make(xs.reduce((a, x) => a + x.length, 0));
    let o = 0;
    for (const x of xs) (out.set(x, o), (o += x.length));
    return out;
  };
  return {
    N: parts.reduce((a, p) => a + p.N, 0),
    K,
    blockSize,
    packed: cat(parts.map((p) => p.packed), (n) => new Uint8Array(n)),
    scales: cat(parts.map((p) => p.scales), (n) => new Float32Array(n)),
    zeroPoints: parts[0].zeroPoints
      ? cat(parts.map((p) => p.zeroPoints as Uint8Array), (n) => new Uint8Array(n))
      : null,
  };
}

/**
 * The zero points of a (N, K) q4 weight viewed as (N S, K / S) (q4SplitK): row n S + t holds blocks t kb .. t kb + kb - 1
 * of row n (kb = blocks / S), each row's nibbles starting on a byte as MatMulNBits reads them.
 */
export function splitZeroPoints(zp: Uint8Array, N: number, nb: number, S: number): Uint8Array {
  const kb = nb / S, zb = Math.ceil(nb / 2), zb2 = Math.ceil(kb / 2);
  const out = new Uint8Array(N * S * zb2);
  for (let n = 0; n < N; n++) {
    for (let b = 0; b < nb; b++) {
      const v = (zp[n * zb + (b >> 1)] >> (4 * (b & 1))) & 15;
      const r = n * S + Math.floor(b / kb), j = b % kb;
      out[r * zb2 + (j >> 1)] |= v << (4 * (j & 1));
    }
  }
  return out;
}

/** Weight conversions one build made, for the next build of the same weights (DecoderOptions.prepared). */
export class PreparedWeights {
  readonly q4 = new WeakMap<Float32Array, Q4Weight>();
  readonly transposed = new WeakMap<Float32Array, Float32Array>();
  readonly f16 = new WeakMap<Float32Array, Uint16Array>();
  /**
   * f32 staticDecode graphs: a stacked group's weights (q/k/v, gate/up) concatenated along the output dimension and
   * transposed, (in, sum of outs), keyed by its first part's source array (one per group and layer).
   */
  readonly stackedT = new WeakMap<Float32Array, Float32Array>();
}

/** A built graph with the names a session feeds and fetches. */
export interface BuiltDecoder {
  bytes: Uint8Array;
  /** External data files for `InferenceSession.create(bytes, { externalData })`. */
  external: ExternalFile[];
  options: DecoderOptions;
  inputNames: string[];
  outputNames: string[];
  nodeCount: number;
  /** Compute type of hidden states and the KV cache. */
  kvType: "float32" | "float16";
  /** The attention actually built ("gqa" asked for falls back to "explicit" where it does not apply). */
  attention: AttentionKind;
  /** What the graph stores and computes in, in words ("q4 projections, f32 embedding and head, f32 compute"). */
  precision: string;
  /**
   * The packed LoRA inputs of a staticDecode graph (none elsewhere): each replaces its parts' per-target inputs
   * (see LoraStack); a captured session maps the policy's per-target feeds onto them.
   */
  loraStacks?: LoraStack[];
}

/**
 * One packed LoRA input pair of a staticDecode graph, in place of its parts' per-target inputs (`${part}.A`,
 * `${part}.B`, as the policy's graph names them, not in the graph). With R the sum of the parts' ranks and F of
 * their outputs, `slices` S says the layout:
 * - S = 1 (a stacked group, q/k/v or gate/up with every part adapted, of a graph that stacks its products):
 *   `${name}.A` (R, in) is the parts' A (r_p, in) stacked by rows in `parts` order, read by a Gemm with transB;
 *   `${name}.B` (F, R) is block-diagonal: part p's rows (its `out` outputs, in stacked order) hold its B (out, r_p)
 *   in the columns after the earlier parts' ranks, zeros elsewhere.
 * - S > 1 (every adapted target of a decoding graph, seq 1, whose input width loraSplitK splits; a stacked group or a
 *   single target): `${name}.A` (S, in / S, R) is that stacked A transposed, (in, R), viewed as S slices of the input
 *   (element (k, c) at k R + c), multiplied with x (M, S, 1, in / S) by one broadcast MatMul into S partial products
 *   (M, S, 1, R); `${name}.B` (F, S R) is the block-diagonal B repeated S times along its columns, so that the second
 *   Gemm, over the partial products as (M, S R), sums them: sum_s P_s B^T = (sum_s P_s) B^T, no ReduceSum.
 */
export interface LoraStack {
  /** `lora.{layer}.qkv`, `lora.{layer}.gate_up` (S = 1); `lora.{layer}.{qkv|gate_up|o|down|q|..}.split` (S > 1). */
  name: string;
  /** The input width (the rows of A). */
  fin: number;
  /** The parts in stacked order: their per-target input prefix (`lora.{layer}.q`) and output count. */
  parts: { name: string; fout: number }[];
  /** K slices of the A product (see above). */
  slices: number;
}

/** Whether `attention: "gqa"` applies to this model and dtype (else explicit attention is built): not to f16 compute. */
export function gqaApplies(cfg: ModelConfig, dtype: WeightDtype, shaderF16 = true): boolean {
  return (dtype !== "f16" || !shaderF16) && cfg.headDim % 8 === 0;
}

/** How a graph of `dtype` stores and computes, in words, with or without shader-f16. */
export function precisionOf(dtype: WeightDtype, shaderF16 = true): string {
  switch (dtype) {
    case "f32":
      return "f32 weights, f32 compute";
    case "f16":
      return shaderF16
        ? "f16 weights, f16 compute (norms and softmax in f32)"
        : "f16-rounded weights stored and computed in f32 (no shader-f16)";
    case "q4":
      return shaderF16
        ? "q4 projections and head, f16 embedding, f32 compute"
        : "q4 projections, f32 embedding and head, f32 compute (no shader-f16)";
    default:
      return assertNever(dtype);
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected ${JSON.stringify(x)}`);
}

/** The short name a target has in graph input names: `lora.{layer}.{q|k|v|o|gate|up|down}.A`. */
export function shortTarget(t: LoraTarget): string {
  return t.slice(0, -"_proj".length);
}

/** The A and B inputs of one LoRA product in a graph, and its K slices (LoraStack.slices). */
interface LoraIo {
  A: string;
  B: string;
  slices: number;
}

/** The groups a staticDecode graph that stacks its products runs as one MatMulNBits each (linears()). */
const STACKED_GROUPS: readonly (readonly LoraTarget[])[] = [["q_proj", "k_proj", "v_proj"], ["gate_proj", "up_proj"]];

/** A stacked group's biases concatenated in parts order (zeros for a part without one); none where no part has one. */
function stackedBias(parts: readonly { fout: number; bias: Float32Array | null }[]): Float32Array | undefined {
  if (!parts.some((p) => p.bias)) return undefined;
  const bias = new Float32Array(parts.reduce((a, p) => a + p.fout, 0));
  let o = 0;
  for (const p of parts) (p.bias && bias.set(p.bias, o), (o += p.fout));
  return bias;
}

/** A stacked group's name in its LoRA inputs: "qkv", "gate_up". */
function stackName(ts: readonly LoraTarget[]): string {
  const short = ts.map(shortTarget);
  return short.join(short.every((s) => s.length === 1) ? "" : "_");
}

type Float16Ctor = new (x: ArrayLike<number>) => { buffer: ArrayBuffer };
const NativeF16 = (globalThis as unknown as { Float16Array?: Float16Ctor }).Float16Array;

/** f16 bits of `x`: the runtime's Float16Array where it has one (2.5x faster, the same round-to-nearest-even bits), else half.ts. */
function toF16(x: Float32Array): Uint16Array {
  return NativeF16 ? new Uint16Array(new NativeF16(x).buffer) : toF16Js(x);
}

/** Builds the decoder graph for `cfg` with `weights` (HF names, f32) as initializers. */
export function buildDecoder(cfg: ModelConfig, weights: Weights, opts: DecoderOptions): BuiltDecoder {
  return new DecoderBuilder(cfg, weights, opts).build();
}

class DecoderBuilder {
  private g = new GraphBuilder("rlvr-decoder");
  private T: DType;
  private loraTargets: Set<LoraTarget>;
  /** (B, K, T, D) key and value of each layer, declared as outputs after the logits. */
  private present: [string, string][] = [];
  /** (B, K, T4 - T, D) zeros that extend keys and values to T4 columns; set by maskBias. */
  private keyZeros = "";
  /** (1) int64: T4, set by maskBias. */
  private keyLen = "";
  /** f32 graphs: position ids and the cos/sin caches for com.microsoft.RotaryEmbedding; set by ropeTables. */
  private ropeInputs: [string, string, string] | null = null;
  /** GQA graphs: per-row key counts minus one (B) int32 and the key count (scalar int32); set by gqaInputs. */
  private gqa: { seqlensK: string; total: string } | null = null;
  private useGqa: boolean;
  /** The packed LoRA inputs declared (staticDecode graphs that stack their products or split their LoRA A products). */
  private loraStacks: LoraStack[] = [];

  /** shader-f16 is there (f16 tensors allowed). */
  private f16: boolean;

  constructor(private cfg: ModelConfig, private w: Weights, private opts: DecoderOptions) {
    this.f16 = opts.shaderF16 ?? true;
    this.T = opts.dtype === "f16" && this.f16 ? DT.float16 : DT.float;
    this.loraTargets = new Set(opts.loraTargets ?? []);
    this.useGqa = opts.attention === "gqa" && gqaApplies(cfg, opts.dtype, this.f16);
  }

  /**
   * An initializer for weights the dtype keeps in half precision: f16 in f16 graphs, f32 holding
   * the f16-rounded values where the device has no shader-f16, f32 as given otherwise.
   */
  private halfInit(name: string, dims: number[], data: Float32Array): string {
    if (this.opts.dtype !== "f16") return this.g.initializer(name, { dataType: DT.float, dims, data });
    if (this.T === DT.float16) return this.g.initializer(name, { dataType: DT.float16, dims, data: this.f16Of(data) });
    return this.g.initializer(name, { dataType: DT.float, dims, data: fromF16(this.f16Of(data)) });
  }

  /** f16 bits of `data`, from DecoderOptions.prepared when an earlier build made them. */
  private f16Of(data: Float32Array): Uint16Array {
    const hit = this.opts.prepared?.f16.get(data);
    if (hit) return hit;
    const h = toF16(data);
    this.opts.prepared?.f16.set(data, h);
    return h;
  }

  build(): BuiltDecoder {
    const { cfg, g, opts } = this;
    const D = cfg.headDim, K = cfg.numKvHeads;
    const st = opts.staticDecode;
    if (st && !(this.useGqa && opts.kvCache)) {
      throw new Error('staticDecode needs attention "gqa" (f32 or q4, head dim % 8 == 0) and kvCache');
    }
    // "batch_size": transformers.js sizes its empty first past from the inputs' symbolic dims by that name.
    const bDim: Dim = st ? st.batch : opts.logprobs === false ? "batch_size" : "batch",
      sDim: Dim = st ? st.seq ?? 1 : "seq";
    if (st && !(Number.isInteger(sDim) && (sDim as number) >= 1 && (sDim as number) <= st.maxT)) {
      throw new Error(`staticDecode: seq must be an integer 1..maxT (${st.maxT}), got ${st.seq}`);
    }
    const ids = g.input("input_ids", DT.int64, [bDim, sDim]);
    const mask = st ? "" : g.input("attention_mask", DT.int64, ["batch", "total"]);
    const pos = g.input("position_ids", DT.int64, [bDim, sDim]);
    // Logits only for the last `num_logits_to_keep` positions: all of them for log-probabilities,
    // one when decoding, so the (B, S, V) tensor of a long prefill is never materialised.
    // Without log-probabilities a scalar, as transformers.js feeds it (0 keeps every position, as in transformers).
    const keep = st ? "" : g.input("num_logits_to_keep", DT.int64, opts.logprobs === false ? [] : [1]);
    const inputNames = st ? [ids, pos] : [ids, mask, pos, keep];
    const outputNames = ["logits"];
    const past: [string, string][] = [];
    if (opts.kvCache) {
      for (let i = 0; i < cfg.numLayers; i++) {
        const k = g.input(`past_key_values.${i}.key`, this.T, [bDim, K, st ? st.maxT : "past", D]);
        const v = g.input(`past_key_values.${i}.value`, this.T, [bDim, K, st ? st.maxT : "past", D]);
        past.push([k, v]);
        inputNames.push(k, v);
      }
    }
    // The adapter's alpha/r as an input, so adapter tensors can be fed exactly as trained
    // (even straight from the trainer's GPU buffers).
    if (this.loraTargets.size && opts.loraScale === undefined) inputNames.push(g.input("lora_scale", DT.float, [1]));
    if (opts.loraScale !== undefined && !(Number.isFinite(opts.loraScale) && opts.loraScale >= 0)) {
      throw new Error(`loraScale must be a finite number >= 0, got ${opts.loraScale}`);
    }
    for (let i = 0; i < cfg.numLayers; i++) {
      // Packed inputs (LoraStack): stacked groups (q/k/v, gate/up of graphs that stack them, every part adapted),
      // one A and one B input each; in decoding graphs whose A products are split along K, every adapted target.
      const stacked = new Set<LoraTarget>();
      const declare = (ts: readonly LoraTarget[]) => {
        const st = this.loraStack(i, ts), S = st.slices;
        const r = `r_${i}_${stackName(ts)}`;
        const F = st.parts.reduce((a, p) => a + p.fout, 0);
        inputNames.push(
          g.input(`${st.name}.A`, DT.float, S === 1 ? [r, st.fin] : [S, st.fin / S, r]),
          g.input(`${st.name}.B`, DT.float, [F, S === 1 ? r : `${S}${r}`]),
        );
        this.loraStacks.push(st);
        for (const t of ts) stacked.add(t);
      };
      for (const ts of this.stackedLoraGroups()) declare(ts);
      for (const t of LORA_TARGETS) {
        if (!this.loraTargets.has(t) || stacked.has(t)) continue;
        const [fout, fin] = targetDims(cfg, t);
        if (this.loraSlices(fin) > 1) {
          declare([t]);
          continue;
        }
        // One rank symbol per pair: ORT's planner treats equal symbols as equal sizes, and an
        // adapter may leave a target out (fed as rank 1 zeros) while others have rank r.
        const r = `r_${i}_${shortTarget(t)}`;
        inputNames.push(
          g.input(`lora.${i}.${shortTarget(t)}.A`, DT.float, [r, fin]),
          g.input(`lora.${i}.${shortTarget(t)}.B`, DT.float, [fout, r]),
        );
      }
    }

    const embed = getTensor(this.w, "model.embed_tokens.weight", [cfg.vocabSize, cfg.hiddenSize]);
    // q4 graphs gather from an f16 table where the device has f16 (a Cast after), else from f32.
    const q4HalfEmbed = this.opts.dtype === "q4" && this.f16;
    const embedName = q4HalfEmbed
      ? g.initializer("embed_tokens", { dataType: DT.float16, dims: embed.shape, data: this.f16Of(embed.data) })
      : this.halfInit("embed_tokens", embed.shape, embed.data);
    let x = g.op("Gather", [embedName, ids], { axis: 0 });
    if (q4HalfEmbed) x = g.op("Cast", [x], { to: DT.float });

    const bias = st
      ? this.staticInputs(st, inputNames)
      : this.useGqa
      ? this.gqaInputs(ids, mask)
      : this.maskBias(ids, mask);
    const [cos, sin] = this.ropeTables(pos);
    // Each residual sum and the norm after it are one kernel in f32 graphs (addNorm): the next
    // layer's input norm (the final norm after the last layer) takes the MLP's residual add.
    let h = this.rmsNorm(x, "model.layers.0.input_layernorm.weight");
    for (let i = 0; i < cfg.numLayers; i++) {
      const p = `model.layers.${i}`;
      const pastKv = opts.kvCache ? past[i] : null;
      const attn = this.useGqa ? this.gqaAttention(h, i, bias, pastKv) : this.attention(h, i, cos, sin, bias, pastKv);
      let h2: string;
      [h2, x] = this.addNorm(x, attn, `${p}.post_attention_layernorm.weight`);
      const [gate, up] = this.linears(h2, i, ["gate_proj", "up_proj"]);
      const act = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]), up]);
      [h, x] = this.addNorm(
        x,
        this.linear(act, i, "down_proj"),
        i + 1 < cfg.numLayers ? `model.layers.${i + 1}.input_layernorm.weight` : "model.norm.weight",
      );
    }
    x = h;
    if (st) {
      // (B, V) written by the head's own kernel: ORT's graph capture records compute dispatches only,
      // so a Reshape or Identity copying into the output would leave the output stale on replay.
      // A prefill (seq > 1) takes each row's last token: rows of (B * seq, C) at `last_index`.
      const S = st.seq ?? 1;
      let last = g.op("Reshape", [x, g.i64([st.batch * S, cfg.hiddenSize])]);
      if (S > 1) {
        const idx = g.input("last_index", DT.int64, [st.batch]);
        inputNames.push(idx);
        last = g.op("Gather", [last, idx], { axis: 0 });
      }
      this.head(last, embedName, "logits");
      g.declareOutput("logits", DT.float, [st.batch, cfg.vocabSize]);
      // GQA's present outputs are the graph outputs themselves (no Identity): ORT must see them as
      // the buffers fed as past for the in-place write.
      for (let i = 0; i < cfg.numLayers; i++) {
        for (const kind of ["key", "value"] as const) {
          g.declareOutput(`present.${i}.${kind}`, this.T, [st.batch, K, st.maxT, D]);
          outputNames.push(`present.${i}.${kind}`);
        }
      }
      const { model, external } = g.encode({ externalMinBytes: opts.externalMinBytes ?? 2 ** 20 });
      return {
        bytes: model,
        external,
        options: opts,
        inputNames,
        outputNames,
        nodeCount: g.nodeCount,
        kvType: "float32",
        attention: "gqa",
        precision: precisionOf(opts.dtype, this.f16),
        loraStacks: this.loraStacks,
      };
    }
    const keep1 = opts.logprobs === false ? g.op("Reshape", [keep, g.i64([1])]) : keep;
    x = g.op("Slice", [x, g.op("Neg", [keep1]), g.i64([2 ** 31 - 1]), g.i64([1])]);
    let logits = this.head(x, embedName);
    if (this.T !== DT.float) logits = g.op("Cast", [logits], { to: DT.float });
    g.output(logits, "logits", DT.float, ["batch", "kept", cfg.vocabSize]);
    if (opts.logprobs === false) return this.finish(inputNames, outputNames);
    // log p(target_ids) at the kept positions, so log-probabilities never ship (B, S, V) logits.
    const targets = g.input("target_ids", DT.int64, ["batch", "kept"]);
    inputNames.push(targets);
    // log p = (x_t - max) - log sum exp(x - max), from ops the WebGPU EP runs: its build has no
    // LogSoftmax, which ORT then ran on the CPU after copying the (B, kept, V) logits to the host.
    const z = g.op("Sub", [logits, g.op("ReduceMax", [logits], { axes: [-1], keepdims: 1 })]);
    const lse = g.op("Log", [g.op("ReduceSum", [g.op("Exp", [z]), g.i64([-1])], { keepdims: 1 })]); // (B, kept, 1)
    const picked = g.op("Sub", [
      g.op("GatherElements", [z, g.op("Unsqueeze", [targets, g.i64([2])])], { axis: 2 }),
      lse,
    ]);
    outputNames.push(g.output(g.op("Squeeze", [picked, g.i64([2])]), "target_logprobs", DT.float, ["batch", "kept"]));
    return this.finish(inputNames, outputNames);
  }

  /** Declares the present.* outputs after the others and encodes the graph (the graphs without staticDecode). */
  private finish(inputNames: string[], outputNames: string[]): BuiltDecoder {
    const { cfg, g, opts } = this;
    const D = cfg.headDim, K = cfg.numKvHeads;
    for (const [i, [k, v]] of this.present.entries()) {
      outputNames.push(
        g.output(k, `present.${i}.key`, this.T, ["batch", K, "total", D]),
        g.output(v, `present.${i}.value`, this.T, ["batch", K, "total", D]),
      );
    }
    const { model, external } = g.encode({ externalMinBytes: opts.externalMinBytes ?? 2 ** 20 });
    return {
      bytes: model,
      external,
      options: opts,
      inputNames,
      outputNames,
      nodeCount: g.nodeCount,
      kvType: this.T === DT.float ? "float32" : "float16",
      attention: this.useGqa ? "gqa" : "explicit",
      precision: precisionOf(opts.dtype, this.f16),
    };
  }

  /**
   * (B, 1, 1, S, T4) float additive bias: 0 where key t is visible to query s, -1e9 elsewhere,
   * over T4 = T rounded up to a multiple of ATTN_ALIGN columns (the extra columns are never
   * visible). Also sets `keyZeros` (what extends a (B, K, T, D) tensor to T4) and `keyLen`.
   */
  private maskBias(ids: string, mask: string): string {
    const g = this.g;
    const S = g.op("Squeeze", [g.op("Shape", [ids], { start: 1, end: 2 }), g.i64([0])]);
    const T = g.op("Squeeze", [g.op("Shape", [mask], { start: 1, end: 2 }), g.i64([0])]);
    const P = g.op("Sub", [T, S]);
    const a = ATTN_ALIGN;
    const T4 = g.op("Mul", [g.op("Div", [g.op("Add", [T, g.i64([a - 1], true)]), g.i64([a], true)]), g.i64([a], true)]);
    const extra = g.op("Unsqueeze", [g.op("Sub", [T4, T]), g.i64([0])]); // (1)
    // Zeros to append to keys and values. Concat, not Pad: ORT's Pad shader failed to compile on
    // lavapipe in f16 graphs.
    const zerosShape = g.op("Concat", [
      g.op("Shape", [ids], { start: 0, end: 1 }),
      g.i64([this.cfg.numKvHeads]),
      extra,
      g.i64([this.cfg.headDim]),
    ], { axis: 0 });
    this.keyZeros = g.op("Expand", [g.scalar(0, this.T === DT.float ? DT.float : DT.float16), zerosShape]); // (B, K, T4 - T, D)
    this.keyLen = g.op("Unsqueeze", [T4, g.i64([0])]);
    const rows = g.op("Range", [P, T, g.i64([1], true)]); // absolute positions of the queries
    const cols = g.op("Range", [g.i64([0], true), T, g.i64([1], true)]);
    const causal = g.op("LessOrEqual", [g.op("Unsqueeze", [cols, g.i64([0])]), g.op("Unsqueeze", [rows, g.i64([1])])]); // (S, T)
    const pad = g.op("Unsqueeze", [g.op("Cast", [mask], { to: DT.bool }), g.i64([1, 2, 3])]); // (B, 1, 1, 1, T)
    const allowed = g.op("And", [causal, pad]);
    const bias = g.op("Where", [allowed, g.scalar(0), g.scalar(-1e9)]); // (B, 1, 1, S, T)
    // The T4 - T extra columns are hidden. (Not Pad on the mask: ORT's Pad failed to compile on
    // lavapipe in f16 graphs.)
    const hiddenShape = g.op("Concat", [g.op("Shape", [bias], { start: 0, end: 4 }), extra], { axis: 0 });
    return g.op("Concat", [bias, g.op("Expand", [g.scalar(-1e9), hiddenShape])], { axis: 4 }); // (B, 1, 1, S, T4)
  }

  /**
   * GQA graphs: the (B, 1, S, T) float additive bias that hides padding (0 for real keys, -1e9 for
   * pads; GQA applies the causal mask itself), and sets `gqa`: every row gets T keys (seqlens_k =
   * T - 1, total_sequence_length = T). Rows keep the caller's padding (left for the sampler, right
   * for log-probabilities), so all rows share one key count and ORT's kernels, whose decode path
   * reads the batch-wide total, see the same layout as the explicit graph; the bias does the rest.
   */
  private gqaInputs(ids: string, mask: string): string {
    const g = this.g;
    const B = g.op("Shape", [ids], { start: 0, end: 1 }); // (1)
    const S = g.op("Shape", [ids], { start: 1, end: 2 }); // (1)
    const T = g.op("Shape", [mask], { start: 1, end: 2 }); // (1)
    const total = g.op("Cast", [g.op("Squeeze", [T, g.i64([0])])], { to: DT.int32 }); // scalar
    const seqlensK = g.op("Cast", [g.op("Expand", [g.op("Sub", [T, g.i64([1])]), B])], { to: DT.int32 }); // (B)
    this.gqa = { seqlensK, total };
    const pad = g.op("Where", [g.op("Cast", [mask], { to: DT.bool }), g.scalar(0), g.scalar(-1e9)]); // (B, T)
    const shape = g.op("Concat", [B, g.i64([1]), S, T], { axis: 0 });
    return g.op("Expand", [g.op("Unsqueeze", [pad, g.i64([1, 2])]), shape]); // (B, 1, S, T)
  }

  /**
   * staticDecode graphs: the attention bias (B, 1, 1, maxT), `seqlens_k` (B) and `total_sequence_length`
   * (1) are inputs the caller keeps on the GPU (the sampler's advance kernel moves them each step), so
   * the graph has no Shape operator and ORT places nothing on the CPU. Returns the bias.
   */
  private staticInputs(st: { batch: number; maxT: number }, inputNames: string[]): string {
    const g = this.g;
    const seqlensK = g.input("seqlens_k", DT.int32, [st.batch]);
    const total = g.input("total_sequence_length", DT.int32, [1]);
    inputNames.push(seqlensK, total);
    this.gqa = { seqlensK, total };
    return "";
  }

  /** The shape (B, S, last) of a 3-D activation `x`: a constant in staticDecode graphs, else from Shape. */
  private shape3(x: string, last: number): string {
    const st = this.opts.staticDecode;
    if (st) return this.g.i64([st.batch, st.seq ?? 1, last]);
    return this.g.op("Concat", [this.g.op("Shape", [x], { start: 0, end: -1 }), this.g.i64([last])], { axis: 0 });
  }

  /** GQA graphs: self-attention of layer i as one com.microsoft.GroupQueryAttention; returns the o_proj output (B, S, C). */
  private gqaAttention(h: string, i: number, bias: string, past: [string, string] | null): string {
    const { cfg, g } = this;
    const D = cfg.headDim, H = cfg.numHeads, K = cfg.numKvHeads;
    const p = `model.layers.${i}.self_attn`;
    if (!this.gqa || !this.ropeInputs) throw new Error("gqaAttention before gqaInputs/ropeTables");
    // (B, S, H*D), (B, S, K*D) twice
    let [q, k, v] = this.linears(h, i, ["q_proj", "k_proj", "v_proj"]);
    if (cfg.qkNorm) {
      q = g.op("Reshape", [
        this.rmsNorm(g.op("Reshape", [q, g.i64([0, 0, H, D])]), `${p}.q_norm.weight`),
        g.i64([0, 0, H * D]),
      ]);
      k = g.op("Reshape", [
        this.rmsNorm(g.op("Reshape", [k, g.i64([0, 0, K, D])]), `${p}.k_norm.weight`),
        g.i64([0, 0, K * D]),
      ]);
    }
    // RoPE at the fed position ids in the dynamic graph (not GQA's do_rotary, which derives positions from
    // seqlens_k and so would rotate left-padded rows by their column instead of their position). The
    // staticDecode graph's rows are left-aligned, so there each row's position is its key count, seqlens_k:
    // GQA's do_rotary with the same cos / sin tables rotates q and k itself (two dispatches fewer per layer,
    // where the head size allows it).
    const [pos, c, s] = this.ropeInputs;
    const st = this.opts.staticDecode;
    // ORT's GQA rotates only head sizes that are a multiple of 16 ("head_size shall be a multiple of 16").
    const gqaRope = !!st && D % 16 === 0;
    if (!gqaRope) {
      q = g.op("RotaryEmbedding", [q, pos, c, s], { interleaved: 0, num_heads: H }, "com.microsoft");
      k = g.op("RotaryEmbedding", [k, pos, c, s], { interleaved: 0, num_heads: K }, "com.microsoft");
    }
    const [out, presentK, presentV] = g.node(
      "GroupQueryAttention",
      [
        q,
        k,
        v,
        past ? past[0] : "",
        past ? past[1] : "",
        this.gqa.seqlensK,
        this.gqa.total,
        gqaRope ? c : "",
        gqaRope ? s : "",
        "",
        bias,
      ],
      {
        num_heads: H,
        kv_num_heads: K,
        scale: { float: 1 / Math.sqrt(D) },
        ...(gqaRope ? { do_rotary: 1, rotary_interleaved: 0 } : {}),
      },
      {
        domain: "com.microsoft",
        ...(st ? { outputs: [g.fresh("attn"), `present.${i}.key`, `present.${i}.value`] } : { nOut: 3 }),
      },
    );
    if (past) this.present.push([presentK, presentV]);
    return this.linear(out, i, "o_proj");
  }

  /** cos and sin of (B, 1, S, D/2) for the given positions, from caches stored as initializers. */
  private ropeTables(pos: string): [string, string] {
    const { cfg, g, opts } = this;
    const half = cfg.headDim / 2;
    const inv = ropeInvFreq(cfg);
    const cos = new Float32Array(opts.maxPositions * half);
    const sin = new Float32Array(opts.maxPositions * half);
    for (let p = 0; p < opts.maxPositions; p++) {
      for (let j = 0; j < half; j++) {
        cos[p * half + j] = Math.cos(p * inv[j]);
        sin[p * half + j] = Math.sin(p * inv[j]);
      }
    }
    const init = (name: string, data: Float32Array) =>
      this.T === DT.float
        ? g.initializer(name, { dataType: DT.float, dims: [opts.maxPositions, half], data })
        : g.initializer(name, { dataType: DT.float16, dims: [opts.maxPositions, half], data: toF16(data) });
    if (this.T === DT.float) {
      // f32: com.microsoft.RotaryEmbedding reads the caches and positions itself (see rope()).
      this.ropeInputs = [pos, init("rope_cos", cos), init("rope_sin", sin)];
      return ["", ""];
    }
    const c = g.op("Unsqueeze", [g.op("Gather", [init("rope_cos", cos), pos], { axis: 0 }), g.i64([1])]);
    const s = g.op("Unsqueeze", [g.op("Gather", [init("rope_sin", sin), pos], { axis: 0 }), g.i64([1])]);
    return [c, s];
  }

  /** Rotate-half RoPE on x of (B, heads, S, D). */
  private rope(x: string, cos: string, sin: string): string {
    const g = this.g;
    if (this.ropeInputs) {
      // One kernel instead of nine (two Slices, four Muls, Sub, Add, Concat): decoding is bound by
      // the number of dispatches. Non-interleaved is rotate-half, the caches (maxPositions, D/2).
      const [pos, c, s] = this.ropeInputs;
      return g.op("RotaryEmbedding", [x, pos, c, s], { interleaved: 0 }, "com.microsoft");
    }
    const half = this.cfg.headDim / 2;
    const x1 = g.op("Slice", [x, g.i64([0]), g.i64([half]), g.i64([3])]);
    const x2 = g.op("Slice", [x, g.i64([half]), g.i64([2 * half]), g.i64([3])]);
    const o1 = g.op("Sub", [g.op("Mul", [x1, cos]), g.op("Mul", [x2, sin])]);
    const o2 = g.op("Add", [g.op("Mul", [x2, cos]), g.op("Mul", [x1, sin])]);
    return g.op("Concat", [o1, o2], { axis: 3 });
  }

  /** Self-attention of layer i on normed h (B, S, C); returns the o_proj output (B, S, C). */
  private attention(
    h: string,
    i: number,
    cos: string,
    sin: string,
    bias: string,
    past: [string, string] | null,
  ): string {
    const { cfg, g } = this;
    const D = cfg.headDim, H = cfg.numHeads, K = cfg.numKvHeads, G = H / K;
    const p = `model.layers.${i}.self_attn`;
    let q = g.op("Reshape", [this.linear(h, i, "q_proj"), g.i64([0, 0, H, D])]); // (B, S, H, D)
    let k = g.op("Reshape", [this.linear(h, i, "k_proj"), g.i64([0, 0, K, D])]);
    const v0 = g.op("Reshape", [this.linear(h, i, "v_proj"), g.i64([0, 0, K, D])]);
    if (cfg.qkNorm) {
      q = this.rmsNorm(q, `${p}.q_norm.weight`);
      k = this.rmsNorm(k, `${p}.k_norm.weight`);
    }
    q = this.rope(g.op("Transpose", [q], { perm: [0, 2, 1, 3] }), cos, sin); // (B, H, S, D)
    k = this.rope(g.op("Transpose", [k], { perm: [0, 2, 1, 3] }), cos, sin); // (B, K, S, D)
    let v = g.op("Transpose", [v0], { perm: [0, 2, 1, 3] });
    if (past) {
      k = g.op("Concat", [past[0], k], { axis: 2 }); // (B, K, T, D)
      v = g.op("Concat", [past[1], v], { axis: 2 });
      this.present.push([k, v]);
    }
    // Grouped queries without repeating K/V, the G query heads of a kv head as rows of one
    // product: (B, K, G*S, D) @ (B, K, D, T4). Keys and values are zero-padded to T4 (a multiple of
    // ATTN_ALIGN, masked by the bias): onnxruntime-web's WebGPU MatMul takes its vec4 kernel only
    // when the inner and output widths are multiples of 4, and its scalar kernel made these two
    // products 4.6x slower on every step where T was not (docs/policy.md, "Decoding step").
    const qs = g.op("Mul", [q, g.scalar(1 / Math.sqrt(D), this.T === DT.float ? DT.float : DT.float16)]);
    const q4 = g.op("Reshape", [qs, g.i64([0, K, -1, D])]); // (B, K, G*S, D): head h = k*G + g
    const kT = g.op("Transpose", [g.op("Concat", [k, this.keyZeros], { axis: 2 })], { perm: [0, 1, 3, 2] }); // (B, K, D, T4)
    const shape5 = g.op("Concat", [g.i64([0, K, G, -1]), this.keyLen], { axis: 0 });
    let scores = g.op("Reshape", [g.op("MatMul", [q4, kT]), shape5]); // (B, K, G, S, T4)
    if (this.T !== DT.float) scores = g.op("Cast", [scores], { to: DT.float });
    let probs = g.op("Softmax", [g.op("Add", [scores, bias])], { axis: -1 });
    if (this.T !== DT.float) probs = g.op("Cast", [probs], { to: this.T });
    const p4 = g.op("Reshape", [probs, g.op("Concat", [g.i64([0, K, -1]), this.keyLen], { axis: 0 })]); // (B, K, G*S, T4)
    const o4k = g.op("MatMul", [p4, g.op("Concat", [v, this.keyZeros], { axis: 2 })]); // (B, K, G*S, D)
    const o4 = g.op("Transpose", [g.op("Reshape", [o4k, g.i64([0, H, -1, D])])], { perm: [0, 2, 1, 3] }); // (B, S, H, D)
    return this.linear(g.op("Reshape", [o4, g.i64([0, 0, H * D])]), i, "o_proj");
  }

  /**
   * [RMSNorm(x + skip), x + skip]: in f32 graphs one com.microsoft SkipSimplifiedLayerNormalization
   * (its fourth output is the sum; the WebGPU EP and the CPU provider have it), one kernel instead
   * of an Add and the norm; otherwise Add and rmsNorm.
   */
  private addNorm(x: string, skip: string, name: string): [string, string] {
    const g = this.g;
    if (this.T !== DT.float) {
      const sum = g.op("Add", [x, skip]);
      return [this.rmsNorm(sum, name), sum];
    }
    const w = getTensor(this.w, name);
    const wn = g.initializer(name, { dataType: DT.float, dims: w.shape, data: w.data });
    const [normed, , , sum] = g.node("SkipSimplifiedLayerNormalization", [x, skip, wn], {
      epsilon: { float: this.cfg.rmsNormEps },
    }, {
      domain: "com.microsoft",
      outputs: [g.fresh("skipnorm"), "", "", g.fresh("residual")],
    });
    return [normed, sum];
  }

  /** RMSNorm over the last axis, computed in float32 as HF does, weight from `name`. */
  private rmsNorm(x: string, name: string): string {
    const g = this.g;
    const w = getTensor(this.w, name);
    const wn = g.initializer(name, { dataType: DT.float, dims: w.shape, data: w.data });
    // f32: ORT's SimplifiedLayerNormalization (onnx domain, in the WebGPU EP and the CPU provider),
    // one kernel instead of six; decoding is bound by the number of dispatches.
    if (this.T === DT.float) {
      return g.op("SimplifiedLayerNormalization", [x, wn], {
        axis: -1,
        epsilon: { float: this.cfg.rmsNormEps },
        stash_type: 1,
      });
    }
    const xf = g.op("Cast", [x], { to: DT.float });
    const ms = g.op("ReduceMean", [g.op("Mul", [xf, xf])], { axes: [-1], keepdims: 1 });
    const y = g.op("Mul", [g.op("Div", [xf, g.op("Sqrt", [g.op("Add", [ms, g.scalar(this.cfg.rmsNormEps)])])]), wn]);
    return g.op("Cast", [y], { to: this.T });
  }

  /** x @ W^T (+ bias) (+ LoRA delta) for target `t` of layer i. */
  private linear(x: string, i: number, t: LoraTarget): string {
    const { cfg, g } = this;
    const wName = baseKey(i, t);
    const name = wName.slice(0, -".weight".length);
    const [fout, fin] = targetDims(cfg, t);
    const w = getTensor(this.w, wName, [fout, fin]);
    const b = this.biasOf(i, t);
    const lora = this.loraTargets.has(t);
    if (this.opts.dtype !== "q4" && this.T === DT.float && b) {
      // f32 compute with a bias: one Gemm on (N, in) with the bias as its C input instead of MatMul
      // + Add (decoding is bound by the number of dispatches), the LoRA delta summed by the next Gemm.
      const x2 = this.loraInput(x, fin).x2;
      const bn = this.halfInit(`${name}.bias`, [fout], b.data);
      let y2 = g.op("Gemm", [x2, this.matmulW("", name, w.data, fout, fin), bn]);
      if (lora) y2 = this.loraDelta(x, fin, this.loraIo(i, [t]), y2);
      return g.op("Reshape", [y2, this.shape3(x, fout)]);
    }
    // q4: the bias as MatMulNBits' own bias input (one dispatch fewer per q/k/v projection and step); else an Add.
    const q4Bias = b && this.opts.dtype === "q4" && this.T === DT.float ? b.data : undefined;
    let y = this.opts.dtype === "q4"
      ? this.q4Product(x, name, this.q4Of(w.data, fout, fin), q4Bias)
      : this.matmulW(x, name, w.data, fout, fin);
    if (b && !q4Bias) {
      y = g.op("Add", [y, this.halfInit(`${name}.bias`, [fout], b.data)]);
    }
    return lora ? this.withLora(y, x, i, t) : y;
  }

  /** The bias of target t of layer i (q/k/v of models with attention biases), or null. */
  private biasOf(i: number, t: LoraTarget): Tensor | null {
    if (!this.cfg.attentionBias || !(t === "q_proj" || t === "k_proj" || t === "v_proj")) return null;
    return getTensor(this.w, `${baseKey(i, t).slice(0, -".weight".length)}.bias`, [targetDims(this.cfg, t)[0]]);
  }

  /** Whether this graph stacks q/k/v and gate/up (DecoderOptions.decodeProducts). */
  private stacks(): boolean {
    return !!this.opts.staticDecode && this.opts.dtype === "q4" && this.T === DT.float &&
      (this.opts.decodeProducts ?? "auto") !== "plain";
  }

  /**
   * The linears `ts` of layer i over one input x: where the graph stacks them (stacks()), one MatMulNBits over their
   * weights' rows (biases stacked too) and a Split, each part then getting its LoRA delta; else one linear each.
   */
  private linears(x: string, i: number, ts: readonly LoraTarget[]): string[] {
    if (this.stacksFloat(ts)) return this.floatLinears(x, i, ts);
    if (!this.stacks()) return ts.map((t) => this.linear(x, i, t));
    const { cfg, g } = this;
    const parts = ts.map((t) => {
      const wName = baseKey(i, t);
      const [fout, fin] = targetDims(cfg, t);
      return {
        t,
        fout,
        fin,
        q: this.q4Of(getTensor(this.w, wName, [fout, fin]).data, fout, fin),
        bias: this.biasOf(i, t)?.data ?? null,
      };
    });
    const N = parts.reduce((a, p) => a + p.fout, 0);
    const bias = stackedBias(parts);
    let y = this.q4Product(
      x,
      `model.layers.${i}.${ts.map(shortTarget).join("_")}`,
      stackQ4(parts.map((p) => p.q)),
      bias,
    );
    if (this.stacksLora(ts)) {
      // Every part adapted: the LoRA deltas of all parts in two Gemms over the stacked product before the Split,
      // x A_stack^T then (that) B_bd^T + y with B block-diagonal (LoraStack), instead of two per part.
      const y2 = g.op("Reshape", [y, g.i64([-1, N])]);
      y = g.op("Reshape", [this.loraDelta(x, parts[0].fin, this.loraIo(i, ts), y2), this.shape3(x, N)]);
    }
    const outs = g.node("Split", [y, g.i64(parts.map((p) => p.fout))], { axis: -1 }, { nOut: parts.length });
    if (this.stacksLora(ts)) return outs;
    return outs.map((o, j) => (this.loraTargets.has(ts[j]) ? this.withLora(o, x, i, ts[j]) : o));
  }

  /**
   * Whether this graph runs group ts as one float product (floatLinears): staticDecode graphs of f32 compute that do not
   * store q4 weights (decodeProducts not "plain"), where every part of the group is adapted or none is; a partly
   * adapted group, f16 compute and the policy's own graph keep one product per part (linear()).
   */
  private stacksFloat(ts: readonly LoraTarget[]): boolean {
    if (!this.opts.staticDecode || this.opts.dtype === "q4" || this.T !== DT.float) return false;
    if ((this.opts.decodeProducts ?? "auto") === "plain") return false;
    const adapted = ts.filter((t) => this.loraTargets.has(t)).length;
    return adapted === 0 || adapted === ts.length;
  }

  /**
   * The float linears `ts` of layer i over x as one product (stacksFloat): x times the parts' weights concatenated
   * along the output dimension, transposed (in, sum of outs) and stored in place of the per-part ones, with the
   * concatenated biases as Gemm's C input where the model has them (as linear() does per part), then the stacked
   * LoRA (two Gemms, LoraStack) where every part is adapted, then a Split. Each output is the dot product linear() takes.
   */
  private floatLinears(x: string, i: number, ts: readonly LoraTarget[]): string[] {
    const { cfg, g } = this;
    const parts = ts.map((t) => {
      const [fout, fin] = targetDims(cfg, t);
      return {
        fout,
        fin,
        w: getTensor(this.w, baseKey(i, t), [fout, fin]).data,
        bias: this.biasOf(i, t)?.data ?? null,
      };
    });
    const fin = parts[0].fin;
    if (parts.some((p) => p.fin !== fin)) throw new Error("floatLinears: parts differ in their input width");
    const N = parts.reduce((a, p) => a + p.fout, 0);
    const name = `model.layers.${i}.${ts.map(shortTarget).join("_")}`;
    let wt = this.opts.prepared?.stackedT.get(parts[0].w);
    if (!wt) {
      wt = new Float32Array(fin * N);
      let o = 0;
      for (const p of parts) {
        for (let n = 0; n < p.fout; n++) {
          const row = n * fin;
          for (let k = 0; k < fin; k++) wt[k * N + o + n] = p.w[row + k];
        }
        o += p.fout;
      }
      this.opts.prepared?.stackedT.set(parts[0].w, wt);
    }
    const wn = this.halfInit(`${name}.weight_t`, [fin, N], wt);
    const bias = stackedBias(parts);
    const lora = this.stacksLora(ts);
    let y: string;
    if (bias || lora) {
      const x2 = this.loraInput(x, fin).x2;
      let y2 = bias ? g.op("Gemm", [x2, wn, this.halfInit(`${name}.bias`, [N], bias)]) : g.op("MatMul", [x2, wn]);
      if (lora) {
        // x A_stack^T, then (that) B_bd^T + y with B block-diagonal (LoraStack): two Gemms for the group.
        y2 = this.loraDelta(x, fin, this.loraIo(i, ts), y2);
      }
      y = g.op("Reshape", [y2, this.shape3(x, N)]);
    } else {
      y = g.op("MatMul", [x, wn]);
    }
    return g.node("Split", [y, g.i64(parts.map((p) => p.fout))], { axis: -1 }, { nOut: parts.length });
  }

  /** The groups linears() stacks whose every part has LoRA (their LoRA inputs stacked too): none where the graph does not stack. */
  private stackedLoraGroups(): LoraTarget[][] {
    return STACKED_GROUPS.filter((ts) => this.stacksLora(ts)).map((ts) => [...ts]);
  }

  /** Whether linears() applies the LoRA of group ts on the stacked product (stacks() or stacksFloat(), every part adapted). */
  private stacksLora(ts: readonly LoraTarget[]): boolean {
    return (this.stacks() || this.stacksFloat(ts)) && ts.every((t) => this.loraTargets.has(t));
  }

  /** The packed LoRA inputs of group ts (or of one target) in layer i. */
  private loraStack(i: number, ts: readonly LoraTarget[]): LoraStack {
    const fin = targetDims(this.cfg, ts[0])[1];
    const slices = this.loraSlices(fin);
    return {
      name: `lora.${i}.${stackName(ts)}${slices > 1 ? ".split" : ""}`,
      fin,
      parts: ts.map((t) => ({ name: `lora.${i}.${shortTarget(t)}`, fout: targetDims(this.cfg, t)[0] })),
      slices,
    };
  }

  /**
   * K slices of the LoRA A products over inputs of width fin (LoraStack.slices): loraSplitK in the decoding graphs of
   * staticDecode (seq 1); 1 elsewhere (the prefill, the policy's own graph).
   */
  private loraSlices(fin: number): number {
    const st = this.opts.staticDecode;
    return st && (st.seq ?? 1) === 1 && this.T === DT.float ? loraSplitK(fin, this.opts.loraKSlice) : 1;
  }

  /** The A and B inputs of the LoRA of linears ts of layer i (a stacked group, or one target), and its K slices. */
  private loraIo(i: number, ts: readonly LoraTarget[]): LoraIo {
    const fin = targetDims(this.cfg, ts[0])[1];
    if (ts.length > 1 || this.loraSlices(fin) > 1) {
      const st = this.loraStack(i, ts);
      return { A: `${st.name}.A`, B: `${st.name}.B`, slices: st.slices };
    }
    const n = `lora.${i}.${shortTarget(ts[0])}`;
    return { A: `${n}.A`, B: `${n}.B`, slices: 1 };
  }

  /** y + the LoRA delta of target t of layer i (x its linear's input). */
  private withLora(y: string, x: string, i: number, t: LoraTarget): string {
    const g = this.g;
    const [fout, fin] = targetDims(this.cfg, t);
    const io = this.loraIo(i, [t]);
    if (this.T === DT.float) {
      // y + delta as the second Gemm's C input: one kernel fewer per adapted linear (decoding is
      // bound by the number of dispatches), the same float32 sum as the Add.
      const y2 = g.op("Reshape", [y, g.i64([-1, fout])]);
      return g.op("Reshape", [
        this.loraDelta(x, fin, io, y2),
        this.opts.staticDecode ? this.shape3(x, fout) : g.op("Shape", [y]),
      ]);
    }
    const delta = g.op("Reshape", [
      this.loraDelta(x, fin, io),
      this.opts.staticDecode ? this.shape3(x, fout) : g.op("Shape", [y]),
    ]);
    return g.op("Add", [y, g.op("Cast", [delta], { to: this.T })]);
  }

  /** Per linear input x: x as (N, in) float32, and lora_scale * that, made once for the linears sharing x. */
  private loraInputs = new Map<string, { x2: string; scaled: string | null }>();

  private loraInput(x: string, fin: number): { x2: string; scaled: string | null } {
    let e = this.loraInputs.get(x);
    if (!e) {
      const xf = this.T === DT.float ? x : this.g.op("Cast", [x], { to: DT.float });
      e = { x2: this.g.op("Reshape", [xf, this.g.i64([-1, fin])]), scaled: null };
      this.loraInputs.set(x, e);
    }
    return e;
  }

  /**
   * The LoRA delta of `io` over the linear input x (.., fin) as (N, out) float32, plus `c` (the linear's output, as
   * the second Gemm's C input) where given: (x A^T) B^T scaled (loraXa, loraBAttrs).
   */
  private loraDelta(x: string, fin: number, io: LoraIo, c?: string): string {
    return this.g.op("Gemm", [this.loraXa(x, fin, io.A, io.slices), io.B, ...(c ? [c] : [])], this.loraBAttrs());
  }

  /**
   * lora_scale * (x A^T) for the A input named `a` (a target's, or a stack's), float32, computed as
   * (lora_scale * x) A^T: the scale is one Mul per input shared by q/k/v (and by gate/up) instead of one per
   * target. One slice: a Gemm with transB reads A (r, in) as fed, (N, r) out. S slices (LoraStack): x as
   * (M, S, 1, in / S) times A (S, in / S, R), one MatMul broadcast over the slices (onnxruntime's packed MatMul
   * program: a workgroup per row and slice for R <= 32), whose S partial products (M, S, 1, R) go on as (M, S R)
   * to the second Gemm, which sums them against the repeated B. The Reshapes are views: no dispatch.
   */
  private loraXa(x: string, fin: number, a: string, slices: number): string {
    const g = this.g;
    const e = this.loraInput(x, fin);
    // With loraScale fixed, the scale is the second Gemm's alpha (loraBAttrs) and x goes in as it is.
    const xs = this.opts.loraScale !== undefined ? e.x2 : (e.scaled ??= g.op("Mul", [e.x2, "lora_scale"]));
    if (slices === 1) return g.op("Gemm", [xs, a], { transB: 1 });
    const M = this.opts.staticDecode?.batch;
    if (!M || fin % slices) throw new Error(`loraXa: ${slices} slices of ${fin} inputs outside a decoding graph`);
    const x4 = g.op("Reshape", [xs, g.i64([M, slices, 1, fin / slices])]);
    return g.op("Reshape", [g.op("MatMul", [x4, a]), g.i64([M, -1])]);
  }

  /** Attributes of the Gemm with B (out, r): transposed, and alpha = loraScale where it is fixed. */
  private loraBAttrs(): Record<string, AttrValue> {
    return this.opts.loraScale === undefined ? { transB: 1 } : { transB: 1, alpha: { float: this.opts.loraScale } };
  }

  /** The q4 blocks of HF weight w (out, in), from `prepared` where an earlier build made them. */
  private q4Of(w: Float32Array, out: number, inp: number): Q4Weight {
    const q = this.opts.prepared?.q4.get(w) ?? quantizeQ4({ shape: [out, inp], data: w });
    this.opts.prepared?.q4.set(w, q);
    return q;
  }

  /** One MatMulNBits node: x (.., q.K) times q's weight transposed (+ bias), into `outName` where given. */
  private nbits(x: string, name: string, q: Q4Weight, bias?: Float32Array, outName?: string): string {
    return this.nbitsOver(x, q, this.nbitsWeights(name, q, bias), outName);
  }

  /** The initializers of q (and the bias) as MatMulNBits inputs 1-5, for one or more nodes over the same weight. */
  private nbitsWeights(name: string, q: Q4Weight, bias?: Float32Array): string[] {
    const g = this.g;
    const nb = Math.ceil(q.K / q.blockSize);
    const inputs = [
      g.initializer(`${name}.q4`, { dataType: DT.uint8, dims: [q.N, nb, q.blockSize / 2], data: q.packed }),
      g.initializer(`${name}.scales`, { dataType: DT.float, dims: [q.N * nb], data: q.scales }),
    ];
    if (q.zeroPoints) {
      inputs.push(g.initializer(`${name}.zp`, { dataType: DT.uint8, dims: [q.zeroPoints.length], data: q.zeroPoints }));
    }
    // Inputs 3 (zero points) and 4 (g_idx) may be empty names before input 5, the bias (N).
    if (bias) {
      inputs.push(
        ...(q.zeroPoints ? [] : [""]),
        "",
        g.initializer(`${name}.bias`, { dataType: DT.float, dims: [q.N], data: bias }),
      );
    }
    return inputs;
  }

  /** A MatMulNBits node of x over the weight inputs `w` (nbitsWeights of q). */
  private nbitsOver(x: string, q: Q4Weight, w: string[], outName?: string): string {
    const attrs: Record<string, AttrValue> = { K: q.K, N: q.N, bits: 4, block_size: q.blockSize };
    if (this.opts.q4Accuracy === 4) attrs.accuracy_level = 4;
    return this.g.node("MatMulNBits", [x, ...w], attrs, {
      domain: "com.microsoft",
      ...(outName ? { outputs: [outName] } : {}),
    })[0];
  }

  /**
   * x (B, S, K) times q's weight (N, K) transposed (+ bias) as (B, S, N): one MatMulNBits, or in staticDecode graphs with
   * decodeProducts "split" or "auto" (the default) the product split along K where q4SplitK says so: x as (M s, K / s), the weight's
   * bytes as (N s, K / s) (zero points repacked per row, the bias on each row's first slice), and the s diagonal terms
   * of each output summed (a 0/1 mask and ReduceSum).
   */
  private q4Product(x: string, name: string, q: Q4Weight, bias?: Float32Array): string {
    const g = this.g;
    const st = this.opts.staticDecode;
    const M = st ? st.batch * (st.seq ?? 1) : 0;
    const mode = this.opts.decodeProducts ?? "auto";
    if (st && M >= ORT_WIDE_TILE_MIN_M && ((mode === "rows" && M <= 16) || (mode === "auto" && M <= ROWS_AUTO_MAX))) {
      // The rows in groups of fewer than ORT_WIDE_TILE_MIN_M (onnxruntime's decoding kernel), one MatMulNBits each
      // over the same weight, concatenated.
      const sizes: number[] = [];
      for (let left = M; left > 0; left -= ORT_WIDE_TILE_MIN_M - 1) sizes.push(Math.min(ORT_WIDE_TILE_MIN_M - 1, left));
      const parts = g.node("Split", [g.op("Reshape", [x, g.i64([M, q.K])]), g.i64(sizes)], { axis: 0 }, {
        nOut: sizes.length,
      });
      const w = this.nbitsWeights(name, q, bias);
      return g.op("Reshape", [
        g.op("Concat", parts.map((xp) => this.nbitsOver(xp, q, w)), { axis: 0 }),
        this.shape3(x, q.N),
      ]);
    }
    const S = st && q.blockSize === 32 && (mode === "split" || mode === "auto") ? q4SplitK(M, q.N, q.K) : 1;
    if (S === 1) return this.nbits(x, name, q, bias);
    const { N, K } = q, nb = K / q.blockSize;
    const qs: Q4Weight = {
      N: N * S,
      K: K / S,
      blockSize: q.blockSize,
      packed: q.packed,
      scales: q.scales,
      zeroPoints: q.zeroPoints ? splitZeroPoints(q.zeroPoints, N, nb, S) : null,
    };
    let bs: Float32Array | undefined;
    if (bias) {
      bs = new Float32Array(N * S);
      for (let n = 0; n < N; n++) bs[n * S] = bias[n];
    }
    const z = this.nbits(g.op("Reshape", [x, g.i64([M * S, K / S])]), `${name}.split${S}`, qs, bs); // (M S, N S)
    const eye = new Float32Array(S * S);
    for (let s = 0; s < S; s++) eye[s * S + s] = 1;
    const mask = g.initializer(`${name}.split${S}.diag`, { dataType: DT.float, dims: [1, S, 1, S], data: eye });
    const diag = g.op("Mul", [g.op("Reshape", [z, g.i64([M, S, N, S])]), mask]);
    return g.op("Reshape", [g.op("ReduceSum", [diag, g.i64([1, 3])], { keepdims: 0 }), this.shape3(x, N)]);
  }

  /** x (.., in) times the transpose of HF weight (out, in), stored per the weight dtype; x "" returns the f32/f16 (in, out) initializer alone. */
  private matmulW(x: string, name: string, w: Float32Array, out: number, inp: number, outName?: string): string {
    const g = this.g;
    if (this.opts.dtype === "q4") return this.nbits(x, name, this.q4Of(w, out, inp), undefined, outName);
    let wt = this.opts.prepared?.transposed.get(w);
    if (!wt) {
      wt = transpose2d(w, out, inp);
      this.opts.prepared?.transposed.set(w, wt);
    }
    const wn = this.halfInit(`${name}.weight_t`, [inp, out], wt);
    return x === "" ? wn : g.op("MatMul", [x, wn]);
  }

  /** Logits (B, S', V) from the final hidden states: tied embeddings or lm_head. */
  private head(x: string, embedName: string, out2d?: string): string {
    const { cfg, g } = this;
    const V = cfg.vocabSize, C = cfg.hiddenSize;
    const wName = cfg.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight";
    if (this.opts.dtype === "q4" && this.f16) {
      return this.matmulW(x, "lm_head", getTensor(this.w, wName, [V, C]).data, V, C, out2d);
    }
    // Gemm with transB reads the (V, C) matrix as stored, so tied embeddings are kept once (q4
    // graphs without f16 too: their embedding is f32).
    const wn = cfg.tieWordEmbeddings
      ? embedName
      : this.halfInit("lm_head", [V, C], getTensor(this.w, wName, [V, C]).data);
    // out2d: x is already (N, C) and the Gemm writes the named (N, V) output itself.
    if (out2d && this.opts.headMatMul) {
      const w = getTensor(this.w, wName, [V, C]).data;
      let wt = this.opts.prepared?.transposed.get(w);
      if (!wt) {
        wt = transpose2d(w, V, C);
        this.opts.prepared?.transposed.set(w, wt);
      }
      return g.node("MatMul", [x, this.halfInit("lm_head.weight_t", [C, V], wt)], {}, { outputs: [out2d] })[0];
    }
    if (out2d) return g.node("Gemm", [x, wn], { transB: 1 }, { outputs: [out2d] })[0];
    const x2 = g.op("Reshape", [x, g.i64([-1, C])]);
    const y2 = g.op("Gemm", [x2, wn], { transB: 1 });
    return g.op("Reshape", [y2, this.shape3(x, V)]);
  }
}
