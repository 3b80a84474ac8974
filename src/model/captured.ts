// Captured decoding: one onnxruntime-web session over the fixed-shape decoding graph (decoder.ts
// `staticDecode`) with `enableGraphCapture`, so that after its first run every decoding step replays
// the recorded dispatches: no per-kernel work in ORT's wasm, no bind groups or uniform writes, a few
// submits. Every input and output is a GPU buffer of fixed shape: the token ids, positions, per-row key
// counts and the longest row's key count (moved on by decode_advance.wgsl on the GPU), the KV cache
// preallocated to `maxT` columns and fed as past and present at once (GroupQueryAttention writes the
// new column in place), the logits, and the adapter. Rows are left-aligned (row b's keys in columns
// 0..len_b-1, no padding): under capture ORT's GQA reads each row's key count from `seqlens_k`, and
// it accepts no attention bias (its check wants the bias as wide as the host-side total, which is
// unknown there), so the dynamic graph's left padding and bias cannot be used.
//
// Why every buffer is allocated by ORT (outputs of a small Expand session) and not by us: with graph
// capture onnxruntime-web 1.30 binds inputs and outputs once, at the first run, but registers a caller's
// GPUBuffer only for the length of each run; the next run's bound tensors then point at released
// handles (its output processing throws, and buffers passed in again map to new handles the capture
// never saw). A buffer ORT handed out as an output stays registered for good. Outputs must also be
// preallocated: one ORT allocates itself during the capture run is not the one replays write.
import type { ModelConfig } from "./config.ts";
import type { BuiltDecoder, LoraStack } from "./onnx/decoder.ts";
import { DT, GraphBuilder } from "./onnx/proto.ts";
import { ort, QUIET_SESSION } from "./onnx/ort.ts";
import type { KvCache, StepInput } from "./policy.ts";
import { DecodeAdvance } from "../gpu/kernels/decode_advance.ts";
import { KvLoad } from "../gpu/kernels/kv_load.ts";
import { type LoraBlockPlace, LoraBlocks } from "../gpu/kernels/lora_block.ts";

type ZeroType = "float32" | "int64" | "int32";

/** GPU tensors of zeros that onnxruntime-web allocated (and keeps registered), with the session that made them. */
async function ortZeros(
  device: GPUDevice,
  specs: readonly { name: string; type: ZeroType; dims: readonly number[] }[],
): Promise<{ session: ort.InferenceSession; tensors: Record<string, ort.Tensor> }> {
  const g = new GraphBuilder("zeros");
  const zero = {
    float32: g.initializer("z_f32", { dataType: DT.float, dims: [], data: new Float32Array(1) }),
    int64: g.initializer("z_i64", { dataType: DT.int64, dims: [], data: new BigInt64Array(1) }),
    int32: g.initializer("z_i32", { dataType: DT.int32, dims: [], data: new Int32Array(1) }),
  };
  const dt = { float32: DT.float, int64: DT.int64, int32: DT.int32 } as const;
  const feeds: Record<string, ort.Tensor> = {};
  // A shape input per output: nothing folds into a constant, every output is its own allocation.
  for (const [i, s] of specs.entries()) {
    const shape = g.input(`shape_${i}`, DT.int64, [s.dims.length]);
    g.output(g.op("Expand", [zero[s.type], shape]), s.name, dt[s.type], s.dims.map((_, j) => `d${i}_${j}`));
    feeds[shape] = new ort.Tensor("int64", BigInt64Array.from(s.dims.map(BigInt)), [s.dims.length]);
  }
  const ep = { name: "webgpu", device } as unknown as ort.InferenceSession.ExecutionProviderConfig;
  const session = await ort.InferenceSession.create(g.encode().model, {
    ...QUIET_SESSION,
    executionProviders: [ep],
    preferredOutputLocation: "gpu-buffer",
  });
  return { session, tensors: await session.run(feeds) };
}

/** The float32 values of CPU tensor t (adapter input `name`). */
function floats(t: ort.Tensor, name: string): Float32Array {
  if (t.data instanceof Float32Array) return t.data;
  throw new Error(`captured session: adapter input ${name} is neither a GPU buffer nor float32`);
}

/** Records the adapter feeds' values into a captured session's adapter buffers: GPU feeds copied on `enc`, CPU ones written. */
function recordAdapter(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  feeds: Record<string, ort.Tensor>,
  dstOf: (name: string) => GPUBuffer,
): void {
  for (const [name, t] of Object.entries(feeds)) {
    const dst = dstOf(name);
    const bytes = t.dims.reduce((a, b) => a * b, 1) * 4;
    if (t.location === "gpu-buffer") enc.copyBufferToBuffer(t.gpuBuffer, 0, dst, 0, bytes);
    else if (t.data instanceof Float32Array) device.queue.writeBuffer(dst, 0, t.data);
    else throw new Error(`captured session: adapter input ${name} is neither a GPU buffer nor float32`);
  }
}

/**
 * How the policy's per-target adapter feeds fill one packed LoRA input pair of a staticDecode graph (LoraStack), of
 * S slices, with R the sum of the parts' ranks and F of their outputs. S = 1: part p's A (r_p, fin) at rows a0.. of
 * `${name}.A` (R, fin) (buffer copies), its B (fout, r_p) at rows row0.. and columns a0.. of the block-diagonal
 * `${name}.B` (F, R). S > 1: its A transposed into columns a0.. of `${name}.A` (fin, R) (viewed as (S, fin / S, R)),
 * its B at rows row0.. and columns s R + a0.. of `${name}.B` (F, S R) for every s. `placeA` (S > 1) and `placeB` index
 * the session's places: the moves lora_block.wgsl makes of GPU feeds and placeInto of CPU ones.
 */
interface StackPlan {
  name: string;
  fin: number;
  F: number;
  R: number;
  S: number;
  parts: { name: string; fout: number; r: number; a0: number; row0: number; placeA: number; placeB: number }[];
}

/** The stacks' plans for the per-target feeds `adapter` (their ranks), and the places of their parts. */
function planStacks(stacks: readonly LoraStack[], adapter: Record<string, ort.Tensor>): {
  plans: StackPlan[];
  places: LoraBlockPlace[];
} {
  const plans: StackPlan[] = [], places: LoraBlockPlace[] = [];
  for (const st of stacks) {
    const ranks = st.parts.map((p) => {
      const a = adapter[`${p.name}.A`], b = adapter[`${p.name}.B`];
      if (!a || !b) throw new Error(`captured session: no adapter feeds ${p.name}.A/B for the packed ${st.name}`);
      const r = a.dims[0];
      if (
        a.dims.length !== 2 || a.dims[1] !== st.fin || b.dims.length !== 2 || b.dims[0] !== p.fout || b.dims[1] !== r
      ) {
        throw new Error(
          `captured session: ${p.name}.A [${a.dims.join(", ")}] and .B [${
            b.dims.join(", ")
          }] are not (r, ${st.fin}) and (${p.fout}, r)`,
        );
      }
      return r;
    });
    const R = ranks.reduce((a, r) => a + r, 0);
    const F = st.parts.reduce((a, p) => a + p.fout, 0);
    const S = st.slices;
    let a0 = 0, row0 = 0;
    const parts = st.parts.map((p, j) => {
      const r = ranks[j];
      let placeA = -1;
      if (S > 1) {
        placeA = places.length;
        places.push({ rows: r, cols: st.fin, base: a0, rowStride: 1, colStride: R, reps: 1, repStride: 0 });
      }
      const placeB = places.length;
      places.push({
        rows: p.fout,
        cols: r,
        base: row0 * S * R + a0,
        rowStride: S * R,
        colStride: 1,
        reps: S,
        repStride: R,
      });
      const part = { name: p.name, fout: p.fout, r, a0, row0, placeA, placeB };
      a0 += r;
      row0 += p.fout;
      return part;
    });
    plans.push({ name: st.name, fin: st.fin, F, R, S, parts });
  }
  return { plans, places };
}

/** The dims of stack st's packed A and B inputs (LoraStack). */
function stackDims(st: StackPlan): { A: number[]; B: number[] } {
  return st.S === 1
    ? { A: [st.R, st.fin], B: [st.F, st.R] }
    : { A: [st.S, st.fin / st.S, st.R], B: [st.F, st.S * st.R] };
}

/** `src` (rows, cols) into `dst` at `pl`: what lora_block.wgsl does on the GPU, for CPU feeds. */
function placeInto(dst: Float32Array, pl: LoraBlockPlace, src: Float32Array): void {
  for (let i = 0; i < pl.rows; i++) {
    for (let j = 0; j < pl.cols; j++) {
      const v = src[i * pl.cols + j], at = pl.base + i * pl.rowStride + j * pl.colStride;
      for (let t = 0; t < pl.reps; t++) dst[at + t * pl.repStride] = v;
    }
  }
}

/**
 * `feeds` (the policy's per-target adapter inputs, CPU float32 tensors) with the packed inputs of `stacks`
 * (BuiltDecoder.loraStacks) added, packed on the CPU: what a staticDecode graph run without a captured session takes.
 */
export function stackLoraFeeds(
  stacks: readonly LoraStack[],
  feeds: Record<string, ort.Tensor>,
): Record<string, ort.Tensor> {
  const out = { ...feeds };
  const { plans, places } = planStacks(stacks, feeds);
  for (const st of plans) {
    const dims = stackDims(st);
    const A = new Float32Array(st.R * st.fin), B = new Float32Array(st.F * st.S * st.R);
    for (const p of st.parts) {
      const a = floats(feeds[`${p.name}.A`], `${p.name}.A`);
      if (st.S === 1) A.set(a.subarray(0, p.r * st.fin), p.a0 * st.fin);
      else placeInto(A, places[p.placeA], a);
      placeInto(B, places[p.placeB], floats(feeds[`${p.name}.B`], `${p.name}.B`));
    }
    out[`${st.name}.A`] = new ort.Tensor("float32", A, dims.A);
    out[`${st.name}.B`] = new ort.Tensor("float32", B, dims.B);
  }
  return out;
}

/** What a captured decoder is made of. */
export interface CapturedOptions {
  device: GPUDevice;
  cfg: ModelConfig;
  /** The staticDecode graph (batch and maxT in its options). */
  built: BuiltDecoder;
  /**
   * The adapter inputs as the policy feeds them (names and dims; values are copied in by setAdapter): per target
   * (`lora.{i}.{q}.A`), also where the graph takes them packed (built.loraStacks; setAdapter packs them).
   */
  adapter: Record<string, ort.Tensor>;
}

type Spec = { name: string; type: ZeroType; dims: number[] };

/**
 * A session over a staticDecode graph with graph capture and its fixed buffers, all ORT's (see the file
 * comment): what CapturedDecoder and CapturedPrefill share.
 */
class CapturedSession {
  /** Runs made (the first is the capture run). */
  runs = 0;

  protected constructor(
    protected device: GPUDevice,
    private parts: {
      session: ort.InferenceSession;
      zeros: ort.InferenceSession;
      feeds: Record<string, ort.Tensor>;
      fetches: Record<string, ort.Tensor>;
      /** The dims of the per-target adapter feeds the session was made for (fits compares with them). */
      adapterDims: Record<string, readonly number[]>;
      /** The packed LoRA inputs and how setAdapter fills them, their parts' places, and the kernel that moves GPU parts. */
      stacks: StackPlan[];
      places: LoraBlockPlace[];
      blocks: LoraBlocks | null;
    },
    private label: string,
  ) {
    for (const st of parts.stacks) for (const p of st.parts) this.stackedParts.add(p.name);
  }

  /** The per-target input prefixes (`lora.{i}.q`) whose values go into packed inputs. */
  private stackedParts = new Set<string>();

  /**
   * The buffers of `io` (the graph's own inputs and its logits), of the cache ((B, K, T, D) a tensor,
   * fed as past and fetched as present) and of the adapter inputs, and the session created with graph capture.
   */
  protected static async open(o: CapturedOptions, label: string, io: Spec[], cache: { B: number; T: number }) {
    const { numKvHeads: K, headDim: D, numLayers: L } = o.cfg;
    const specs = [...io];
    for (let l = 0; l < L; l++) {
      for (const kind of ["key", "value"]) {
        specs.push({ name: `kv.${l}.${kind}`, type: "float32", dims: [cache.B, K, cache.T, D] });
      }
    }
    // Per-target adapter inputs get a buffer each, except the parts of packed inputs: a buffer per stack's A and B.
    const { plans: stacks, places } = planStacks(o.built.loraStacks ?? [], o.adapter);
    const stacked = new Set(stacks.flatMap((st) => st.parts.flatMap((p) => [`${p.name}.A`, `${p.name}.B`])));
    const graphInputs = new Set(o.built.inputNames);
    const adapterDims: Record<string, readonly number[]> = {};
    for (const [name, t] of Object.entries(o.adapter)) {
      if (stacked.has(name) || graphInputs.has(name)) adapterDims[name] = [...t.dims];
      if (!stacked.has(name)) specs.push({ name, type: "float32", dims: [...t.dims] });
    }
    for (const st of stacks) {
      const dims = stackDims(st);
      specs.push({ name: `${st.name}.A`, type: "float32", dims: dims.A });
      specs.push({ name: `${st.name}.B`, type: "float32", dims: dims.B }); // zeros off its blocks, for good
    }
    const blocks = places.length ? await LoraBlocks.create(o.device, places) : null;
    const { session: zeros, tensors } = await ortZeros(o.device, specs);
    const feeds: Record<string, ort.Tensor> = {};
    for (const name of o.built.inputNames) {
      const kv = /^past_key_values\.(\d+)\.(key|value)$/.exec(name);
      const t = kv ? tensors[`kv.${kv[1]}.${kv[2]}`] : tensors[name];
      if (!t) throw new Error(`${label}: no buffer for graph input ${name}`);
      feeds[name] = t;
    }
    const fetches: Record<string, ort.Tensor> = { logits: tensors.logits };
    for (let l = 0; l < L; l++) {
      for (const kind of ["key", "value"]) fetches[`present.${l}.${kind}`] = tensors[`kv.${l}.${kind}`];
    }
    const ep = { name: "webgpu", device: o.device } as unknown as ort.InferenceSession.ExecutionProviderConfig;
    const session = await ort.InferenceSession.create(o.built.bytes, {
      ...QUIET_SESSION,
      externalData: o.built.external,
      executionProviders: [ep],
      enableGraphCapture: true,
      preferredOutputLocation: "gpu-buffer",
    });
    return { session, zeros, feeds, fetches, adapterDims, stacks, places, blocks };
  }

  protected buffer(name: string): GPUBuffer {
    const t = this.parts.feeds[name] ?? this.parts.fetches[name];
    if (!t) throw new Error(`${this.label}: no tensor ${name}`);
    return t.gpuBuffer;
  }

  /** The fetched tensor `name` (logits, present.*). */
  protected fetched(name: string): ort.Tensor {
    return this.parts.fetches[name];
  }

  /** The K slices of each packed LoRA input pair (decoder.ts LoraStack.slices), by its name. */
  get loraSlices(): Record<string, number> {
    return Object.fromEntries(this.parts.stacks.map((st) => [st.name, st.S]));
  }

  /** (B, V) f32 logits of the last run (a prefill's: each row's last prompt token). */
  get logits(): GPUBuffer {
    return this.buffer("logits");
  }

  /** Whether `feeds` (the policy's per-target adapter inputs) have the shapes this session was captured with. */
  fits(feeds: Record<string, ort.Tensor>): boolean {
    return Object.entries(feeds).every(([n, t]) => {
      const mine = this.parts.adapterDims[n];
      return !!mine && mine.length === t.dims.length && mine.every((d, i) => d === t.dims[i]);
    });
  }

  /**
   * Records copies of the adapter feeds' values (per target, as the policy feeds them) into the session's adapter
   * buffers: GPU feeds copied on `enc`, CPU ones written. A packed input's parts (LoraStack) go to their places: with
   * one slice the A parts to their rows (buffer copies), the B parts to their diagonal blocks; with S slices the A parts
   * transposed into their columns, the B parts to their blocks repeated S times; lora_block.wgsl on `enc` for GPU
   * parts, CPU parts packed and written (the entries off the parts' places staying zero).
   */
  setAdapter(enc: GPUCommandEncoder, feeds: Record<string, ort.Tensor>): void {
    const own: Record<string, ort.Tensor> = {};
    for (const [name, t] of Object.entries(feeds)) if (!this.stackedParts.has(name.slice(0, -2))) own[name] = t;
    recordAdapter(this.device, enc, own, (name) => this.buffer(name));
    const { stacks, places } = this.parts;
    const moves: { place: number; src: GPUBuffer; dst: GPUBuffer }[] = [];
    for (const st of stacks) {
      const dstA = this.buffer(`${st.name}.A`), dstB = this.buffer(`${st.name}.B`);
      let packedA: Float32Array | null = null, packedB: Float32Array | null = null;
      for (const p of st.parts) {
        const a = feeds[`${p.name}.A`], b = feeds[`${p.name}.B`];
        if (!a || !b) continue;
        if (a.dims[0] !== p.r || b.dims[1] !== p.r) {
          throw new Error(`${this.label}: ${p.name} has rank ${a.dims[0]}, the session was made for ${p.r} (fits)`);
        }
        if (st.S === 1) {
          const aBytes = p.r * st.fin * 4;
          if (a.location === "gpu-buffer") enc.copyBufferToBuffer(a.gpuBuffer, 0, dstA, p.a0 * st.fin * 4, aBytes);
          else this.device.queue.writeBuffer(dstA, p.a0 * st.fin * 4, floats(a, `${p.name}.A`), 0, p.r * st.fin);
        } else if (a.location === "gpu-buffer") {
          moves.push({ place: p.placeA, src: a.gpuBuffer, dst: dstA });
        } else {
          packedA ??= new Float32Array(st.fin * st.R);
          placeInto(packedA, places[p.placeA], floats(a, `${p.name}.A`));
        }
        // CPU parts: the whole input written now with their places (zeros elsewhere); GPU parts are moved after it,
        // when `enc` is submitted.
        if (b.location === "gpu-buffer") {
          moves.push({ place: p.placeB, src: b.gpuBuffer, dst: dstB });
        } else {
          packedB ??= new Float32Array(st.F * st.S * st.R);
          placeInto(packedB, places[p.placeB], floats(b, `${p.name}.B`));
        }
      }
      if (packedA) this.device.queue.writeBuffer(dstA, 0, packedA);
      if (packedB) this.device.queue.writeBuffer(dstB, 0, packedB);
    }
    this.parts.blocks?.encode(enc, moves);
  }

  /** One run (a replay after the first) over the fixed buffers. */
  protected async replay(): Promise<void> {
    const { session, feeds, fetches } = this.parts;
    const out = await session.run(feeds, fetches);
    // After the capture run ORT returns fresh tensor objects over the bound buffers: free those wrappers.
    for (const [name, t] of Object.entries(out)) if (t !== fetches[name]) t.dispose();
    this.runs++;
  }

  /** Releases both sessions and the buffers. */
  async release(): Promise<void> {
    const { session, zeros, feeds, fetches, blocks } = this.parts;
    await session.release();
    for (const t of new Set([...Object.values(feeds), ...Object.values(fetches)])) t.dispose();
    await zeros.release();
    blocks?.destroy();
  }
}

/** A captured decoding session with its fixed buffers; see the file comment. */
export class CapturedDecoder extends CapturedSession {
  private constructor(
    device: GPUDevice,
    parts: Awaited<ReturnType<typeof CapturedSession.open>>,
    readonly batch: number,
    readonly maxT: number,
    private kvLoad: KvLoad,
  ) {
    super(device, parts, "CapturedDecoder");
  }

  /** The session (created with graph capture), its buffers, and a first run that compiles and captures. */
  static async create(o: CapturedOptions): Promise<CapturedDecoder> {
    const st = o.built.options.staticDecode;
    if (!st) throw new Error("CapturedDecoder needs a staticDecode graph");
    const { batch: B, maxT } = st;
    const parts = await CapturedSession.open(o, "CapturedDecoder", [
      { name: "input_ids", type: "int64", dims: [B, 1] },
      { name: "position_ids", type: "int64", dims: [B, 1] },
      { name: "seqlens_k", type: "int32", dims: [B] },
      { name: "total_sequence_length", type: "int32", dims: [1] },
      { name: "logits", type: "float32", dims: [B, o.cfg.vocabSize] },
    ], { B, T: maxT });
    const kvLoad = await KvLoad.create(o.device, { batch: B, K: o.cfg.numKvHeads, T: maxT, D: o.cfg.headDim });
    const dec = new CapturedDecoder(o.device, parts, B, maxT, kvLoad);
    // The capture run, on a state every kernel accepts (one key per row); load() overwrites what it wrote.
    o.device.queue.writeBuffer(dec.buffer("total_sequence_length"), 0, Int32Array.of(1));
    await dec.run();
    return dec;
  }

  /** The state decode_advance.wgsl moves on. */
  get state(): { ids: GPUBuffer; pos: GPUBuffer; seqlens: GPUBuffer; total: GPUBuffer } {
    return {
      ids: this.buffer("input_ids"),
      pos: this.buffer("position_ids"),
      seqlens: this.buffer("seqlens_k"),
      total: this.buffer("total_sequence_length"),
    };
  }

  /**
   * Records the prefill into the cache: sample row r gets row src[r] of `cache` ((R, K, P, D),
   * left-padded), its last lens[r] columns moved to columns 0..lens[r]-1 (`from0`: a cache whose rows
   * start at column 0, CapturedPrefill's, its first lens[r] columns); rows past src.length are
   * idle (one key). Writes the state a decode step after it expects (decode_advance.wgsl then moves it
   * on as the first tokens are chosen from the prefill logits).
   */
  load(enc: GPUCommandEncoder, cache: KvCache, src: readonly number[], lens: readonly number[], from0 = false): void {
    const P = cache.length, N = src.length;
    if (N > this.batch) throw new Error(`CapturedDecoder: ${N} rows for a batch of ${this.batch}`);
    const maxLen = Math.max(...lens);
    if (maxLen > P || maxLen >= this.maxT) {
      throw new Error(
        `CapturedDecoder: prompts of ${maxLen} tokens for a cache of ${this.maxT} columns (prefill width ${P})`,
      );
    }
    // One kv_load dispatch per tensor (a buffer copy per row and head before: 6,144 calls at 64 rows of the
    // 0.5B shape, 15 ms of host time on the H200).
    const bad = cache.tensors.find((t) => t.type !== "float32" || t.location !== "gpu-buffer");
    if (bad) {
      throw new Error(
        `CapturedDecoder: the prefill cache must be float32 GPU buffers, got ${bad.type} on ${bad.location}`,
      );
    }
    this.kvLoad.setRows(P, src, lens, from0);
    for (const [j, t] of cache.tensors.entries()) {
      this.kvLoad.encode(enc, t.gpuBuffer, this.buffer(`past_key_values.${j >> 1}.${j % 2 ? "value" : "key"}`));
    }
    const len = (r: number) => (r < N ? lens[r] : 1);
    const q = this.device.queue;
    q.writeBuffer(
      this.buffer("position_ids"),
      0,
      Int32Array.from({ length: 2 * this.batch }, (_, i) => (i % 2 ? 0 : len(i >> 1) - 1)),
    );
    q.writeBuffer(this.buffer("seqlens_k"), 0, Int32Array.from({ length: this.batch }, (_, r) => len(r) - 1));
    q.writeBuffer(this.buffer("total_sequence_length"), 0, Int32Array.of(maxLen));
  }

  /** One decoding step (a replay after the first run): logits and the cache's new column, on the GPU. */
  run(): Promise<void> {
    return this.replay();
  }

  /** Releases both sessions, the buffers and the cache load's. */
  override async release(): Promise<void> {
    await super.release();
    this.kvLoad.destroy();
  }
}

/**
 * A captured prefill: the staticDecode graph with `seq` = width (decoder.ts) under graph capture, for up
 * to `batch` prompts of up to `width` tokens. Prompts are right-padded (causal attention keeps a row's
 * tokens from seeing its pads) and written from column 0 of a (batch, K, width, D) cache per tensor
 * that GroupQueryAttention fills in place; every row runs the full width (seqlens_k = width - 1), the
 * head reads each row's last real token (`last_index`). What a replay leaves: `logits` (batch, V) and
 * `cache` (rows from column 0: CapturedDecoder.load with from0). The uncaptured prefill of the
 * policy's own graph spends most of its time in ORT's host side (bind groups, uniform writes; docs/
 * benchmarks.md): a replay has none of it. The buffers are ORT's (ortZeros) for the reason the file
 * comment gives; the next run overwrites them, so a run's cache must be loaded before the next run
 * is submitted (queue order does that).
 */
export class CapturedPrefill extends CapturedSession {
  private constructor(
    device: GPUDevice,
    parts: Awaited<ReturnType<typeof CapturedSession.open>>,
    readonly batch: number,
    readonly width: number,
    private cfg: ModelConfig,
  ) {
    super(device, parts, "CapturedPrefill");
  }

  static async create(o: CapturedOptions): Promise<CapturedPrefill> {
    const st = o.built.options.staticDecode;
    if (!st || !st.seq || st.seq !== st.maxT) {
      throw new Error("CapturedPrefill needs a staticDecode graph with seq = maxT");
    }
    const { batch: B, maxT: W } = st;
    const parts = await CapturedSession.open(o, "CapturedPrefill", [
      { name: "input_ids", type: "int64", dims: [B, W] },
      { name: "position_ids", type: "int64", dims: [B, W] },
      { name: "seqlens_k", type: "int32", dims: [B] },
      { name: "total_sequence_length", type: "int32", dims: [1] },
      { name: "last_index", type: "int64", dims: [B] },
      { name: "logits", type: "float32", dims: [B, o.cfg.vocabSize] },
    ], { B, T: W });
    const pf = new CapturedPrefill(o.device, parts, B, W, o.cfg);
    // What every run shares: positions 0..W-1, all W keys of every row (a row's pads after its prompt are
    // never seen by its tokens), the key count.
    const q = o.device.queue;
    q.writeBuffer(pf.buffer("position_ids"), 0, BigInt64Array.from({ length: B * W }, (_, i) => BigInt(i % W)));
    q.writeBuffer(pf.buffer("seqlens_k"), 0, new Int32Array(B).fill(W - 1));
    q.writeBuffer(pf.buffer("total_sequence_length"), 0, Int32Array.of(W));
    // The capture run (on token 0 everywhere); run() overwrites what it wrote.
    q.writeBuffer(pf.buffer("last_index"), 0, BigInt64Array.from({ length: B }, (_, r) => BigInt(r * W + W - 1)));
    await pf.replay();
    return pf;
  }

  /** The cache run() fills: (batch, K, width, D) a tensor, rows from column 0 (CapturedDecoder.load with from0). */
  get cache(): KvCache {
    const tensors: ort.Tensor[] = [];
    for (let l = 0; l < this.cfg.numLayers; l++) {
      for (const kind of ["key", "value"]) tensors.push(this.fetched(`present.${l}.${kind}`));
    }
    return { tensors, batch: this.batch, length: this.width };
  }

  /**
   * Prefills `prompts` (at most `batch`, each 1..width tokens; rows past them run on token 0 and are
   * ignored) with the adapter values set before (setAdapter's encoder submitted first); logits and
   * cache on the GPU when the queue gets there.
   */
  async run(prompts: readonly (readonly number[])[]): Promise<void> {
    const B = this.batch, W = this.width;
    if (prompts.length === 0 || prompts.length > B) {
      throw new Error(`CapturedPrefill: ${prompts.length} prompts for a batch of ${B}`);
    }
    const bad = prompts.findIndex((p) => p.length === 0 || p.length > W);
    if (bad >= 0) throw new Error(`CapturedPrefill: prompt ${bad} has ${prompts[bad].length} tokens (1..${W})`);
    const ids = new BigInt64Array(B * W);
    prompts.forEach((p, r) => p.forEach((x, t) => (ids[r * W + t] = BigInt(x))));
    const q = this.device.queue;
    q.writeBuffer(this.buffer("input_ids"), 0, ids);
    q.writeBuffer(
      this.buffer("last_index"),
      0,
      BigInt64Array.from({ length: B }, (_, r) => BigInt(r * W + (r < prompts.length ? prompts[r].length : W) - 1)),
    );
    await this.replay();
  }
}

/** What compareCaptured drives: OrtPolicy's methods of those names. */
export interface CompareModel {
  readonly cfg: ModelConfig;
  gpuDevice(): Promise<GPUDevice | null>;
  stepGpu(input: StepInput): Promise<{ logits: ort.Tensor; present: KvCache }>;
  step(input: StepInput): Promise<{ logits: Float32Array; present: KvCache }>;
  releaseCache(cache: KvCache): void;
  adapterFeedsNow(): Promise<Record<string, ort.Tensor>>;
  capturedDecoder(rows: number, maxT: number): Promise<CapturedDecoder>;
  capturedPrefill(rows: number, width: number): Promise<CapturedPrefill>;
}

/**
 * Prefills `prompts` with the policy's own graph, then runs `tokens[step][row]` teacher-forced through
 * the captured decoder and through the policy's own graph; the log-softmax of every step's logits,
 * both ways (captured-check.ts compares them). With prefill "captured" the captured side prefills with
 * CapturedPrefill and loads its cache, and the first rows compared are the two prefills' logits.
 */
export async function compareCaptured(
  p: CompareModel,
  prompts: number[][],
  tokens: number[][],
  prefill: "policy" | "captured" = "policy",
): Promise<{ captured: Float32Array[]; explicit: Float32Array[] }> {
  const device = await p.gpuDevice();
  if (!device) throw new Error("compareCaptured needs WebGPU");
  const R = prompts.length, V = p.cfg.vocabSize;
  const lens = prompts.map((x) => x.length), P = Math.max(...lens);
  const mask = prompts.map((x) => Array.from({ length: P }, (_, t) => (t < P - x.length ? 0 : 1)));
  const pre = await p.stepGpu({
    ids: prompts.map((x) => [...new Array<number>(P - x.length).fill(0), ...x]),
    mask: mask.map((r) => [...r]),
    positions: prompts.map((x) => Array.from({ length: P }, (_, t) => Math.max(0, t - (P - x.length)))),
    past: null,
    keep: 1,
  });
  const captured: Float32Array[] = [], explicit: Float32Array[] = [];
  let pf: CapturedPrefill | null = null;
  if (prefill === "captured") {
    explicit.push(logSoftmaxRows(await readBack(device, pre.logits.gpuBuffer, R * V), R, V));
    pf = await p.capturedPrefill(R, P);
    const e = device.createCommandEncoder({ label: "check-prefill-adapter" });
    pf.setAdapter(e, await p.adapterFeedsNow());
    device.queue.submit([e.finish()]);
    await pf.run(prompts);
    captured.push(logSoftmaxRows(await readBack(device, pf.logits, R * V), R, V));
  }
  pre.logits.dispose();
  const dec = await p.capturedDecoder(R, P + tokens.length + 1);
  const chosen = device.createBuffer({
    label: "check-chosen",
    size: Math.max(16, 8 * dec.batch),
    usage: 0x0080 | 0x0008,
  });
  const advance = await DecodeAdvance.create(device, { chosen, ...dec.state }, dec.batch);
  let cache = pre.present;
  try {
    const enc = device.createCommandEncoder({ label: "check-load" });
    dec.setAdapter(enc, await p.adapterFeedsNow());
    if (pf) dec.load(enc, pf.cache, prompts.map((_, r) => r), lens, true);
    else dec.load(enc, cache, prompts.map((_, r) => r), lens);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    for (const [s, row] of tokens.entries()) {
      device.queue.writeBuffer(
        chosen,
        0,
        Uint32Array.from({ length: 2 * dec.batch }, (_, i) => (i % 2 === 0 && i / 2 < R ? row[i / 2] : 0)),
      );
      const e = device.createCommandEncoder({ label: "check-advance" });
      advance.encode(e);
      device.queue.submit([e.finish()]);
      await dec.run();
      captured.push(logSoftmaxRows(await readBack(device, dec.logits, R * V), R, V));
      for (const m of mask) m.push(1);
      const out = await p.step({
        ids: row.map((x) => [x]),
        mask: mask.map((r) => [...r]),
        positions: lens.map((n) => [n + s]),
        past: cache,
        keep: 1,
      });
      p.releaseCache(cache);
      cache = out.present;
      explicit.push(logSoftmaxRows(out.logits, R, V));
    }
  } finally {
    p.releaseCache(cache);
    advance.destroy();
    chosen.destroy();
  }
  return { captured, explicit };
}

async function readBack(device: GPUDevice, buf: GPUBuffer, count: number): Promise<Float32Array> {
  const staging = device.createBuffer({ label: "check-read", size: count * 4, usage: 0x0001 | 0x0008 });
  const enc = device.createCommandEncoder({ label: "check-read" });
  enc.copyBufferToBuffer(buf, 0, staging, 0, count * 4);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(1);
  const out = new Float32Array(staging.getMappedRange().slice(0));
  staging.unmap();
  staging.destroy();
  return out;
}

/** log softmax of each of R rows of V (float64 sums), as float32. */
function logSoftmaxRows(x: Float32Array, R: number, V: number): Float32Array {
  const out = new Float32Array(R * V);
  for (let r = 0; r < R; r++) {
    let m = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, x[r * V + v]);
    let z = 0;
    for (let v = 0; v < V; v++) z += Math.exp(x[r * V + v] - m);
    const lse = m + Math.log(z);
    for (let v = 0; v < V; v++) out[r * V + v] = x[r * V + v] - lse;
  }
  return out;
}
