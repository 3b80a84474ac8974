// One model at work: the ONNX policy that samples, the WGSL trainer that updates, and the LoRA
// adapter they share. Both run on one GPUDevice (the trainer's; ORT's session is created on it, on
// Dawn and on Deno's wgpu alike). The trainer owns the adapter's parameters and AdamW moments on
// the GPU, and the policy reads the same buffers as its LoRA inputs: an update is seen by the next
// sampling run without a copy. Where the policy fell back to WASM, it is handed a read-back copy.
import type { ChatMessage } from "../../core/prompts.ts";
import type { HfModel } from "../../model/hf.ts";
import {
  LORA_TARGETS,
  type LoraAdapter,
  loraKey,
  type LoraTarget,
  validateAdapter,
  zeroAdapter,
} from "../../model/lora.ts";
import type { ModelConfig } from "../../model/config.ts";
import type { AttentionKind, WeightDtype } from "../../model/onnx/decoder.ts";
import { OrtPolicy, type PolicyOptions } from "../../model/policy.ts";
import {
  type Sample,
  sampleBatch,
  type SampleProgress,
  type SampleTiming,
  type SamplingParams,
} from "../../model/sampler.ts";
import { sampleBatchGpu, samplerFromEnv, type SamplerKind } from "../../model/sampler-gpu.ts";
import type { Tensor, Weights } from "../../model/tensor.ts";
import { readBuffers, writeBuffer } from "../../gpu/device.ts";
import { trimArena } from "../../gpu/arena.ts";
import { GpuCensus } from "../../gpu/census.ts";
import {
  destroyAdapter,
  destroyModel,
  type GpuLora,
  type GpuModel,
  halfProjections,
  uploadAdapter,
  uploadModel,
} from "../../gpu/model/state.ts";
import { ChatCodec } from "./prompting.ts";
import { logprobsWebgpu } from "../../gpu/trainer/logprobs.ts";
import { type GrpoTrainer, grpoTrainer, type GrpoTrainerOptions } from "../../gpu/trainer/grpo-step.ts";
import { perfSwitches } from "../../gpu/switches.ts";

/** How the runtime is built from a model cell. */
export interface ModelRuntimeOptions {
  dtype: WeightDtype;
  loraRank: number;
  loraAlpha: number;
  /** Seed of the adapter's A matrices (B starts at zero: the adapted model equals the base). */
  seed: number;
  /**
   * An adapter to start from instead (a model cell's `adapter`, read with readPeftAdapter), with
   * where it came from. Its r and alpha must equal loraRank and loraAlpha; targets it lacks start
   * fresh (B = 0).
   */
  imported?: { adapter: LoraAdapter; from: string };
  targets?: readonly LoraTarget[];
  /** Longest prompt + completion the policy accepts (default min(max positions, 4096)). */
  maxPositions?: number;
  /** The policy graph's attention operators (OrtPolicy's default, "gqa", when left out). */
  attention?: AttentionKind;
  /**
   * Where tokens are chosen (sampler-gpu.ts): "captured" (the default; graph capture and the choice on
   * the GPU, falling back to "gpu" where capture does not apply), "gpu", or "cpu" (the logits read
   * back every step). RLVR_SAMPLER overrides the default under Deno.
   */
  sampler?: SamplerKind;
  onNote?: (msg: string) => void;
  /** Stop while the model loads: checked before the graph build, before the session and after it. */
  signal?: AbortSignal;
  /** Told as each long phase of the policy's creation starts (OrtPolicy's phases). */
  onPhase?: PolicyOptions["onPhase"];
}

/** A turn of the task queue, so a Stop posted to this worker during synchronous work is seen. */
const nextTask = () => new Promise((r) => setTimeout(r, 0));

/**
 * The runtime's starting adapter from an imported one: its tensors on the targets it has, `fresh`'s
 * (B = 0) on the others. The ONNX policy fixes alpha / r in its graph and the trainer's slots have
 * the cell's rank, so r and alpha must be the cell's; errors say what to change.
 */
export function startFrom(cfg: ModelConfig, fresh: LoraAdapter, imported: LoraAdapter, from: string): LoraAdapter {
  if (imported.r !== fresh.r || imported.alpha !== fresh.alpha) {
    throw new Error(
      `adapter ${from} has r = ${imported.r} and lora_alpha = ${imported.alpha}, the model cell loraRank ${fresh.r} and loraAlpha ${fresh.alpha}: ` +
        `set the model cell's loraRank to ${imported.r} and loraAlpha to ${imported.alpha} to start from this adapter (the policy's graph fixes the scale alpha / r)`,
    );
  }
  const extra = imported.targets.filter((t) => !fresh.targets.includes(t));
  if (extra.length) {
    throw new Error(
      `adapter ${from} targets ${extra.join(", ")}, which this model runtime has no LoRA inputs for (it has ${
        fresh.targets.join(", ")
      })`,
    );
  }
  try {
    validateAdapter(cfg, imported);
  } catch (e) {
    throw new Error(`adapter ${from} does not fit this model: ${e instanceof Error ? e.message : String(e)}`);
  }
  const tensors = new Map(fresh.tensors);
  for (let l = 0; l < cfg.numLayers; l++) {
    for (const t of imported.targets) {
      for (const which of ["A", "B"] as const) {
        const k = loraKey(l, t, which);
        const src = imported.tensors.get(k);
        if (src) tensors.set(k, { shape: [...src.shape], data: src.data.slice() });
      }
    }
  }
  const unused = [...imported.tensors.keys()].filter((k) => !fresh.tensors.has(k));
  if (unused.length) {
    throw new Error(
      `adapter ${from} has tensors this model has no place for (${unused.length}, e.g. ${
        unused[0]
      }): was it trained on a model with more layers?`,
    );
  }
  return { ...fresh, tensors };
}

/** The policy, the trainer and their adapter for one loaded model. */
export class ModelRuntime {
  private gpu: { model: GpuModel; lora: GpuLora; trainer: GrpoTrainer; census: GpuCensus } | null = null;
  /** `adapter` lags the trainer's buffers (an update since the last read-back). */
  private adapterStale = false;
  /** Counts updates and restores: a read-back that resolves after a later one must not become `adapter`. */
  private updates = 0;
  /** The policy reads the trainer's LoRA buffers (setAdapterBuffers) instead of a copy. */
  private boundToTrainer = false;
  private readonly codec: ChatCodec;

  private constructor(
    readonly hf: HfModel & { name: string },
    readonly policy: OrtPolicy,
    private readonly device: () => Promise<GPUDevice>,
    /** The adapter the policy samples with (kept equal to the trainer's after every update). */
    public adapter: LoraAdapter,
    /** Where the starting adapter was imported from and the targets it had (null: a fresh adapter, B = 0). */
    readonly imported: { from: string; targets: LoraTarget[] } | null = null,
  ) {
    this.codec = new ChatCodec(hf.tokenizer, hf.chatTemplate);
  }

  /** Builds the policy session with LoRA inputs for the adapter's targets; the trainer comes on first use. */
  static async create(
    hf: HfModel & { name: string },
    device: () => Promise<GPUDevice>,
    o: ModelRuntimeOptions,
  ): Promise<ModelRuntime> {
    const targets = o.targets ?? LORA_TARGETS;
    const check = async () => {
      if (!o.signal) return;
      await nextTask();
      if (o.signal.aborted) throw o.signal.reason;
    };
    await check();
    const fresh = zeroAdapter(hf.config, { r: o.loraRank, alpha: o.loraAlpha, targets, seed: o.seed });
    // Checked before the graph build (the long part), so a mismatched adapter fails at once.
    const adapter = o.imported ? startFrom(hf.config, fresh, o.imported.adapter, o.imported.from) : fresh;
    // The trainer's device, so the policy's session shares it (no device: ORT falls back to WASM).
    const shared = await device().catch(() => undefined);
    const sampler = o.sampler ?? samplerFromEnv() ?? "captured";
    const policy = await OrtPolicy.create(hf.config, hf.weights, {
      dtype: o.dtype,
      loraTargets: targets,
      maxPositions: o.maxPositions,
      attention: o.attention,
      loraScale: o.loraAlpha / o.loraRank, /* fixed in the graph: the runtime's adapter keeps them */
      onNote: o.onNote,
      signal: o.signal,
      device: shared,
      onPhase: o.onPhase,
      logitsOnGpu: sampler !== "cpu",
      keepPrepared: sampler === "captured",
    });
    try {
      await check();
    } catch (e) {
      // Stopped while the session was created: free it rather than leave it behind.
      await policy.release();
      throw e;
    }
    const rt = new ModelRuntime(
      hf,
      policy,
      device,
      adapter,
      o.imported ? { from: o.imported.from, targets: [...o.imported.adapter.targets] } : null,
    );
    rt.sampler = sampler === "cpu" || !policy.logitsOnGpu ? "cpu" : sampler;
    policy.setAdapter(adapter, "lora");
    return rt;
  }

  /**
   * One short greedy decoding (a prefill and two steps): the WebGPU provider compiles its shader
   * programs on first use, which on a software adapter (SwiftShader) takes minutes. Doing it here
   * lets the model cell say so, instead of the first evaluation looking stuck.
   */
  async warmUp(): Promise<void> {
    const ids = this.encode(this.renderPrompt([{ role: "user", content: "SELECT 1" }]));
    await this.sample([ids, ids], 1, { temperature: 0, topP: 1, topK: 0, minP: 0, maxNewTokens: 2, stop: [], seed: 0 });
  }

  /** The prompt text of chat messages through the model's chat template (plain contents when it has none). */
  renderPrompt(messages: readonly ChatMessage[]): string {
    return this.codec.renderPrompt(messages);
  }

  /** Token ids of a rendered prompt. */
  encode(text: string): number[] {
    return this.codec.encode(text);
  }

  /** Text of token ids (special tokens kept, EOS stripped by the sampler already). */
  decode(ids: readonly number[]): string {
    return this.codec.decode(ids);
  }

  /** Where this runtime chooses tokens ("cpu" where the policy runs on WASM). */
  sampler: SamplerKind = "cpu";

  /** `n` completions of every prompt under the current adapter. */
  sample(
    prompts: readonly (readonly number[])[],
    n: number,
    params: Omit<SamplingParams, "eosTokenIds">,
    onProgress?: (p: SampleProgress) => void,
    timing?: SampleTiming,
  ): Promise<Sample[]> {
    const p = { ...params, eosTokenIds: this.hf.config.eosTokenIds };
    const decode = (ids: readonly number[]) => this.decode(ids);
    if (this.sampler === "cpu") return sampleBatch(this.policy, prompts, n, p, decode, onProgress, timing);
    return sampleBatchGpu(this.policy, prompts, n, p, decode, onProgress, timing, this.sampler);
  }

  /**
   * How the trainer will store the frozen projections (the choice freshTrainer makes): q4 under a
   * q4 policy, f16 where halfProjections allows, else f32.
   */
  async trainerProjections(): Promise<"q4" | "f16" | "f32"> {
    if (this.policy.dtype === "q4") return "q4";
    return halfProjections(await this.device(), this.hf.configJson) ? "f16" : "f32";
  }

  /**
   * The frozen base model on the trainer's device (uploaded on first use, as freshTrainer does):
   * other heads over the same weights (the process reward model) share it instead of a second copy.
   */
  async baseModel(): Promise<GpuModel> {
    if (!this.gpu) await this.freshTrainer({});
    if (!this.gpu) throw new Error("baseModel: the trainer's model was not uploaded");
    return this.gpu.model;
  }

  /** The tokenizer's ids of `text` with no special tokens added (a completion's text, a prefix to continue). */
  encodePlain(text: string): number[] {
    return this.hf.tokenizer.encode(text, { addSpecialTokens: false });
  }

  /** The trainer on the current adapter with fresh AdamW moments and step 0 (one optimiser per training cell). */
  async freshTrainer(opts: Partial<GrpoTrainerOptions>): Promise<GrpoTrainer> {
    const device = await this.device();
    if (!this.gpu) {
      // The trainer's buffer bytes (live and high-water mark): WebGPU reports no memory use.
      const census = new GpuCensus(device).install();
      // A q4 policy gets a q4 trainer base (QLoRA-style): both quantise the same way (MatMulNBits, block 32).
      // Otherwise f16 frozen projections where the device has shader-f16 and the checkpoint was f16/bf16
      // (halfProjections; RLVR_TRAINER_F32=1 keeps f32).
      const q4 = this.policy.dtype === "q4";
      const f16 = !q4 && halfProjections(device, this.hf.configJson);
      // f32 projections under the switch wT: a transposed copy of each for the forward (frozen: adapters only).
      const model = uploadModel(device, this.hf.config, this.hf.weights, {
        q4,
        f16,
        transposedBase: !q4 && !f16 && perfSwitches().wT === 1,
      });
      const lora = uploadAdapter(device, this.hf.config, this.adapter);
      this.gpu = { model, lora, trainer: grpoTrainer(model, lora, opts), census };
    } else {
      const enc = device.createCommandEncoder({ label: "reset-adam" });
      for (const s of this.gpu.lora.slots.values()) for (const b of [s.mA, s.vA, s.mB, s.vB]) enc.clearBuffer(b);
      device.queue.submit([enc.finish()]);
      this.gpu.trainer = grpoTrainer(this.gpu.model, this.gpu.lora, opts);
    }
    return this.gpu.trainer;
  }

  /** The trainer of the current cell (after `freshTrainer`). */
  get trainer(): GrpoTrainer {
    if (!this.gpu) throw new Error("no trainer yet: call freshTrainer first");
    return this.gpu.trainer;
  }

  /** Per-position log-probabilities of `seqs` under the base model (no adapter): the KL reference. */
  async referenceLogprobs(seqs: number[][]): Promise<number[][]> {
    if (!this.gpu) throw new Error("no trainer yet: call freshTrainer first");
    return await logprobsWebgpu(this.gpu.model, seqs);
  }

  /**
   * After an update: a policy on the trainer's device reads the trainer's A and B buffers directly
   * (bound once; later updates land in the same buffers), else it gets a read-back copy. `adapter`
   * is marked stale; currentAdapter() reads it back when a copy is needed (checkpoints, export).
   */
  async syncPolicy(): Promise<void> {
    if (!this.gpu) return;
    // Training is over until the next batch: the trainer's kept activations (arena.ts) go, so
    // sampling has the memory they held (the next step's shape differs anyway).
    trimArena(this.gpu.model.device);
    this.adapterStale = true;
    this.updates++;
    if (this.policy.device && this.policy.device === this.gpu.model.device) {
      if (!this.boundToTrainer) {
        this.bindTrainer();
        this.boundToTrainer = true;
      }
      return;
    }
    this.policy.setAdapter(await this.currentAdapter(), "lora");
  }

  /** Feeds the policy the trainer's A and B buffers. */
  private bindTrainer(): void {
    if (!this.gpu) return;
    const buffers = new Map<string, GPUBuffer>();
    for (const s of this.gpu.lora.slots.values()) {
      buffers.set(loraKey(s.layer, s.target, "A"), s.A);
      buffers.set(loraKey(s.layer, s.target, "B"), s.B);
    }
    this.policy.setAdapterBuffers({
      r: this.gpu.lora.r,
      alpha: this.gpu.lora.alpha,
      targets: this.gpu.lora.targets,
      buffers,
    }, "lora");
  }

  /**
   * `n` completions of every prompt under `adapter` (null: the base model, no adapter), the
   * runtime's own adapter in use again afterwards: the ask cell compares stages without touching
   * the trainer's state.
   */
  async sampleWith(
    adapter: LoraAdapter | null,
    prompts: readonly (readonly number[])[],
    n: number,
    params: Omit<SamplingParams, "eosTokenIds">,
    onProgress?: (p: SampleProgress) => void,
  ): Promise<Sample[]> {
    this.policy.setAdapter(adapter, adapter ? "other" : null);
    try {
      return await this.sample(prompts, n, params, onProgress);
    } finally {
      if (this.boundToTrainer) this.bindTrainer();
      else this.policy.setAdapter(await this.currentAdapter(), "lora");
    }
  }

  /** The adapter as the trainer holds it now (read back from the GPU when it changed since). */
  async currentAdapter(): Promise<LoraAdapter> {
    if (this.gpu && this.adapterStale) await this.readTrainer(false);
    return this.adapter;
  }

  /**
   * Adapter tensors (`lora.<PEFT name>`) and AdamW moments (`adam.m.` / `adam.v.`), for a checkpoint,
   * as the trainer holds them at the call: the copies are queued before it returns, so the next
   * update may be submitted before it resolves (the GRPO cell writes step N's checkpoint while step
   * N + 1 samples). All of them come back in one map; the adapter read also becomes `adapter`.
   */
  stateTensors(): Promise<Weights> {
    if (!this.gpu) {
      const out: Weights = new Map();
      for (const [k, t] of this.adapter.tensors) out.set(`lora.${k}`, { shape: [...t.shape], data: t.data.slice() });
      return Promise.resolve(out);
    }
    return this.readTrainer(true).then(({ lora, adam }) => {
      const out: Weights = new Map();
      for (const [k, t] of lora) out.set(`lora.${k}`, t);
      for (const [k, t] of adam) out.set(k, t);
      return out;
    });
  }

  /**
   * The trainer's A and B (and with `moments` its AdamW m and v) of every slot, copies queued at the
   * call and read back together (readBuffers). Unless an update came in between, A and B become
   * `adapter` (a checkpoint's read serves export's currentAdapter too).
   */
  private readTrainer(moments: boolean): Promise<{ lora: Map<string, Tensor>; adam: Map<string, Tensor> }> {
    const gpu = this.gpu;
    if (!gpu) return Promise.reject(new Error("no trainer yet: call freshTrainer first"));
    const r = gpu.lora.r;
    const names: { key: string; shape: number[]; adam: boolean }[] = [];
    const parts: { buffer: GPUBuffer; bytes: number }[] = [];
    const add = (key: string, shape: number[], buffer: GPUBuffer, adam: boolean) => {
      names.push({ key, shape, adam });
      parts.push({ buffer, bytes: shape[0] * shape[1] * 4 });
    };
    for (const s of gpu.lora.slots.values()) {
      const kA = loraKey(s.layer, s.target, "A"), kB = loraKey(s.layer, s.target, "B");
      add(kA, [r, s.in], s.A, false);
      add(kB, [s.out, r], s.B, false);
      if (!moments) continue;
      add(`adam.m.${kA}`, [r, s.in], s.mA, true);
      add(`adam.v.${kA}`, [r, s.in], s.vA, true);
      add(`adam.m.${kB}`, [s.out, r], s.mB, true);
      add(`adam.v.${kB}`, [s.out, r], s.vB, true);
    }
    const updates = this.updates;
    return readBuffers(gpu.model.device, parts).then((read) => {
      const lora = new Map<string, Tensor>(), adam = new Map<string, Tensor>();
      names.forEach((n, i) => (n.adam ? adam : lora).set(n.key, { shape: n.shape, data: new Float32Array(read[i]) }));
      if (this.gpu === gpu && this.updates === updates) {
        this.adapter = { r: gpu.lora.r, alpha: gpu.lora.alpha, targets: [...gpu.lora.targets], tensors: lora };
        this.adapterStale = false;
      }
      return { lora, adam };
    });
  }

  /** Restores adapter and (when a trainer exists and the tensors hold them) AdamW moments and step. */
  async restoreState(tensors: Weights, trainerStep: number): Promise<void> {
    const loraTensors = new Map<string, Tensor>();
    for (const k of this.adapter.tensors.keys()) {
      const t = tensors.get(`lora.${k}`);
      if (!t) throw new Error(`checkpoint lacks lora.${k} (was it saved with another LoRA rank or targets?)`);
      loraTensors.set(k, { shape: [...t.shape], data: t.data.slice() });
    }
    this.adapter = { ...this.adapter, tensors: loraTensors };
    this.adapterStale = false;
    this.updates++;
    if (!this.gpu || !this.boundToTrainer) this.policy.setAdapter(this.adapter, "lora");
    if (!this.gpu) return;
    const { device } = this.gpu.model;
    for (const s of this.gpu.lora.slots.values()) {
      const kA = loraKey(s.layer, s.target, "A"), kB = loraKey(s.layer, s.target, "B");
      const put = (buf: GPUBuffer, name: string) => {
        const t = tensors.get(name);
        if (t) writeBuffer(device, buf, t.data);
      };
      put(s.A, `lora.${kA}`);
      put(s.B, `lora.${kB}`);
      put(s.mA, `adam.m.${kA}`);
      put(s.vA, `adam.v.${kA}`);
      put(s.mB, `adam.m.${kB}`);
      put(s.vB, `adam.v.${kB}`);
    }
    this.gpu.trainer.step = trainerStep;
  }

  /**
   * The trainer device's GPU buffer bytes by its own accounting (src/gpu/census.ts): live now, and
   * the high-water mark since the trainer was built or the last resetGpuPeak() (weights, adapter with
   * gradients and moments, a step's activations and scratch, the uniform pool). The policy's session
   * shares the device: its weights (uploaded before the trainer) are not counted, the buffers its runs
   * create meanwhile are.
   */
  gpuMemory(): { liveBytes: number; peakBytes: number } | undefined {
    if (!this.gpu) return undefined;
    return { liveBytes: this.gpu.census.liveBufferBytes, peakBytes: this.gpu.census.peakBufferBytes };
  }

  /** Starts a new GPU-memory high-water mark at what is live now (one per metrics step). */
  resetGpuPeak(): void {
    this.gpu?.census.resetPeak();
  }

  private readonly dependents: (() => void)[] = [];

  /** Calls `free` when the runtime is released (before its GPU model goes): what was built on baseModel(). */
  onRelease(free: () => void): void {
    this.dependents.push(free);
  }

  /** Frees the policy session and the GPU copies (and what was built on them, onRelease). */
  async release(): Promise<void> {
    for (const free of this.dependents.splice(0)) free();
    await this.policy.release();
    if (this.gpu) {
      destroyAdapter(this.gpu.lora);
      destroyModel(this.gpu.model);
      this.gpu.census.uninstall();
      this.gpu = null;
    }
  }
}
