// The model and its LoRA adapter on the GPU: labelled f32 buffers for every weight, the vocabulary
// matrices split into row chunks that each fit one storage binding, and per adapter tensor its
// parameter, gradient and AdamW moments. Reads adapters and gradients back under PEFT names.
import type { ModelConfig } from "../../model/config.ts";
import { type LoraAdapter, loraKey, type LoraTarget, targetDims, validateAdapter } from "../../model/lora.ts";
import { ropeInvFreq } from "../../model/reference.ts";
import type { Tensor, Weights } from "../../model/tensor.ts";
import { validateWeights } from "../../model/config.ts";
import { isQuantizableLinear, quantizeQ4 } from "../../model/quant.ts";
import { readF32, storageBuffer } from "../device.ts";
import { type Q4WeightGpu, uploadQ4 } from "../kernels/q4matmul.ts";

/** Rows [v0, v0 + rows) of a (V, H) vocabulary matrix in one buffer. */
export interface VocabChunk {
  v0: number;
  rows: number;
  buf: GPUBuffer;
}

/** A model's weights on the GPU. */
export interface GpuModel {
  device: GPUDevice;
  cfg: ModelConfig;
  /** Every f32 weight except the vocabulary matrices, under its HF name. */
  weights: Map<string, GPUBuffer>;
  /** Linear weights held as q4 (MatMulNBits layout, block 32) instead of f32, under their HF names. */
  q4: Map<string, Q4WeightGpu>;
  /** model.embed_tokens.weight in row chunks. */
  embed: VocabChunk[];
  /** The lm-head rows (the embedding chunks when tied). */
  head: VocabChunk[];
  /** RoPE inverse frequencies (D/2), scaling applied, float64-computed. */
  invFreq: GPUBuffer;
}

/** Largest vocabulary chunk in bytes: well under lavapipe's 128 MiB binding limit. */
const VOCAB_CHUNK_BYTES = 32 * 2 ** 20;
/** Most rows per vocabulary chunk, so the (N, rows) logits scratch of 8192 tokens stays within 128 MiB. */
const VOCAB_CHUNK_ROWS = 4096;

function chunkVocab(device: GPUDevice, name: string, t: Tensor, maxRows: number): VocabChunk[] {
  const [V, H] = t.shape;
  const rows = Math.max(1, Math.min(V, maxRows, VOCAB_CHUNK_ROWS, Math.floor(VOCAB_CHUNK_BYTES / (H * 4))));
  const out: VocabChunk[] = [];
  for (let v0 = 0; v0 < V; v0 += rows) {
    const n = Math.min(rows, V - v0);
    out.push({ v0, rows: n, buf: storageBuffer(device, `${name}[${v0}:${v0 + n}]`, t.data.subarray(v0 * H, (v0 + n) * H)) });
  }
  return out;
}

/** Options of uploadModel. */
export interface UploadModelOptions {
  /** Cap on the rows per vocabulary chunk (tests use it to exercise chunking on tiny vocabularies). */
  maxVocabRows?: number;
  /** Quantise the seven projections of every layer to q4 (asymmetric, block 32) on upload: the frozen base of QLoRA-style training. */
  q4?: boolean;
}

/** Uploads f32 weights (validated against the config), the layer projections as q4 when asked. */
export function uploadModel(device: GPUDevice, cfg: ModelConfig, w: Weights, o: UploadModelOptions = {}): GpuModel {
  validateWeights(cfg, w);
  const limit = device.limits.maxStorageBufferBindingSize;
  const weights = new Map<string, GPUBuffer>();
  const q4 = new Map<string, Q4WeightGpu>();
  for (const [name, t] of w) {
    if (name === "model.embed_tokens.weight" || name === "lm_head.weight") continue;
    if (o.q4 && isQuantizableLinear(name)) {
      const q = quantizeQ4(t);
      q4.set(name, uploadQ4(device, name, { Nout: q.N, K: q.K, packed: q.packed, scales: q.scales, zeroPoints: q.zeroPoints ?? undefined }));
      continue;
    }
    if (t.data.byteLength > limit) throw new Error(`uploadModel: ${name} has ${t.data.byteLength} bytes, over this device's maxStorageBufferBindingSize ${limit}`);
    weights.set(name, storageBuffer(device, name, t.data));
  }
  const maxRows = o.maxVocabRows ?? Infinity;
  const embTensor = w.get("model.embed_tokens.weight");
  if (!embTensor) throw new Error("uploadModel: missing model.embed_tokens.weight");
  const embed = chunkVocab(device, "model.embed_tokens.weight", embTensor, maxRows);
  const headTensor = w.get("lm_head.weight");
  const head = cfg.tieWordEmbeddings || !headTensor ? embed : chunkVocab(device, "lm_head.weight", headTensor, maxRows);
  const invFreq = storageBuffer(device, "rope-inv-freq", Float32Array.from(ropeInvFreq(cfg)));
  return { device, cfg, weights, q4, embed, head, invFreq };
}

/** The GPU buffer of weight `name`, or an error naming it. */
export function weightBuffer(m: GpuModel, name: string): GPUBuffer {
  const b = m.weights.get(name);
  if (!b) throw new Error(`GpuModel: no weight ${name}`);
  return b;
}

/** Frees every buffer of the model. */
export function destroyModel(m: GpuModel): void {
  for (const b of m.weights.values()) b.destroy();
  for (const q of m.q4.values()) for (const b of [q.packed, q.scales, q.zeroPoints]) b?.destroy();
  for (const c of m.embed) c.buf.destroy();
  if (m.head !== m.embed) for (const c of m.head) c.buf.destroy();
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

function slotKey(layer: number, target: LoraTarget): string {
  return `${layer}.${target}`;
}

/** The slot adapting `target` in `layer`, or undefined when the adapter leaves it alone. */
export function loraSlot(l: GpuLora | undefined, layer: number, target: LoraTarget): LoraSlot | undefined {
  return l?.slots.get(slotKey(layer, target));
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
      const nA = a.r * inp;
      const nB = out * a.r;
      slots.set(slotKey(layer, target), {
        layer, target, out, in: inp,
        A: storageBuffer(device, kA, tA.data),
        B: storageBuffer(device, kB, tB.data),
        dA: storageBuffer(device, `grad:${kA}`, nA * 4),
        dB: storageBuffer(device, `grad:${kB}`, nB * 4),
        mA: storageBuffer(device, `adam-m:${kA}`, nA * 4),
        vA: storageBuffer(device, `adam-v:${kA}`, nA * 4),
        mB: storageBuffer(device, `adam-m:${kB}`, nB * 4),
        vB: storageBuffer(device, `adam-v:${kB}`, nB * 4),
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

async function readPair(device: GPUDevice, l: GpuLora, pick: (s: LoraSlot) => [GPUBuffer, GPUBuffer]): Promise<Map<string, Tensor>> {
  const out = new Map<string, Tensor>();
  for (const s of l.slots.values()) {
    const [a, b] = pick(s);
    out.set(loraKey(s.layer, s.target, "A"), { shape: [l.r, s.in], data: await readF32(device, a, l.r * s.in) });
    out.set(loraKey(s.layer, s.target, "B"), { shape: [s.out, l.r], data: await readF32(device, b, s.out * l.r) });
  }
  return out;
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
