// The demo model's architecture and random initialisation, and its Hugging Face folder: the same
// decoders the rest of the project loads (Llama or Qwen2), initialised as transformers does with
// initializer_range 0.02 (normal linear and embedding weights, unit norms, zero biases).
import { Rng } from "../../core/rng.ts";
import { type Arch, configToJson, expectedShapes, type ModelConfig, parseConfig } from "../../model/config.ts";
import type { FloatDtype } from "../../model/safetensors.ts";
import { numel, type Weights } from "../../model/tensor.ts";
import { hfFolderFiles } from "../../model/tiny.ts";

/** Sizes of a pretrained model. */
export interface DemoArch {
  arch: Extract<Arch, "llama" | "qwen2">;
  vocabSize: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  intermediate: number;
  /** Longest context it is trained for (max_position_embeddings). */
  seqLen: number;
  tieWordEmbeddings: boolean;
  ropeTheta: number;
}

/** The default demo model: ~16M parameters with an 8,192-token vocabulary (32 MB in f16). */
export const DEFAULT_DEMO_ARCH: Omit<DemoArch, "vocabSize"> = {
  arch: "qwen2",
  hidden: 384,
  layers: 8,
  heads: 6,
  kvHeads: 2,
  intermediate: 1024,
  seqLen: 1024,
  tieWordEmbeddings: true,
  ropeTheta: 10000,
};

/** The standard deviation transformers initialises with (config initializer_range). */
export const INITIALIZER_RANGE = 0.02;

/** The ModelConfig of `a`, with the tokenizer's end-of-text ids as stop tokens. */
export function demoConfig(a: DemoArch, eosTokenIds: number[]): ModelConfig {
  if (a.hidden % a.heads !== 0) throw new Error(`hidden ${a.hidden} is not a multiple of heads ${a.heads}`);
  if (a.heads % a.kvHeads !== 0) throw new Error(`heads ${a.heads} is not a multiple of kv-heads ${a.kvHeads}`);
  const headDim = a.hidden / a.heads;
  if (headDim % 2 !== 0) throw new Error(`head dimension ${headDim} must be even (RoPE)`);
  return parseConfig(configToJson({
    arch: a.arch,
    vocabSize: a.vocabSize,
    hiddenSize: a.hidden,
    intermediateSize: a.intermediate,
    numLayers: a.layers,
    numHeads: a.heads,
    numKvHeads: a.kvHeads,
    headDim,
    rmsNormEps: 1e-6,
    ropeTheta: a.ropeTheta,
    tieWordEmbeddings: a.tieWordEmbeddings,
    attentionBias: a.arch === "qwen2",
    qkNorm: false,
    maxPositionEmbeddings: a.seqLen,
    bosTokenId: null,
    eosTokenIds,
  }));
}

/** Number of parameters of `cfg` (tied embeddings counted once). */
export function parameterCount(cfg: ModelConfig): number {
  let n = 0;
  for (const shape of expectedShapes(cfg).values()) n += numel(shape);
  return n;
}

/** Seeded random weights: N(0, std) for linear and embedding weights, ones for norms, zeros for biases. */
export function initWeights(cfg: ModelConfig, seed: number, std = INITIALIZER_RANGE): Weights {
  const rng = new Rng(seed);
  const w: Weights = new Map();
  for (const [name, shape] of expectedShapes(cfg)) {
    const data = new Float32Array(numel(shape));
    if (name.endsWith("norm.weight")) data.fill(1);
    else if (!name.endsWith(".bias")) { for (let i = 0; i < data.length; i++) data[i] = std * rng.normal(); }
    w.set(name, { shape, data });
  }
  return w;
}

/** Whether AdamW's weight decay applies: matrices yes, norms and biases no (GPT-2 / nanoGPT practice). */
export function decays(name: string): boolean {
  return !name.endsWith("norm.weight") && !name.endsWith(".bias");
}

/** The Hugging Face folder files of a trained model with its tokenizer files. */
export function demoFolderFiles(
  cfg: ModelConfig,
  weights: Weights,
  tokenizer: { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> },
  o: { dtype?: FloatDtype; extraConfig?: Record<string, unknown> } = {},
): Map<string, Uint8Array> {
  const configJson = { ...configToJson(cfg), initializer_range: INITIALIZER_RANGE, use_cache: true, ...o.extraConfig };
  return hfFolderFiles({ configJson, config: cfg, weights }, { dtype: o.dtype, tokenizer });
}
