// Tiny random models of every supported architecture, with a small byte-level BPE tokenizer,
// laid out as a Hugging Face folder: fixtures for the reference, the ONNX policy and the trainer.
import { Rng } from "../core/rng.ts";
import { bytesToUnicode } from "./bpe/bytelevel.ts";
import { bpeTokenizerFiles, DEMO_CHAT_TEMPLATE } from "./bpe/files.ts";
import type { BpeModel } from "./bpe/train.ts";
import { type Arch, configToJson, expectedShapes, type ModelConfig, parseConfig, type RopeScaling } from "./config.ts";
import { type FloatDtype, weightsToSafetensors } from "./safetensors.ts";
import { numel, type Weights } from "./tensor.ts";

/** Size and seed of a tiny model; sizes default per architecture (odd-ish, GQA, Qwen3 head_dim apart). */
export interface TinyOptions {
  seed: number;
  vocabSize?: number;
  hidden?: number;
  layers?: number;
  heads?: number;
  kvHeads?: number;
  headDim?: number;
  intermediate?: number;
  tieWordEmbeddings?: boolean;
  ropeTheta?: number;
  ropeScaling?: RopeScaling;
}

/** A tiny model: its config.json object, the normalised config and float32 weights. */
export interface TinyModel {
  configJson: Record<string, unknown>;
  config: ModelConfig;
  weights: Weights;
}

const DEFAULTS = {
  qwen2: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, tie: true },
  llama: { hidden: 36, layers: 2, heads: 6, kvHeads: 3, headDim: 6, intermediate: 60, tie: false },
  qwen3: { hidden: 40, layers: 2, heads: 4, kvHeads: 2, headDim: 12, intermediate: 56, tie: true },
} as const;

/** A seeded random model whose weights are large enough that logits vary visibly across tokens. */
export function makeTinyModel(arch: Arch, o: TinyOptions): TinyModel {
  const d = DEFAULTS[arch];
  const hidden = o.hidden ?? d.hidden;
  const heads = o.heads ?? d.heads;
  const config: ModelConfig = {
    arch,
    vocabSize: o.vocabSize ?? TINY_VOCAB_SIZE,
    hiddenSize: hidden,
    intermediateSize: o.intermediate ?? d.intermediate,
    numLayers: o.layers ?? d.layers,
    numHeads: heads,
    numKvHeads: o.kvHeads ?? d.kvHeads,
    headDim: o.headDim ?? (o.hidden !== undefined || o.heads !== undefined ? hidden / heads : d.headDim),
    rmsNormEps: 1e-6,
    ropeTheta: o.ropeTheta ?? 10000,
    ropeScaling: o.ropeScaling,
    tieWordEmbeddings: o.tieWordEmbeddings ?? d.tie,
    attentionBias: arch === "qwen2",
    qkNorm: arch === "qwen3",
    maxPositionEmbeddings: 2048,
    bosTokenId: arch === "llama" ? TINY_SPECIALS["<|endoftext|>"] : null,
    eosTokenIds: [TINY_SPECIALS["<|im_end|>"], TINY_SPECIALS["<|endoftext|>"]],
  };
  const configJson = configToJson(config);
  // Round-trip through the parser so the fixture is exactly what a loader would see.
  const parsed = parseConfig(configJson);
  const rng = new Rng(o.seed);
  const weights: Weights = new Map();
  for (const [name, shape] of expectedShapes(parsed)) {
    const n = numel(shape);
    let data: Float32Array;
    if (name.endsWith("norm.weight")) data = rng.uniformArray(n, 0.8, 1.2);
    else if (name.endsWith(".bias")) data = rng.uniformArray(n, -0.1, 0.1);
    else if (name === "model.embed_tokens.weight") data = rng.uniformArray(n, -1, 1);
    else {
      const bound = 1.5 / Math.sqrt(shape[1]);
      data = rng.uniformArray(n, -bound, bound);
    }
    weights.set(name, { shape, data });
  }
  return { configJson, config: parsed, weights };
}

const MERGES = [
  "S E",
  "L E",
  "C T",
  "SE LE",
  "SELE CT",
  "Ġ F",
  "R O",
  "ĠF RO",
  "ĠFRO M",
  "Ġ W",
  "H E",
  "R E",
  "ĠW HE",
  "ĠWHE RE",
] as const;
const SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;
const N_BASE = 256 + MERGES.length;
/** Token ids of the tiny tokenizer's special tokens. */
export const TINY_SPECIALS = {
  "<|endoftext|>": N_BASE,
  "<|im_start|>": N_BASE + 1,
  "<|im_end|>": N_BASE + 2,
} as const;
/** Default vocabulary of tiny models: the tokenizer's tokens plus padding rows, as real checkpoints have. */
export const TINY_VOCAB_SIZE = 280;

/** ChatML, as Qwen2.5 uses it (without tools): the demo tokenizer's template. */
export const CHATML_TEMPLATE = DEMO_CHAT_TEMPLATE;

/** tokenizer.json and tokenizer_config.json of a byte-level BPE with 256 byte tokens, a few SQL merges and ChatML specials. */
export function tinyTokenizerFiles(): {
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
} {
  const model: BpeModel = {
    vocab: [...bytesToUnicode(), ...MERGES.map((m) => m.replace(" ", "")), ...SPECIALS],
    merges: MERGES.map((m) => {
      const [a, b] = m.split(" ");
      return [a, b];
    }),
    added: SPECIALS.map((content) => ({ id: TINY_SPECIALS[content], content, special: true })),
  };
  return bpeTokenizerFiles(model);
}

/** The files of a Hugging Face model folder for `m` (single safetensors file, or shards when `maxShardBytes` is set). */
export function hfFolderFiles(
  m: TinyModel,
  o: { dtype?: FloatDtype; tokenizer?: ReturnType<typeof tinyTokenizerFiles> } = {},
): Map<string, Uint8Array> {
  const enc = new TextEncoder();
  const json = (x: unknown) => enc.encode(JSON.stringify(x, null, 2));
  const tok = o.tokenizer ?? tinyTokenizerFiles();
  const files = new Map<string, Uint8Array>();
  files.set(
    "config.json",
    json({ ...m.configJson, torch_dtype: o.dtype === "BF16" ? "bfloat16" : o.dtype === "F16" ? "float16" : "float32" }),
  );
  files.set("model.safetensors", weightsToSafetensors(m.weights, o.dtype ?? "F32"));
  files.set("tokenizer.json", json(tok.tokenizerJson));
  files.set("tokenizer_config.json", json(tok.tokenizerConfig));
  files.set("generation_config.json", json({ eos_token_id: m.config.eosTokenIds, bos_token_id: m.config.bosTokenId }));
  return files;
}
