// The policy: one onnxruntime-web session over the decoder graph (WebGPU EP, WASM fallback), LoRA
// adapters fed as inputs, batched forward steps with a KV cache, and per-token log-probabilities.
// One owner per session: every run goes through a queue, so callers may overlap calls safely.
import { type ModelConfig, validateWeights } from "./config.ts";
import { LORA_TARGETS, type LoraAdapter, loraKey, type LoraTarget, targetDims, validateAdapter } from "./lora.ts";
import { ATTN_ALIGN, type AttentionKind, buildDecoder, gqaApplies, shortTarget, type WeightDtype } from "./onnx/decoder.ts";
import { createSession, hasWebGpu, ort, type Provider } from "./onnx/ort.ts";
import { checkGqa } from "./gqa-check.ts";
import type { Weights } from "./tensor.ts";

/** How to build and run the policy. */
export interface PolicyOptions {
  /** Weight storage: f32, f16 (compute in f16, norms and softmax in f32) or q4 (MatMulNBits). */
  dtype?: WeightDtype;
  /** Targets that get LoRA inputs in every layer; adapters may use any subset. Default none. */
  loraTargets?: readonly LoraTarget[];
  /**
   * Fixes the adapters' alpha / r in the graph (decoder.ts `loraScale`: 4 dispatches fewer per layer
   * with every target); adapters of another alpha / r are then rejected. Default: a `lora_scale` input.
   */
  loraScale?: number;
  /**
   * Attention operators of the graph (default "gqa": one com.microsoft.GroupQueryAttention per layer,
   * fewer dispatches per decoding step; explicit standard ops where GQA does not apply, see decoder.ts).
   * With "gqa", a step after a past takes one token per row when the batch has more than one row.
   */
  attention?: AttentionKind;
  /** Longest sequence (prompt + completion) accepted; default min(max_position_embeddings, 4096). */
  maxPositions?: number;
  /** Preferred provider; "webgpu" falls back to "wasm" with a note. */
  provider?: Provider;
  /** Where notes (such as the WASM fallback) go; default console.warn. */
  onNote?: (msg: string) => void;
  /** Keep the KV cache in GPU buffers between steps on WebGPU (default true). */
  kvOnGpu?: boolean;
  /** Run on this GPUDevice (the one the trainer owns) so adapters can be fed from its buffers. */
  device?: GPUDevice;
  /** Initializers this large or larger are passed as external data (default 1 MiB). */
  externalMinBytes?: number;
  /** Stop: checked between the graph build (quantisation) and the session; rejects with its reason. */
  signal?: AbortSignal;
  /** Told as each long phase of `create` starts (the page shows it as the model cell's progress). */
  onPhase?: (phase: "attention-check" | "graph" | "session") => void;
  /**
   * Whether the graph may use f16 tensors. Default: what the device offers (`device`'s features, else
   * the adapter's shader-f16; true on WASM). Without it f16 and q4 graphs compute in f32 (decoder.ts).
   */
  shaderF16?: boolean;
  /**
   * Check ORT's GroupQueryAttention against explicit attention on this device before using it
   * (gqa-check.ts; once per device and head layout, only where the device has subgroups, whose
   * flash-attention path was wrong on SwiftShader). Default true; the check's own policies skip it.
   */
  checkGqa?: boolean;
}

/** Whether the device (else the default adapter) has subgroups: ORT's kernels then use them. */
async function webgpuHasSubgroups(device?: GPUDevice): Promise<boolean> {
  if (device) return device.features.has("subgroups");
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  const adapter = await nav?.gpu?.requestAdapter({ powerPreference: "high-performance" }).catch(() => null);
  return !!adapter?.features.has("subgroups");
}

/** Whether WebGPU sessions here can use f16: the given device's feature, else the default adapter's. */
export async function webgpuHasF16(device?: GPUDevice): Promise<boolean> {
  if (device) return device.features.has("shader-f16");
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  const adapter = await nav?.gpu?.requestAdapter({ powerPreference: "high-performance" }).catch(() => null);
  return !!adapter?.features.has("shader-f16");
}

/** An adapter whose tensors live in GPU buffers of the policy's device (PEFT layout, f32, row-major). */
export interface GpuLoraAdapter {
  r: number;
  alpha: number;
  targets: readonly LoraTarget[];
  /** Keyed by PEFT names (`loraKey(layer, target, "A" | "B")`): A (r, in), B (out, r). */
  buffers: Map<string, GPUBuffer>;
}

/** Per-layer key and value tensors (B, K, T, D) in layer order: key0, value0, key1, ... */
export interface KvCache {
  tensors: ort.Tensor[];
  batch: number;
  length: number;
}

/** One forward step over a batch: S new tokens per row after `past` (or none). */
export interface StepInput {
  /** (B, S) token ids. */
  ids: number[][];
  /** (B, P + S) 1 for real tokens, 0 for padding. */
  mask: number[][];
  /** (B, S) RoPE positions of the new tokens. */
  positions: number[][];
  past: KvCache | null;
  /** Logits are returned for the last `keep` positions. */
  keep: number;
}

/** Logits (B, keep, V) and the cache after the step. */
export interface StepOutput {
  logits: Float32Array;
  present: KvCache;
}

/** Wall milliseconds of the policy's runs by part, added to while `OrtPolicy.timing` is set (benchmarks). */
export interface PolicyTiming {
  runs: number;
  /** Checking the inputs and building the feeds (int64 tensors, adapter and cache inputs). */
  feedsMs: number;
  /** `session.run`: uploads of CPU inputs, the GPU work, and the read-back of CPU outputs (the logits). */
  runMs: number;
}

/** An ONNX Runtime Web policy for one model; create with `OrtPolicy.create`. */
export class OrtPolicy {
  /** When set, every run adds its feed-building and session.run times to it. */
  timing: PolicyTiming | null = null;
  private adapterFeeds: Record<string, ort.Tensor> = {};
  /** GPU copies of `adapterFeeds`' CPU tensors on WebGPU, made at the first run after each setAdapter. */
  private residentFeeds: { of: Record<string, ort.Tensor>; feeds: Record<string, ort.Tensor>; made: ort.Tensor[] } | null = null;
  private tail: Promise<unknown> = Promise.resolve();
  private released = false;
  /** Name of the adapter in use, or null. */
  adapterName: string | null = null;
  /** The caller's GPUDevice the session runs on, or null (its own device, or WASM). */
  device: GPUDevice | null = null;
  /** The attention the graph was built with. */
  attention: AttentionKind = "explicit";
  /** What the graph stores and computes in, in words (decoder.ts precisionOf). */
  precision = "";
  /** Whether the graph was built for a device with shader-f16 (false: no f16 tensor; decoder.ts). */
  shaderF16 = true;
  /**
   * The device's maxStorageBufferBindingSize (Infinity on WASM): ORT binds every intermediate whole,
   * and one larger than this is computed wrong without an error (rows past the limit), so `step`
   * cuts a prefill batch into runs whose intermediates fit (`rowsPerRun`).
   */
  bindingLimit = Infinity;

  private constructor(
    readonly cfg: ModelConfig,
    readonly dtype: WeightDtype,
    readonly maxPositions: number,
    readonly loraTargets: readonly LoraTarget[],
    readonly provider: Provider,
    readonly kvType: "float32" | "float16",
    private session: ort.InferenceSession,
    private outputNames: readonly string[],
    /** The adapters' alpha / r fixed in the graph, or null (fed as `lora_scale`). */
    readonly loraScale: number | null = null,
  ) {
    this.setAdapter(null);
  }

  /** Builds the graph for `cfg` and `weights` and opens its session; bad weights throw before anything loads. */
  static async create(cfg: ModelConfig, weights: Weights, o: PolicyOptions = {}): Promise<OrtPolicy> {
    validateWeights(cfg, weights);
    const dtype = o.dtype ?? "f32";
    const maxPositions = o.maxPositions ?? Math.min(cfg.maxPositionEmbeddings, 4096);
    if (!Number.isInteger(maxPositions) || maxPositions < 1) throw new Error(`maxPositions must be a positive integer, got ${maxPositions}`);
    const targets = LORA_TARGETS.filter((t) => o.loraTargets?.includes(t));
    // The WASM provider computes f16 on the CPU; WebGPU needs shader-f16 for any f16 tensor.
    const onWebGpu = (o.provider ?? "webgpu") === "webgpu" && hasWebGpu();
    const shaderF16 = o.shaderF16 ?? (!onWebGpu || dtype === "f32" ? true : await webgpuHasF16(o.device));
    let attention = o.attention ?? "gqa";
    if (attention === "gqa" && onWebGpu && o.checkGqa !== false && gqaApplies(cfg, dtype, shaderF16) && await webgpuHasSubgroups(o.device)) {
      o.onPhase?.("attention-check");
      const check = await checkGqa(cfg, o.device ?? null, (c, w, a) => OrtPolicy.create(c, w, { dtype: "f32", attention: a, maxPositions: 64, device: o.device, checkGqa: false, onNote: () => {} }));
      if (!check.ok) {
        attention = "explicit";
        (o.onNote ?? ((m) => console.warn(m)))(`note: onnxruntime-web's GroupQueryAttention differs from explicit attention on this device by ${check.maxAbsDiff.toExponential(2)} in log-probability (its subgroup path; seen on SwiftShader): the policy uses explicit attention`);
      }
    }
    o.onPhase?.("graph");
    const built = buildDecoder(cfg, weights, { dtype, loraTargets: targets, kvCache: true, maxPositions, externalMinBytes: o.externalMinBytes, attention, loraScale: o.loraScale, shaderF16 });
    if (o.signal) {
      // The build is synchronous: a Stop posted to this worker meanwhile is delivered by a task turn.
      await new Promise((r) => setTimeout(r, 0));
      if (o.signal.aborted) throw o.signal.reason;
    }
    // On WebGPU the present.* outputs can stay in GPU buffers and be fed back as the next past.
    const kvLocations: Record<string, "gpu-buffer"> = {};
    for (const name of built.outputNames) if (name.startsWith("present.")) kvLocations[name] = "gpu-buffer";
    const webgpuOpts = o.kvOnGpu === false ? {} : { preferredOutputLocation: kvLocations };
    o.onPhase?.("session");
    const { session, provider } = await createSession(built.bytes, o.provider ?? "webgpu", o.onNote ?? ((m) => console.warn(m)), { externalData: built.external }, webgpuOpts, o.device);
    const policy = new OrtPolicy(cfg, dtype, maxPositions, targets, provider, built.kvType, session, built.outputNames, o.loraScale ?? null);
    policy.device = provider === "webgpu" ? o.device ?? null : null;
    policy.attention = built.attention;
    policy.precision = built.precision;
    policy.shaderF16 = shaderF16;
    if (provider === "webgpu") policy.bindingLimit = (o.device ?? await ort.env.webgpu.device).limits.maxStorageBufferBindingSize;
    return policy;
  }

  /**
   * Uses `adapter` (PEFT names) from the next run on, or none. Targets the graph has no inputs for,
   * or mis-shaped tensors, throw and leave the current adapter in use.
   */
  setAdapter(adapter: LoraAdapter | null, name: string | null = null): void {
    if (adapter) {
      validateAdapter(this.cfg, adapter);
      this.checkTargets(adapter.targets);
      this.checkScale(adapter);
    }
    this.useAdapter(adapter, name, (key, dims) => {
      const t = adapter?.tensors.get(key);
      if (!t) throw new Error(`LoRA adapter: missing tensor ${key}`); // validateAdapter already checked
      return new ort.Tensor("float32", t.data.slice(), dims);
    });
  }

  /**
   * Uses an adapter whose tensors are GPU buffers of this policy's device: no copy, so the trainer
   * writing new values into the same buffers changes what the next run computes.
   */
  setAdapterBuffers(adapter: GpuLoraAdapter, name: string | null = null): void {
    if (!this.device) throw new Error("setAdapterBuffers needs a policy created with `device` on the WebGPU provider");
    this.checkTargets(adapter.targets);
    this.checkScale(adapter);
    this.useAdapter(adapter, name, (key, dims) => {
      const buf = adapter.buffers.get(key);
      if (!buf) throw new Error(`LoRA adapter: missing buffer ${key}`);
      const bytes = dims[0] * dims[1] * 4;
      if (buf.size < bytes) throw new Error(`LoRA adapter: buffer ${key} has ${buf.size} bytes, [${dims.join(", ")}] f32 needs ${bytes}`);
      return ort.Tensor.fromGpuBuffer(buf, { dataType: "float32", dims });
    });
  }

  private checkScale(adapter: { r: number; alpha: number }): void {
    if (this.loraScale === null || !this.loraTargets.length) return;
    const s = adapter.alpha / adapter.r;
    if (!(Math.abs(s - this.loraScale) <= 1e-6 * this.loraScale)) {
      throw new Error(`LoRA adapter: alpha / r = ${adapter.alpha} / ${adapter.r} = ${s}, but this policy's graph fixes it at ${this.loraScale} (loraScale)`);
    }
  }

  private checkTargets(targets: readonly LoraTarget[]): void {
    const missing = targets.filter((t) => !this.loraTargets.includes(t));
    if (missing.length) {
      throw new Error(`LoRA adapter targets ${missing.join(", ")} but this policy was built with LoRA inputs for [${this.loraTargets.join(", ")}]; create it with loraTargets covering the adapter`);
    }
  }

  private useAdapter(
    adapter: { r: number; alpha: number; targets: readonly LoraTarget[] } | null,
    name: string | null,
    tensor: (key: string, dims: [number, number]) => ort.Tensor,
  ): void {
    const feeds: Record<string, ort.Tensor> = {};
    if (this.loraTargets.length && this.loraScale === null) feeds.lora_scale = new ort.Tensor("float32", Float32Array.of(adapter ? adapter.alpha / adapter.r : 0), [1]);
    for (let l = 0; l < this.cfg.numLayers; l++) {
      for (const t of this.loraTargets) {
        const [out, inp] = targetDims(this.cfg, t);
        const base = `lora.${l}.${shortTarget(t)}`;
        if (adapter && adapter.targets.includes(t)) {
          feeds[`${base}.A`] = tensor(loraKey(l, t, "A"), [adapter.r, inp]);
          feeds[`${base}.B`] = tensor(loraKey(l, t, "B"), [out, adapter.r]);
        } else {
          // A rank-1 zero adapter: the delta is exactly zero.
          feeds[`${base}.A`] = new ort.Tensor("float32", new Float32Array(inp), [1, inp]);
          feeds[`${base}.B`] = new ort.Tensor("float32", new Float32Array(out), [out, 1]);
        }
      }
    }
    this.adapterFeeds = feeds;
    this.adapterName = adapter ? (name ?? "adapter") : null;
  }

  /** One forward step; runs are queued so the session has a single caller at a time. */
  step(input: StepInput): Promise<StepOutput> {
    return this.serial(async () => {
      const B = input.ids.length;
      const rows = input.past ? B : this.rowsPerRun(input.ids[0]?.length ?? 0, input.mask[0]?.length ?? 0, input.keep);
      if (rows >= B) return await this.runStep(input);
      // A prefill too large for one run: runs of `rows` rows (same padded width), then one cache.
      const parts: StepOutput[] = [];
      try {
        for (let i = 0; i < B; i += rows) {
          const cut = <T>(xs: T[]) => xs.slice(i, i + rows);
          parts.push(await this.runStep({ ids: cut(input.ids), mask: cut(input.mask), positions: cut(input.positions), past: null, keep: input.keep }));
        }
        return await this.concatOutputs(parts);
      } catch (e) {
        for (const p of parts) releaseCache(p.present);
        throw e;
      }
    });
  }

  /**
   * How many rows of a (rows, S) step over T keys one run takes: the largest intermediate per row
   * (hidden states, MLP features, queries, kept logits, and in explicit graphs the (H, S, T4)
   * attention scores), 4 bytes an element, must fit `bindingLimit` for all rows together.
   */
  rowsPerRun(S: number, T: number, keep: number): number {
    if (!Number.isFinite(this.bindingLimit)) return Infinity;
    const c = this.cfg;
    const T4 = Math.ceil(T / ATTN_ALIGN) * ATTN_ALIGN;
    const perRow = 4 * Math.max(S * c.hiddenSize, S * c.intermediateSize, S * c.numHeads * c.headDim, keep * c.vocabSize, this.attention === "explicit" ? c.numHeads * S * T4 : 0);
    return Math.max(1, Math.floor(this.bindingLimit / perRow));
  }

  /** The outputs of consecutive row runs as one: logits one after the other, caches joined (joinCacheRows). */
  private async concatOutputs(parts: StepOutput[]): Promise<StepOutput> {
    const logits = new Float32Array(parts.reduce((n, p) => n + p.logits.length, 0));
    let at = 0;
    for (const p of parts) {
      logits.set(p.logits, at);
      at += p.logits.length;
    }
    const present = await this.joinCacheRows(parts.map((p) => ({ cache: p.present, rows: Array.from({ length: p.present.batch }, (_, r) => r) })));
    return { logits, present };
  }

  /**
   * out[i][t] = log p(seqs[i][t+1] | seqs[i][0..t]) under the current adapter, gathered inside the
   * graph; batches are cut so the (B, S, V) logits on the GPU stay under `maxLogitsBytes`.
   */
  async logprobs(seqs: number[][], o: { maxLogitsBytes?: number } = {}): Promise<number[][]> {
    const V = this.cfg.vocabSize;
    const budget = o.maxLogitsBytes ?? 64 * 2 ** 20;
    for (const [i, s] of seqs.entries()) this.checkIds(s, `sequence ${i}`);
    const out: number[][] = new Array(seqs.length);
    let start = 0;
    while (start < seqs.length) {
      let end = start + 1;
      let L = seqs[start].length;
      while (end < seqs.length && (end + 1 - start) * Math.max(L, seqs[end].length) * V * 4 <= budget) L = Math.max(L, seqs[end++].length);
      const rows = seqs.slice(start, end);
      // Right padding: real tokens never attend to the pads after them, positions start at 0.
      const ids = rows.map((r) => [...r, ...new Array<number>(L - r.length).fill(0)]);
      const mask = rows.map((r) => ids[0].map((_, t) => (t < r.length ? 1 : 0)));
      const positions = rows.map(() => ids[0].map((_, t) => t));
      const targets = ids.map((r) => r.map((_, t) => (t + 1 < L ? r[t + 1] : 0)));
      const res = await this.serial(() => this.runGraph({ ids, mask, positions, past: null, keep: L }, targets));
      const lp = res.target_logprobs.data;
      if (!(lp instanceof Float32Array)) throw new Error("policy: target_logprobs are not float32");
      for (let b = 0; b < rows.length; b++) out[start + b] = Array.from(lp.subarray(b * L, b * L + rows[b].length - 1));
      start = end;
    }
    return out;
  }

  /**
   * A cache whose row b*repeats+j is row b of `cache` (prefill once, sample G times); `cache` is
   * released unless `repeats` is 1, which returns it as it is. GPU caches are copied buffer to buffer.
   */
  async repeatCache(cache: KvCache, repeats: number): Promise<KvCache> {
    if (!Number.isInteger(repeats) || repeats < 1) throw new Error(`repeatCache: repeats must be a positive integer, got ${repeats}`);
    if (repeats === 1) return cache;
    return await this.gatherRows(cache, Array.from({ length: cache.batch * repeats }, (_, i) => Math.floor(i / repeats)));
  }

  /**
   * A cache holding only rows `keep` (ascending) of `cache`, which is released: decoding drops
   * finished samples. GPU caches are copied buffer to buffer on ORT's device, never via the CPU.
   */
  async selectCacheRows(cache: KvCache, keep: readonly number[]): Promise<KvCache> {
    if (keep.some((r, i) => !Number.isInteger(r) || r < 0 || r >= cache.batch || (i > 0 && r <= keep[i - 1]))) {
      throw new Error(`selectCacheRows: rows [${keep.join(", ")}] are not ascending rows of a batch of ${cache.batch}`);
    }
    return await this.gatherRows(cache, keep);
  }

  /** A cache whose row i is row rows[i] of `cache`, which is released. */
  private gatherRows(cache: KvCache, rows: readonly number[]): Promise<KvCache> {
    return this.joinCacheRows([{ cache, rows }]);
  }

  /**
   * One cache of the chosen rows of each piece in turn (rows of equal length), the pieces' caches
   * released: GPU caches copied buffer to buffer on ORT's device, one copy per run of consecutive rows.
   */
  private async joinCacheRows(pieces: readonly { cache: KvCache; rows: readonly number[] }[]): Promise<KvCache> {
    const batch = pieces.reduce((n, p) => n + p.rows.length, 0);
    const onGpu = pieces.some((p) => p.cache.tensors.some((t) => t.location === "gpu-buffer"));
    const device = onGpu ? this.device ?? await ort.env.webgpu.device : null; // the session's device: the caller's when it gave one
    const enc = device?.createCommandEncoder({ label: "kv-gather-rows" });
    const tensors: ort.Tensor[] = [];
    for (let j = 0; j < pieces[0].cache.tensors.length; j++) {
      const first = pieces[0].cache.tensors[j];
      const [, K, T, D] = first.dims;
      const dims = [batch, K, T, D];
      const elems = K * T * D;
      if (first.location === "gpu-buffer" && device && enc) {
        const rowBytes = elems * (first.type === "float16" ? 2 : 4);
        const buf = device.createBuffer({ label: "kv-rows", size: Math.max(4, batch * rowBytes), usage: GPU_STORAGE_COPY });
        let at = 0;
        for (const { cache, rows } of pieces) {
          const t = cache.tensors[j];
          // Runs of consecutive source rows are one copy (a repeat of 1, or keeping a contiguous block).
          for (let i = 0; i < rows.length;) {
            let k = i + 1;
            while (k < rows.length && rows[k] === rows[k - 1] + 1) k++;
            enc.copyBufferToBuffer(t.gpuBuffer, rows[i] * rowBytes, buf, (at + i) * rowBytes, (k - i) * rowBytes);
            i = k;
          }
          at += rows.length;
        }
        const dataType = first.type === "float16" ? "float16" : "float32";
        tensors.push(ort.Tensor.fromGpuBuffer(buf, { dataType, dims, dispose: () => buf.destroy() }));
      } else {
        const f32 = first.type === "float32";
        const dst = f32 ? new Float32Array(batch * elems) : new Uint16Array(batch * elems);
        let at = 0;
        for (const { cache, rows } of pieces) {
          const data = await cache.tensors[j].getData();
          if (!ArrayBuffer.isView(data)) throw new Error(`KV cache of type ${cache.tensors[j].type}`);
          // float16 comes back as Float16Array where the runtime has one (Deno does): take its bits.
          const src = data instanceof Float32Array ? data : new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2);
          rows.forEach((r, i) => dst.set(src.subarray(r * elems, (r + 1) * elems), (at + i) * elems));
          at += rows.length;
        }
        tensors.push(dst instanceof Float32Array ? new ort.Tensor("float32", dst, dims) : new ort.Tensor("float16", dst, dims));
      }
    }
    if (device && enc) {
      device.queue.submit([enc.finish()]);
      // ORT may reuse the released buffers at once; let the copies finish first.
      await device.queue.onSubmittedWorkDone();
    }
    for (const p of pieces) releaseCache(p.cache);
    return { tensors, batch, length: pieces[0].cache.length };
  }

  /** Frees the GPU buffers of a cache that will not be fed again. */
  releaseCache(cache: KvCache): void {
    releaseCache(cache);
  }

  /** Releases the session; later calls throw. */
  async release(): Promise<void> {
    await this.serial(async () => {
      this.released = true;
      for (const t of this.residentFeeds?.made ?? []) t.dispose();
      this.residentFeeds = null;
      await this.session.release();
    });
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.tail.then(fn, fn);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private checkIds(ids: readonly number[], what: string): void {
    if (ids.length === 0) throw new Error(`${what} is empty`);
    if (ids.length > this.maxPositions) throw new Error(`${what} has ${ids.length} tokens; this policy accepts at most ${this.maxPositions} (maxPositions)`);
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.cfg.vocabSize) throw new Error(`${what}: token id ${id} outside [0, ${this.cfg.vocabSize})`);
    }
  }

  private async runStep(x: StepInput): Promise<StepOutput> {
    const r = await this.runGraph(x, null);
    const logits = r.logits.data;
    if (!(logits instanceof Float32Array)) throw new Error("policy: logits are not float32");
    const tensors: ort.Tensor[] = [];
    for (let l = 0; l < this.cfg.numLayers; l++) tensors.push(r[`present.${l}.key`], r[`present.${l}.value`]);
    return { logits, present: { tensors, batch: x.ids.length, length: (x.past?.length ?? 0) + x.ids[0].length } };
  }

  /**
   * The adapter inputs as fed: on WebGPU, CPU tensors are uploaded once per adapter into buffers of
   * ORT's device, so a run does not upload them again (they were ~110 inputs, each its own upload
   * and queue submit, per decoding step with LoRA on every target). Called inside `serial`, so no
   * run is using the copies it frees.
   */
  private async adapterInputs(): Promise<Record<string, ort.Tensor>> {
    if (this.provider !== "webgpu") return this.adapterFeeds;
    if (this.residentFeeds?.of === this.adapterFeeds) return this.residentFeeds.feeds;
    for (const t of this.residentFeeds?.made ?? []) t.dispose();
    this.residentFeeds = null;
    const device = this.device ?? await ort.env.webgpu.device;
    const feeds: Record<string, ort.Tensor> = {}, made: ort.Tensor[] = [];
    for (const [name, t] of Object.entries(this.adapterFeeds)) {
      const data = t.location === "cpu" ? t.data : null;
      if (!(data instanceof Float32Array)) {
        feeds[name] = t;
        continue;
      }
      // Sizes rounded up to 16 bytes as ORT's own buffers are: its kernels bind a 4-byte scalar as a vec4.
      const buf = device.createBuffer({ label: `policy-${name}`, size: Math.ceil(Math.max(4, data.byteLength) / 16) * 16, usage: GPU_STORAGE_COPY });
      device.queue.writeBuffer(buf, 0, data);
      const g = ort.Tensor.fromGpuBuffer(buf, { dataType: "float32", dims: t.dims, dispose: () => buf.destroy() });
      feeds[name] = g;
      made.push(g);
    }
    this.residentFeeds = { of: this.adapterFeeds, feeds, made };
    return feeds;
  }

  /** One run; with `targets` (B, keep) only their log-probabilities are fetched, else logits and cache. */
  private async runGraph(x: StepInput, targets: number[][] | null): Promise<ort.InferenceSession.OnnxValueMapType> {
    if (this.released) throw new Error("the policy session was released");
    const t0 = this.timing ? performance.now() : 0;
    const B = x.ids.length, S = x.ids[0]?.length ?? 0;
    const P = x.past?.length ?? 0, T = P + S;
    if (B === 0 || S === 0) throw new Error("step: empty batch");
    if (T > this.maxPositions) throw new Error(`sequence of ${T} tokens exceeds this policy's maxPositions ${this.maxPositions}`);
    if (x.past && x.past.batch !== B) throw new Error(`step: past cache has batch ${x.past.batch}, input has ${B}`);
    for (let b = 0; b < B; b++) {
      if (x.ids[b].length !== S || x.positions[b].length !== S || x.mask[b].length !== T) throw new Error(`step: row ${b} has ragged ids/positions/mask`);
      this.checkIds(x.ids[b], `row ${b}`);
      for (const p of x.positions[b]) if (p < 0 || p >= this.maxPositions) throw new Error(`step: position ${p} outside [0, ${this.maxPositions})`);
    }
    if (x.keep < 1 || x.keep > S) throw new Error(`step: keep ${x.keep} outside [1, ${S}]`);
    if (this.attention === "gqa" && P > 0 && S > 1 && B > 1) {
      // ORT's GroupQueryAttention: "batch_size must be 1 when sequence_length > 1 and past context is given".
      throw new Error(`step: with attention "gqa" a step after a past takes one token per row when the batch has ${B} rows (got ${S}); create the policy with attention "explicit" for multi-token steps`);
    }
    const { numLayers: L, numKvHeads: K, headDim: D } = this.cfg;
    const feeds: Record<string, ort.Tensor> = {
      ...(await this.adapterInputs()),
      input_ids: int64(x.ids, [B, S]),
      attention_mask: int64(x.mask, [B, T]),
      position_ids: int64(x.positions, [B, S]),
      num_logits_to_keep: int64([[x.keep]], [1]),
      target_ids: targets ? int64(targets, [B, x.keep]) : new ort.Tensor("int64", new BigInt64Array(B * x.keep), [B, x.keep]),
    };
    for (let l = 0; l < L; l++) {
      for (const [j, kind] of (["key", "value"] as const).entries()) {
        feeds[`past_key_values.${l}.${kind}`] = x.past
          ? x.past.tensors[2 * l + j]
          : this.kvType === "float32"
          ? new ort.Tensor("float32", new Float32Array(0), [B, K, 0, D])
          : new ort.Tensor("float16", new Uint16Array(0), [B, K, 0, D]);
      }
    }
    const fetches = targets ? ["target_logprobs"] : this.outputNames.filter((n) => n !== "target_logprobs");
    if (!this.timing) return await this.session.run(feeds, fetches);
    const t1 = performance.now();
    const out = await this.session.run(feeds, fetches);
    this.timing.runs++;
    this.timing.feedsMs += t1 - t0;
    this.timing.runMs += performance.now() - t1;
    return out;
  }
}

/** GPUBufferUsage STORAGE | COPY_SRC | COPY_DST (the constants object is not in every runtime's globals). */
const GPU_STORAGE_COPY = 0x0080 | 0x0004 | 0x0008;

function releaseCache(cache: KvCache): void {
  for (const t of cache.tensors) if (t.location === "gpu-buffer") t.dispose();
}

/** An int64 tensor of equal-length rows, written straight into its array (no flattened copy). */
function int64(rows: readonly (readonly number[])[], dims: number[]): ort.Tensor {
  const w = rows[0]?.length ?? 0;
  const out = new BigInt64Array(rows.length * w);
  for (let b = 0; b < rows.length; b++) {
    const r = rows[b];
    for (let t = 0; t < w; t++) out[b * w + t] = BigInt(r[t]);
  }
  return new ort.Tensor("int64", out, dims);
}
