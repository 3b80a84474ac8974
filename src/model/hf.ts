// Loads a Hugging Face model folder from any ModelSource: config, float32 weights (single or
// sharded safetensors), tokenizer and chat template.
import { type ModelConfig, parseConfig, validateWeights } from "./config.ts";
import {
  isFloatDtype,
  parseSafetensors,
  parseShardIndex,
  type SafetensorsFile,
  safetensorsToWeights,
} from "./safetensors.ts";
import { type ModelSource, type ProgressFn, readJson, throwIfAborted, type TransferStats } from "./source.ts";
import type { Weights } from "./tensor.ts";
import { chatTemplateOf, HfTokenizer } from "./tokenizer.ts";

/** A loaded model folder. */
export interface HfModel {
  config: ModelConfig;
  /** config.json as read, for what ModelConfig does not carry. */
  configJson: Record<string, unknown>;
  weights: Weights;
  tokenizer: HfTokenizer;
  chatTemplate: string | null;
  source: string;
  /** Bytes the source downloaded vs. took from its cache for this load (sources that download). */
  transferred?: TransferStats;
}

/** Progress across the whole load: which file, and bytes of it. */
export type LoadProgressFn = (file: string, loaded: number, total: number | null) => void;

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

async function readText(src: ModelSource, path: string, signal?: AbortSignal): Promise<string> {
  return new TextDecoder().decode(await src.read(path, undefined, signal));
}

/** Parses one weights file into `weights`, noting its integer tensors; errors name the file and the folder. */
function addWeights(
  src: ModelSource,
  bytes: Uint8Array,
  file: string,
  weights: Weights,
  nonFloat: Map<string, string>,
): SafetensorsFile {
  try {
    const parsed = parseSafetensors(bytes, file);
    for (const [name, t] of parsed.tensors) if (!isFloatDtype(t.dtype)) nonFloat.set(name, t.dtype);
    safetensorsToWeights(parsed, weights);
    return parsed;
  } catch (e) {
    throw new Error(`${src.describe()}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Float32 weights from `model.safetensors`, or the shards listed in `model.safetensors.index.json`.
 * `nonFloat`, when given, receives the tensors stored in an integer dtype (left out of the weights).
 */
export async function loadWeights(
  src: ModelSource,
  onProgress?: LoadProgressFn,
  signal?: AbortSignal,
  nonFloat: Map<string, string> = new Map(),
): Promise<Weights> {
  const weights: Weights = new Map();
  const progress = (file: string): ProgressFn | undefined => onProgress && ((l, t) => onProgress(file, l, t));
  if (await src.exists("model.safetensors.index.json")) {
    const index = parseShardIndex(await readText(src, "model.safetensors.index.json", signal));
    for (const file of index.files) {
      // Between shards, and between a shard's download and its parse (Stop while a model loads).
      throwIfAborted(signal);
      const bytes = await src.read(file, progress(file), signal);
      throwIfAborted(signal);
      const parsed = addWeights(src, bytes, file, weights, nonFloat);
      for (const [name, f] of Object.entries(index.weight_map)) {
        if (f === file && !parsed.tensors.has(name)) {
          throw new Error(
            `${file} in ${src.describe()} lacks tensor ${name} that model.safetensors.index.json places there`,
          );
        }
      }
    }
    return weights;
  }
  const bytes = await src.read("model.safetensors", progress("model.safetensors"), signal);
  throwIfAborted(signal);
  addWeights(src, bytes, "model.safetensors", weights, nonFloat);
  return weights;
}

function eosUnion(a: number[], v: unknown): number[] {
  const extra = typeof v === "number"
    ? [v]
    : Array.isArray(v)
    ? v.filter((x): x is number => typeof x === "number")
    : [];
  return [...new Set([...a, ...extra])];
}

/** Reads config.json alone (e.g. to show a model's size before downloading its weights). */
export async function loadHfConfig(src: ModelSource): Promise<ModelConfig> {
  try {
    return parseConfig(await readJson(src, "config.json"));
  } catch (e) {
    if (e instanceof Error && e.message.includes(src.describe())) throw e;
    throw new Error(`${src.describe()}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Reads the tokenizer alone: tokenizer.json, plus tokenizer_config.json and chat_template.jinja when present. */
export async function loadHfTokenizer(src: ModelSource, signal?: AbortSignal): Promise<HfTokenizer> {
  const tokJson = await readJson(src, "tokenizer.json", signal);
  const tokCfg = (await src.exists("tokenizer_config.json"))
    ? await readJson(src, "tokenizer_config.json", signal)
    : {};
  let chatTemplate = chatTemplateOf(tokCfg);
  if (chatTemplate === null && (await src.exists("chat_template.jinja"))) {
    chatTemplate = await readText(src, "chat_template.jinja", signal);
  }
  throwIfAborted(signal);
  try {
    return new HfTokenizer(tokJson, tokCfg, chatTemplate);
  } catch (e) {
    throw new Error(
      `tokenizer.json in ${src.describe()} cannot be used: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
}

/**
 * Loads config.json, the weights, tokenizer.json (+ tokenizer_config.json, chat_template.jinja,
 * generation_config.json when present). The stop tokens are config.json's eos ids joined with
 * generation_config.json's, as `generate()` in transformers uses the latter. An aborted `signal`
 * rejects with its reason, checked between files and between download and parse.
 */
export async function loadHfModel(
  src: ModelSource,
  o: { onProgress?: LoadProgressFn; signal?: AbortSignal } = {},
): Promise<HfModel> {
  const { signal } = o;
  const before = src.transferred?.();
  const raw = await readJson(src, "config.json", signal);
  if (!isRecord(raw)) throw new Error(`config.json in ${src.describe()} is not a JSON object`);
  let config: ModelConfig;
  try {
    config = parseConfig(raw);
  } catch (e) {
    throw new Error(`${src.describe()}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (await src.exists("generation_config.json")) {
    const g = await readJson(src, "generation_config.json", signal);
    if (typeof g === "object" && g !== null && "eos_token_id" in g) {
      config = { ...config, eosTokenIds: eosUnion(config.eosTokenIds, g.eos_token_id) };
    }
  }
  throwIfAborted(signal);
  const nonFloat = new Map<string, string>();
  const weights = await loadWeights(src, o.onProgress, signal, nonFloat);
  try {
    validateWeights(config, weights, nonFloat);
  } catch (e) {
    throw new Error(`${src.describe()}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const tokenizer = await loadHfTokenizer(src, signal);
  const after = src.transferred?.();
  const transferred = after && before
    ? {
      downloadedBytes: after.downloadedBytes - before.downloadedBytes,
      cachedBytes: after.cachedBytes - before.cachedBytes,
      viaCache: after.viaCache,
    }
    : undefined;
  return {
    config,
    configJson: raw,
    weights,
    tokenizer,
    chatTemplate: tokenizer.chatTemplate,
    source: src.describe(),
    ...(transferred ? { transferred } : {}),
  };
}
