// The model and its LoRA adapter on the GPU: labelled f32 buffers for every weight (the vocabulary
// matrices bound in row windows where one binding cannot hold them), the frozen layer projections
// optionally as f16 or q4, and per adapter tensor its parameter, gradient and AdamW moments.
// Reads adapters and gradients back under PEFT names.
import type { ModelConfig } from "../../model/config.ts";
import { type LoraAdapter, loraKey, type LoraTarget, targetDims, validateAdapter } from "../../model/lora.ts";
import { ropeInvFreq } from "../../model/reference.ts";
import { numel, type Tensor, transpose2d, type Weights } from "../../model/tensor.ts";
import { validateWeights } from "../../model/config.ts";
import { isQuantizableLinear, quantizeQ4 } from "../../model/quant.ts";
import { toF16 } from "../../model/half.ts";
import { readBuffers, storageBuffer } from "../device.ts";
import type { AdamWState } from "../kernels/adamw.ts";
import { type Q4WeightGpu, uploadQ4 } from "../kernels/q4matmul.ts";
import { denoEnv } from "../../core/deno-env.ts";

/** A model's weights on the GPU. */
export interface GpuModel {
  device: GPUDevice;
  cfg: ModelConfig;
  /** Every f32 weight except the vocabulary matrices, under its HF name. */
  weights: Map<string, GPUBuffer>;
  /** Linear weights held as q4 (MatMulNBits layout, block 32) instead of f32, under their HF names. */
  q4: Map<string, Q4WeightGpu>;
  /** Linear weights held as f16 (same (out, in) layout) instead of f32, under their HF names; frozen. */
  half: Map<string, GPUBuffer>;
  /**
   * Frozen f32 layer projections also held transposed, (in, out), under their HF names (uploadModel's
   * transposedBase): the forward's x W^T reads W row-fastest (the faster loads). Empty unless asked.
   */
  transposed: Map<string, GPUBuffer>;
  /** model.embed_tokens.weight (V, H), bound in row windows of `vocabWindow` rows when larger than one binding. */
  embed: GPUBuffer;
  /** The lm head (V, H): the embedding's own buffer when tied. */
  head: GPUBuffer;
  /** Vocabulary rows per binding window (V when the matrix fits one binding, else a multiple of 64). */
  vocabWindow: number;
  /** RoPE inverse frequencies (D/2), scaling applied, float64-computed. */
  invFreq: GPUBuffer;
}

/** Rows per binding window of a (V, H) matrix: all of them when they fit, else a multiple of 64 (256-byte aligned offsets). */
function vocabWindow(device: GPUDevice, V: number, H: number, maxRows: number): number {
  const fit = Math.floor(device.limits.maxStorageBufferBindingSize / (H * 4));
  const rows = Math.min(fit, maxRows);
  if (rows >= V) return V;
  if (fit < 64) throw new Error(`uploadModel: 64 vocabulary rows of ${H} floats exceed one storage binding`);
  return Math.max(64, Math.floor(rows / 64) * 64);
}

/** Options of uploadModel. */
export interface UploadModelOptions {
  /** Cap on the vocabulary rows per binding window (tests use it to exercise windows on tiny vocabularies; rounded down to a multiple of 64). */
  maxVocabRows?: number;
  /**
   * q4 projections, the frozen base of QLoRA-style training: the seven projections of every layer
   * quantised on upload (asymmetric, block 32, MatMulNBits layout).
   */
  q4?: boolean;
  /**
   * f16 projections: the seven projections of every layer stored as f16 (round to nearest even),
   * half the memory and half the bytes the matmuls read, products still accumulated in f32. Only
   * where the device has shader-f16 (the f32 upload otherwise, see GpuModel.half); frozen: full
   * fine-tuning needs the f32 upload. Projections given as q4 stay q4.
   */
  f16?: boolean;
  /**
   * Also store each f32 layer projection (the seven of every layer; not q4 or f16 ones) transposed, (in, out), for the
   * forward's product (GpuModel.transposed): twice their memory. Frozen: a full fine-tuning trainer refuses such a
   * model (its updates would leave the copies stale).
   */
  transposedBase?: boolean;
}

/** Whether RLVR_TRAINER_F32=1 is set (Deno; false in the browser or without --allow-env). */
export function forceF32Env(): boolean {
  return denoEnv("RLVR_TRAINER_F32") === "1";
}

/**
 * Whether a trainer should store the frozen projections as f16 (uploadModel { f16 }): the device has
 * shader-f16, the checkpoint's config.json says it was saved as float16 or bfloat16 (`torch_dtype`,
 * or `dtype` in newer transformers), and neither `forceF32` nor RLVR_TRAINER_F32=1 asks for f32.
 * An f32 checkpoint stays f32: rounding it would change the model the user chose.
 */
export function halfProjections(
  device: GPUDevice,
  configJson: Record<string, unknown>,
  o: { forceF32?: boolean } = {},
): boolean {
  if (o.forceF32 || forceF32Env() || !device.features.has("shader-f16")) return false;
  const d = configJson.torch_dtype ?? configJson.dtype;
  return d === "float16" || d === "bfloat16";
}

/** Uploads f32 weights (validated against the config), the layer projections as q4 when asked. */
export function uploadModel(device: GPUDevice, cfg: ModelConfig, w: Weights, o: UploadModelOptions = {}): GpuModel {
  validateWeights(cfg, w);
  const limit = device.limits.maxStorageBufferBindingSize;
  const weights = new Map<string, GPUBuffer>();
  const q4 = new Map<string, Q4WeightGpu>();
  const half = new Map<string, GPUBuffer>();
  const transposed = new Map<string, GPUBuffer>();
  const f16 = (o.f16 ?? false) && device.features.has("shader-f16");
  for (const [name, t] of w) {
    if (name === "model.embed_tokens.weight" || name === "lm_head.weight") continue;
    if (o.q4 && isQuantizableLinear(name)) {
      // model/quant.ts's q4 weight in the kernels' terms.
      const { N: Nout, K, packed, scales, zeroPoints } = quantizeQ4(t);
      q4.set(name, uploadQ4(device, name, { Nout, K, packed, scales, zeroPoints: zeroPoints ?? undefined }));
      continue;
    }
    if (f16 && isQuantizableLinear(name)) {
      half.set(name, storageBuffer(device, `${name}:f16`, toF16(t.data)));
      continue;
    }
    if (t.data.byteLength > limit) {
      throw new Error(
        `uploadModel: ${name} has ${t.data.byteLength} bytes, over this device's maxStorageBufferBindingSize ${limit}`,
      );
    }
    weights.set(name, storageBuffer(device, name, t.data));
    if (o.transposedBase && isQuantizableLinear(name)) {
      transposed.set(name, storageBuffer(device, `${name}:T`, transpose2d(t.data, t.shape[0], t.shape[1])));
    }
  }
  const { vocabSize: V, hiddenSize: H } = cfg;
  if (V * H * 4 > device.limits.maxBufferSize) {
    throw new Error(
      `uploadModel: the (${V}, ${H}) vocabulary matrix exceeds this device's maxBufferSize ${device.limits.maxBufferSize}`,
    );
  }
  const embTensor = w.get("model.embed_tokens.weight");
  if (!embTensor) throw new Error("uploadModel: missing model.embed_tokens.weight");
  const embed = storageBuffer(device, "model.embed_tokens.weight", embTensor.data);
  const headTensor = w.get("lm_head.weight");
  const head = cfg.tieWordEmbeddings || !headTensor ? embed : storageBuffer(device, "lm_head.weight", headTensor.data);
  const invFreq = storageBuffer(device, "rope-inv-freq", Float32Array.from(ropeInvFreq(cfg)));
  return {
    device,
    cfg,
    weights,
    q4,
    half,
    transposed,
    embed,
    head,
    vocabWindow: vocabWindow(device, V, H, o.maxVocabRows ?? Infinity),
    invFreq,
  };
}

/** Every f32 weight's buffer under its HF name: the layers' and norms', then the embedding, then an untied lm head. */
export function f32Weights(m: GpuModel): [string, GPUBuffer][] {
  const out: [string, GPUBuffer][] = [...m.weights, ["model.embed_tokens.weight", m.embed]];
  if (m.head !== m.embed) out.push(["lm_head.weight", m.head]);
  return out;
}

/** Reads f32 buffers back as tensors of the given shapes in one submit and map. */
export async function readTensors(
  device: GPUDevice,
  parts: { name: string; shape: number[]; buffer: GPUBuffer }[],
): Promise<Map<string, Tensor>> {
  const read = await readBuffers(device, parts.map((p) => ({ buffer: p.buffer, bytes: numel(p.shape) * 4 })));
  return new Map(parts.map((p, i) => [p.name, { shape: p.shape, data: new Float32Array(read[i]) }]));
}

/** The GPU buffer of weight `name`, or an error naming it. */
export function weightBuffer(m: GpuModel, name: string): GPUBuffer {
  const b = m.weights.get(name);
  if (!b) throw new Error(`GpuModel: no weight ${name}`);
  return b;
}

/** A layer projection's weight (out, in) as the matmul binds it: f32, or f16 when uploaded so. */
export function linearWeight(m: GpuModel, name: string): { buf: GPUBuffer; f16: boolean } {
  const h = m.half.get(name);
  return h ? { buf: h, f16: true } : { buf: weightBuffer(m, name), f16: false };
}

/** Frees every buffer of the model. */
export function destroyModel(m: GpuModel): void {
  for (const [, b] of f32Weights(m)) b.destroy();
  for (const b of m.half.values()) b.destroy();
  for (const b of m.transposed.values()) b.destroy();
  for (const q of m.q4.values()) for (const b of [q.packed, q.scales, q.zeroPoints]) b?.destroy();
  m.invFreq.destroy();
}

/** One adapted linear layer: A (r, in), B (out, r), their gradients and AdamW moments. */
export interface LoraSlot {
  layer: number;
  target: LoraTarget;
  out: number;
  in: number;
  A: GPUBuffer;
  B: GPUBuffer;
  dA: GPUBuffer;
  dB: GPUBuffer;
  mA: GPUBuffer;
  vA: GPUBuffer;
  mB: GPUBuffer;
  vB: GPUBuffer;
}

/** A LoRA adapter on the GPU. */
export interface GpuLora {
  r: number;
  alpha: number;
  /** alpha / r. */
  scale: number;
  targets: LoraTarget[];
  slots: Map<string, LoraSlot>;
}

/** The gradient and AdamW moments of the parameter `name`, `count` floats each (zeroed), labelled after it. */
export function optimiserBuffers(
  device: GPUDevice,
  name: string,
  count: number,
): Record<"grad" | "m" | "v", GPUBuffer> {
  const buf = (prefix: string) => storageBuffer(device, `${prefix}:${name}`, count * 4);
  return { grad: buf("grad"), m: buf("adam-m"), v: buf("adam-v") };
}

function slotKey(layer: number, target: LoraTarget): string {
  return `${layer}.${target}`;
}

/** The slot adapting `target` in `layer`, or undefined when the adapter leaves it alone. */
export function loraSlot(l: GpuLora | undefined, layer: number, target: LoraTarget): LoraSlot | undefined {
  return l?.slots.get(slotKey(layer, target));
}

/** The AdamW states of an adapter's tensors: A, then B, of every slot. */
export function loraAdamStates(lora: GpuLora): AdamWState[] {
  return [...lora.slots.values()].flatMap((s) => [
    { param: s.A, grad: s.dA, m: s.mA, v: s.vA, count: lora.r * s.in },
    { param: s.B, grad: s.dB, m: s.mB, v: s.vB, count: s.out * lora.r },
  ]);
}

/** Uploads an adapter (validated against the config) with zeroed gradients and moments. */
export function uploadAdapter(device: GPUDevice, cfg: ModelConfig, a: LoraAdapter): GpuLora {
  validateAdapter(cfg, a);
  const slots = new Map<string, LoraSlot>();
  for (let layer = 0; layer < cfg.numLayers; layer++) {
    for (const target of a.targets) {
      const [out, inp] = targetDims(cfg, target);
      const kA = loraKey(layer, target, "A");
      const kB = loraKey(layer, target, "B");
      const tA = a.tensors.get(kA);
      const tB = a.tensors.get(kB);
      if (!tA || !tB) throw new Error(`uploadAdapter: missing ${tA ? kB : kA}`);
      const oA = optimiserBuffers(device, kA, a.r * inp), oB = optimiserBuffers(device, kB, out * a.r);
      slots.set(slotKey(layer, target), {
        layer,
        target,
        out,
        in: inp,
        A: storageBuffer(device, kA, tA.data),
        B: storageBuffer(device, kB, tB.data),
        dA: oA.grad,
        dB: oB.grad,
        mA: oA.m,
        vA: oA.v,
        mB: oB.m,
        vB: oB.v,
      });
    }
  }
  return { r: a.r, alpha: a.alpha, scale: a.alpha / a.r, targets: [...a.targets], slots };
}

/** Zeroes every gradient buffer of the adapter. */
export function encodeZeroGrads(enc: GPUCommandEncoder, l: GpuLora): void {
  for (const s of l.slots.values()) {
    enc.clearBuffer(s.dA);
    enc.clearBuffer(s.dB);
  }
}

function readPair(device: GPUDevice, l: GpuLora, pick: (s: LoraSlot) => [GPUBuffer, GPUBuffer]) {
  return readTensors(
    device,
    [...l.slots.values()].flatMap((s) => [
      { name: loraKey(s.layer, s.target, "A"), shape: [l.r, s.in], buffer: pick(s)[0] },
      { name: loraKey(s.layer, s.target, "B"), shape: [s.out, l.r], buffer: pick(s)[1] },
    ]),
  );
}

/** Reads the adapter's current parameters back as a PEFT-named LoraAdapter. */
export async function readAdapter(device: GPUDevice, l: GpuLora): Promise<LoraAdapter> {
  return { r: l.r, alpha: l.alpha, targets: [...l.targets], tensors: await readPair(device, l, (s) => [s.A, s.B]) };
}

/** Reads the accumulated gradients back under the adapter's PEFT tensor names. */
export function readAdapterGrads(device: GPUDevice, l: GpuLora): Promise<Map<string, Tensor>> {
  return readPair(device, l, (s) => [s.dA, s.dB]);
}

/** Frees every buffer of the adapter. */
export function destroyAdapter(l: GpuLora): void {
  for (const s of l.slots.values()) for (const b of [s.A, s.B, s.dA, s.dB, s.mA, s.vA, s.mB, s.vB]) b.destroy();
}
