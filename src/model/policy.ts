// The policy: one onnxruntime-web session over the decoder graph (WebGPU EP, WASM fallback), LoRA
// adapters fed as inputs, batched forward steps with a KV cache, and per-token log-probabilities.
// One owner per session: every run goes through a queue, so callers may overlap calls safely.
import { type ModelConfig, validateWeights } from "./config.ts";
import { LORA_TARGETS, type LoraAdapter, type LoraTarget } from "./lora.ts";
import {
  type AttentionKind,
  ATTN_ALIGN,
  buildDecoder,
  type DecoderOptions,
  gqaApplies,
  PreparedWeights,
  type WeightDtype,
} from "./onnx/decoder.ts";
import { concatLogits, joinCacheRows, type KvCache, logitsData, releaseCache } from "./kv-rows.ts";
import { AdapterFeeds, type GpuLoraAdapter } from "./policy-adapter.ts";
import { type CapturedDecoder, type CapturedPrefill, compareCaptured } from "./captured.ts";
import { CaptureHost } from "./capture-host.ts";
import type { CheckDecoder } from "./captured-check.ts";
import { createSession, hasWebGpu, ort, type Provider } from "./onnx/ort.ts";
import { checkGqa } from "./gqa-check.ts";
import type { Weights } from "./tensor.ts";
import { denoEnv } from "../core/deno-env.ts";

export type { KvCache } from "./kv-rows.ts";
export type { GpuLoraAdapter } from "./policy-adapter.ts";

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
  /**
   * Keep the logits of `step` in a GPU buffer (`stepGpu` hands them over; `step` reads them back), for
   * token choice on the GPU (sampler-gpu.ts). Default false. WebGPU only.
   */
  logitsOnGpu?: boolean;
  /**
   * Keep the weight conversions of this build (q4 blocks, transposes) for the captured decoding
   * graph (`capturedDecoder`), so building it does not quantise again; dropped once it is built.
   * Default false (the captured graph is then built from the weights again).
   */
  keepPrepared?: boolean;
  /**
   * "q4" graphs: MatMulNBits' accuracy level (decoder.ts `q4Accuracy`; 4: int8 activations through
   * onnxruntime's DP4A kernel where the device allows it). Default: RLVR_Q4_ACCURACY under Deno, else 0.
   */
  q4Accuracy?: 0 | 4;
  /** Weight conversions shared with other policies of the same weights (benchmarks: one quantisation for several sessions); kept, never dropped. */
  prepared?: PreparedWeights;
}

/** RLVR_Q4_ACCURACY (0 or 4) where there is an environment to read (Deno), else 0; anything else throws. */
export function q4AccuracyFromEnv(): 0 | 4 {
  const v = denoEnv("RLVR_Q4_ACCURACY");
  if (v === undefined || v === "" || v === "0") return 0;
  if (v === "4") return 4;
  throw new Error(`RLVR_Q4_ACCURACY must be 0 or 4, got ${v}`);
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

/** `stepGpu`'s output: the logits (B, keep, V) as a GPU tensor (dispose it when read) and the cache. */
export interface GpuStepOutput {
  logits: ort.Tensor;
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
  private adapter: AdapterFeeds;
  private tail: Promise<unknown> = Promise.resolve();
  private released = false;
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
  /** Captured decoding (capture-host.ts); set up by create on WebGPU. */
  private capture = new CaptureHost(this, null, () => {});

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
    /** `step`'s logits stay on the GPU (stepGpu); PolicyOptions.logitsOnGpu. */
    readonly logitsOnGpu = false,
  ) {
    this.adapter = new AdapterFeeds(cfg, loraTargets, loraScale);
  }

  /** Name of the adapter in use, or null. */
  get adapterName(): string | null {
    return this.adapter.name;
  }

  /**
   * Uses `adapter` (PEFT names) from the next run on, or none. Targets the graph has no inputs for,
   * or mis-shaped tensors, throw and leave the current adapter in use.
   */
  setAdapter(adapter: LoraAdapter | null, name: string | null = null): void {
    this.adapter.set(adapter, name);
  }

  /**
   * Uses an adapter whose tensors are GPU buffers of this policy's device: no copy, so the trainer
   * writing new values into the same buffers changes what the next run computes.
   */
  setAdapterBuffers(adapter: GpuLoraAdapter, name: string | null = null): void {
    if (!this.device) throw new Error("setAdapterBuffers needs a policy created with `device` on the WebGPU provider");
    this.adapter.setBuffers(adapter, name);
  }

  /** Builds the graph for `cfg` and `weights` and opens its session; bad weights throw before anything loads. */
  static async create(cfg: ModelConfig, weights: Weights, o: PolicyOptions = {}): Promise<OrtPolicy> {
    validateWeights(cfg, weights);
    const dtype = o.dtype ?? "f32";
    const maxPositions = o.maxPositions ?? Math.min(cfg.maxPositionEmbeddings, 4096);
    if (!Number.isInteger(maxPositions) || maxPositions < 1) {
      throw new Error(`maxPositions must be a positive integer, got ${maxPositions}`);
    }
    const targets = LORA_TARGETS.filter((t) => o.loraTargets?.includes(t));
    // The WASM provider computes f16 on the CPU; WebGPU needs shader-f16 for any f16 tensor.
    const onWebGpu = (o.provider ?? "webgpu") === "webgpu" && hasWebGpu();
    const shaderF16 = o.shaderF16 ?? (!onWebGpu || dtype === "f32" ? true : await webgpuHasF16(o.device));
    let attention = o.attention ?? "gqa";
    if (
      attention === "gqa" && onWebGpu && o.checkGqa !== false && gqaApplies(cfg, dtype, shaderF16) &&
      await webgpuHasSubgroups(o.device)
    ) {
      o.onPhase?.("attention-check");
      const check = await checkGqa(
        cfg,
        o.device ?? null,
        (c, w, a) =>
          OrtPolicy.create(c, w, {
            dtype: "f32",
            attention: a,
            maxPositions: 64,
            device: o.device,
            checkGqa: false,
            onNote: () => {},
          }),
      );
      if (!check.ok) {
        attention = "explicit";
        (o.onNote ?? ((m) => console.warn(m)))(
          `note: onnxruntime-web's GroupQueryAttention differs from explicit attention on this device by ${
            check.maxAbsDiff.toExponential(2)
          } in log-probability (its subgroup path; seen on SwiftShader): the policy uses explicit attention`,
        );
      }
    }
    o.onPhase?.("graph");
    const prepared = o.prepared ?? (o.keepPrepared ? new PreparedWeights() : undefined);
    const q4Accuracy = o.q4Accuracy ?? q4AccuracyFromEnv();
    const buildOpts: DecoderOptions = {
      dtype,
      loraTargets: targets,
      kvCache: true,
      maxPositions,
      externalMinBytes: o.externalMinBytes,
      attention,
      loraScale: o.loraScale,
      shaderF16,
      ...(q4Accuracy ? { q4Accuracy } : {}),
    };
    const built = buildDecoder(cfg, weights, { ...buildOpts, prepared });
    if (o.signal) {
      // The build is synchronous: a Stop posted to this worker meanwhile is delivered by a task turn.
      await new Promise((r) => setTimeout(r, 0));
      if (o.signal.aborted) throw o.signal.reason;
    }
    // On WebGPU the present.* outputs can stay in GPU buffers and be fed back as the next past.
    const kvLocations: Record<string, "gpu-buffer"> = {};
    for (const name of built.outputNames) {
      if (name.startsWith("present.") || (o.logitsOnGpu && name === "logits")) kvLocations[name] = "gpu-buffer";
    }
    const webgpuOpts = o.kvOnGpu === false ? {} : { preferredOutputLocation: kvLocations };
    o.onPhase?.("session");
    const { session, provider } = await createSession(
      built.bytes,
      o.provider ?? "webgpu",
      o.onNote ?? ((m) => console.warn(m)),
      { externalData: built.external },
      webgpuOpts,
      o.device,
    );
    const policy = new OrtPolicy(
      cfg,
      dtype,
      maxPositions,
      targets,
      provider,
      built.kvType,
      session,
      built.outputNames,
      o.loraScale ?? null,
      provider === "webgpu" && !!o.logitsOnGpu && o.kvOnGpu !== false,
    );
    policy.device = provider === "webgpu" ? o.device ?? null : null;
    policy.attention = built.attention;
    policy.precision = built.precision;
    policy.shaderF16 = shaderF16;
    if (provider === "webgpu") {
      policy.bindingLimit = (o.device ?? await ort.env.webgpu.device).limits.maxStorageBufferBindingSize;
      const source = {
        weights,
        opts: { ...buildOpts, attention: built.attention },
        prepared: prepared ?? null,
        shared: !!o.prepared,
      };
      policy.capture = new CaptureHost(policy, source, o.onNote ?? ((m) => console.warn(m)));
    }
    return policy;
  }

  /** One forward step; runs are queued so the session has a single caller at a time. */
  step(input: StepInput): Promise<StepOutput> {
    return this.serial(async () => {
      const out = await this.stepTensors(input);
      return { logits: await logitsData(out.logits), present: out.present };
    });
  }

  /** One forward step whose logits stay on the GPU (a policy created with `logitsOnGpu`). */
  stepGpu(input: StepInput): Promise<GpuStepOutput> {
    if (!this.logitsOnGpu) throw new Error("stepGpu needs a policy created with logitsOnGpu on WebGPU");
    return this.serial(() => this.stepTensors(input));
  }

  private async stepTensors(input: StepInput): Promise<GpuStepOutput> {
    const B = input.ids.length;
    const rows = input.past ? B : this.rowsPerRun(input.ids[0]?.length ?? 0, input.mask[0]?.length ?? 0, input.keep);
    if (rows >= B) return await this.runStep(input);
    // A prefill too large for one run: runs of `rows` rows (same padded width), then one cache.
    const parts: GpuStepOutput[] = [];
    try {
      for (let i = 0; i < B; i += rows) {
        const cut = <T>(xs: T[]) => xs.slice(i, i + rows);
        parts.push(
          await this.runStep({
            ids: cut(input.ids),
            mask: cut(input.mask),
            positions: cut(input.positions),
            past: null,
            keep: input.keep,
          }),
        );
      }
      const device = await this.gpuDevice();
      const logits = await concatLogits(device, parts.map((p) => p.logits));
      const present = await joinCacheRows(
        device,
        parts.map((p) => ({ cache: p.present, rows: Array.from({ length: p.present.batch }, (_, r) => r) })),
      );
      return { logits, present };
    } catch (e) {
      for (const p of parts) {
        releaseCache(p.present);
        p.logits.dispose();
      }
      throw e;
    }
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
    const perRow = 4 *
      Math.max(
        S * c.hiddenSize,
        S * c.intermediateSize,
        S * c.numHeads * c.headDim,
        keep * c.vocabSize,
        this.attention === "explicit" ? c.numHeads * S * T4 : 0,
      );
    return Math.max(1, Math.floor(this.bindingLimit / perRow));
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
      while (end < seqs.length && (end + 1 - start) * Math.max(L, seqs[end].length) * V * 4 <= budget) {
        L = Math.max(L, seqs[end++].length);
      }
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
    if (!Number.isInteger(repeats) || repeats < 1) {
      throw new Error(`repeatCache: repeats must be a positive integer, got ${repeats}`);
    }
    if (repeats === 1) return cache;
    return await this.gatherRows(
      cache,
      Array.from({ length: cache.batch * repeats }, (_, i) => Math.floor(i / repeats)),
    );
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
  private async gatherRows(cache: KvCache, rows: readonly number[]): Promise<KvCache> {
    return await joinCacheRows(await this.gpuDevice(), [{ cache, rows }]);
  }

  /** The GPUDevice the session runs on (the caller's, else ORT's own); null on WASM. */
  async gpuDevice(): Promise<GPUDevice | null> {
    return this.provider === "webgpu" ? this.device ?? await ort.env.webgpu.device : null;
  }

  /** The adapter inputs as the next run feeds them (GPU buffers on WebGPU: resident copies or the trainer's). */
  adapterFeedsNow(): Promise<Record<string, ort.Tensor>> {
    return this.serial(async () => this.adapter.inputs(await this.gpuDevice()));
  }

  /** Whether captured decoding applies (capture-host.ts): WebGPU and a model GroupQueryAttention takes. */
  get canCapture(): boolean {
    return this.provider === "webgpu" && this.capture.applies;
  }

  /** Whether captured decoding applies and passes its check on this device (captured-check.ts, once per device and head layout). */
  async capturedOk(): Promise<boolean> {
    if (!this.canCapture) return false;
    const device = this.device ?? undefined;
    return await this.capture.ok(
      device ?? await ort.env.webgpu.device,
      (cfg, w) => OrtPolicy.checkDecoder(cfg, w, device),
    );
  }

  /**
   * Whether the sampler prefills under capture too (CapturedPrefill): captured decoding is ok, the prefill's
   * check passed on this device, and RLVR_CAPTURED_PREFILL is not 0 (Deno; benchmarks compare both).
   */
  async capturedPrefillOk(): Promise<boolean> {
    if (denoEnv("RLVR_CAPTURED_PREFILL") === "0" || !(await this.capturedOk())) return false;
    const device = this.device ?? undefined;
    return await this.capture.prefillOk(
      device ?? await ort.env.webgpu.device,
      (cfg, w) => OrtPolicy.checkDecoder(cfg, w, device),
    );
  }

  /** The two decoders captured-check.ts compares: a policy with explicit attention over (cfg, w), and its captured sessions. */
  private static async checkDecoder(
    cfg: ModelConfig,
    w: Weights,
    device: GPUDevice | undefined,
  ): Promise<CheckDecoder> {
    const p = await OrtPolicy.create(cfg, w, {
      attention: "explicit",
      checkGqa: false,
      maxPositions: 128,
      device,
      logitsOnGpu: true,
      onNote: () => {},
    });
    return {
      compare: (prompts, tokens, prefill) => compareCaptured(p, prompts, tokens, prefill),
      release: () => p.release(),
    };
  }

  /** The captured prefill for at least `rows` prompts of up to `width` tokens (capture-host.ts: one session, grown). */
  capturedPrefill(rows: number, width: number): Promise<CapturedPrefill> {
    return this.capture.prefill(rows, width);
  }

  /** The captured decoding session for at least `rows` rows and `maxT` columns (capture-host.ts: one session, grown). */
  capturedDecoder(rows: number, maxT: number): Promise<CapturedDecoder> {
    return this.capture.get(rows, maxT);
  }

  /** Releases the captured decoding session (the next capturedDecoder call makes one of its own sizes). */
  releaseCaptured(): Promise<void> {
    return this.capture.release();
  }

  /** Frees the GPU buffers of a cache that will not be fed again. */
  releaseCache(cache: KvCache): void {
    releaseCache(cache);
  }

  /** Releases the session; later calls throw. */
  async release(): Promise<void> {
    await this.serial(async () => {
      this.released = true;
      await this.capture.release();
      this.adapter.dispose();
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
    if (ids.length > this.maxPositions) {
      throw new Error(
        `${what} has ${ids.length} tokens; this policy accepts at most ${this.maxPositions} (maxPositions)`,
      );
    }
    for (const id of ids) {
      if (!Number.isInteger(id) || id < 0 || id >= this.cfg.vocabSize) {
        throw new Error(`${what}: token id ${id} outside [0, ${this.cfg.vocabSize})`);
      }
    }
  }

  private async runStep(x: StepInput): Promise<GpuStepOutput> {
    const r = await this.runGraph(x, null);
    const logits = r.logits;
    const tensors: ort.Tensor[] = [];
    for (let l = 0; l < this.cfg.numLayers; l++) tensors.push(r[`present.${l}.key`], r[`present.${l}.value`]);
    return { logits, present: { tensors, batch: x.ids.length, length: (x.past?.length ?? 0) + x.ids[0].length } };
  }

  /** One run; with `targets` (B, keep) only their log-probabilities are fetched, else logits and cache. */
  private async runGraph(x: StepInput, targets: number[][] | null): Promise<ort.InferenceSession.OnnxValueMapType> {
    if (this.released) throw new Error("the policy session was released");
    const t0 = this.timing ? performance.now() : 0;
    const B = x.ids.length, S = x.ids[0]?.length ?? 0;
    const P = x.past?.length ?? 0, T = P + S;
    if (B === 0 || S === 0) throw new Error("step: empty batch");
    if (T > this.maxPositions) {
      throw new Error(`sequence of ${T} tokens exceeds this policy's maxPositions ${this.maxPositions}`);
    }
    if (x.past && x.past.batch !== B) throw new Error(`step: past cache has batch ${x.past.batch}, input has ${B}`);
    for (let b = 0; b < B; b++) {
      if (x.ids[b].length !== S || x.positions[b].length !== S || x.mask[b].length !== T) {
        throw new Error(`step: row ${b} has ragged ids/positions/mask`);
      }
      this.checkIds(x.ids[b], `row ${b}`);
      for (const p of x.positions[b]) {
        if (p < 0 || p >= this.maxPositions) throw new Error(`step: position ${p} outside [0, ${this.maxPositions})`);
      }
    }
    if (x.keep < 1 || x.keep > S) throw new Error(`step: keep ${x.keep} outside [1, ${S}]`);
    if (this.attention === "gqa" && P > 0 && S > 1 && B > 1) {
      // ORT's GroupQueryAttention: "batch_size must be 1 when sequence_length > 1 and past context is given".
      throw new Error(
        `step: with attention "gqa" a step after a past takes one token per row when the batch has ${B} rows (got ${S}); create the policy with attention "explicit" for multi-token steps`,
      );
    }
    const { numLayers: L, numKvHeads: K, headDim: D } = this.cfg;
    const feeds: Record<string, ort.Tensor> = {
      ...this.adapter.inputs(await this.gpuDevice()),
      input_ids: int64(x.ids, [B, S]),
      attention_mask: int64(x.mask, [B, T]),
      position_ids: int64(x.positions, [B, S]),
      num_logits_to_keep: int64([[x.keep]], [1]),
      target_ids: targets
        ? int64(targets, [B, x.keep])
        : new ort.Tensor("int64", new BigInt64Array(B * x.keep), [B, x.keep]),
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
