// LoRA adapters as PEFT folders: adapter_config.json + adapter_model.safetensors, readable by
// `PeftModel.from_pretrained` and written by it. Only plain LoRA on the seven projection types.
import type { ModelConfig } from "./config.ts";
import { isLoraTarget, LORA_TARGETS, type LoraAdapter, type LoraTarget, validateAdapter } from "./lora.ts";
import { type FloatDtype, parseSafetensors, safetensorsToWeights, weightsToSafetensors } from "./safetensors.ts";
import { type ModelSource, readJson } from "./source.ts";

export const PEFT_CONFIG = "adapter_config.json";
export const PEFT_WEIGHTS = "adapter_model.safetensors";

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

const KEY_RE = /^base_model\.model\.model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+)\.lora_([AB])\.weight$/;

function targetsOf(v: unknown): LoraTarget[] {
  if (v === "all-linear") return [...LORA_TARGETS];
  const names = typeof v === "string" ? [v] : Array.isArray(v) ? v : null;
  if (!names) {
    throw new Error(
      `${PEFT_CONFIG}: target_modules ${JSON.stringify(v)} is neither a list of module names nor "all-linear"`,
    );
  }
  const out: LoraTarget[] = [];
  for (const n of names) {
    if (!isLoraTarget(n)) {
      throw new Error(
        `${PEFT_CONFIG}: target module ${JSON.stringify(n)} is not supported (supported: ${LORA_TARGETS.join(", ")})`,
      );
    }
    if (!out.includes(n)) out.push(n);
  }
  return LORA_TARGETS.filter((t) => out.includes(t));
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0) ||
    (isRecord(v) && Object.keys(v).length === 0);
}

/** Builds an adapter from a parsed adapter_config.json and adapter_model.safetensors bytes; validates against `cfg` when given. */
export function parsePeftAdapter(configJson: unknown, weights: Uint8Array, cfg?: ModelConfig): LoraAdapter {
  if (!isRecord(configJson)) throw new Error(`${PEFT_CONFIG} is not a JSON object`);
  const j = configJson;
  if (j.peft_type !== undefined && j.peft_type !== "LORA") {
    throw new Error(`${PEFT_CONFIG}: peft_type ${JSON.stringify(j.peft_type)} is not supported (only LORA)`);
  }
  for (const flag of ["use_dora", "use_rslora", "fan_in_fan_out", "lora_bias", "use_qalora"] as const) {
    if (j[flag] === true) {
      throw new Error(`${PEFT_CONFIG}: ${flag} is true; only plain LoRA (scale alpha / r) is supported`);
    }
  }
  if (j.bias !== undefined && j.bias !== "none") {
    throw new Error(`${PEFT_CONFIG}: bias ${JSON.stringify(j.bias)} is not supported (only "none")`);
  }
  const unsupported = [
    "rank_pattern",
    "alpha_pattern",
    "modules_to_save",
    "layers_to_transform",
    "layer_replication",
    "exclude_modules",
    "target_parameters",
    "trainable_token_indices",
    "alora_invocation_tokens",
  ] as const;
  for (const key of unsupported) {
    if (!isEmpty(j[key])) throw new Error(`${PEFT_CONFIG}: ${key} ${JSON.stringify(j[key])} is not supported`);
  }
  const r = j.r;
  const alpha = j.lora_alpha;
  if (typeof r !== "number" || !Number.isInteger(r) || r < 1) {
    throw new Error(`${PEFT_CONFIG}: r ${JSON.stringify(r)} is not a positive integer`);
  }
  if (typeof alpha !== "number" || !Number.isFinite(alpha)) {
    throw new Error(`${PEFT_CONFIG}: lora_alpha ${JSON.stringify(alpha)} is not a finite number`);
  }
  const targets = targetsOf(j.target_modules);
  const tensors = safetensorsToWeights(parseSafetensors(weights, PEFT_WEIGHTS));
  for (const name of tensors.keys()) {
    const m = KEY_RE.exec(name);
    if (!m || !isLoraTarget(m[3])) {
      throw new Error(`${PEFT_WEIGHTS}: tensor ${name} is not a LoRA weight of a supported projection`);
    }
    if (!targets.includes(m[3])) {
      throw new Error(
        `${PEFT_WEIGHTS}: tensor ${name} targets ${m[3]}, absent from target_modules ${JSON.stringify(targets)}`,
      );
    }
  }
  const adapter: LoraAdapter = { r, alpha, targets, tensors };
  if (cfg) validateAdapter(cfg, adapter);
  return adapter;
}

/** Reads a PEFT adapter folder from any source; validates against `cfg` when given. */
export async function readPeftAdapter(src: ModelSource, cfg?: ModelConfig): Promise<LoraAdapter> {
  const configJson = await readJson(src, PEFT_CONFIG);
  const bytes = await src.read(PEFT_WEIGHTS);
  try {
    return parsePeftAdapter(configJson, bytes, cfg);
  } catch (e) {
    throw new Error(`${src.describe()}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** adapter_config.json as PEFT writes it for a plain LoRA. */
export function peftConfigJson(a: LoraAdapter, baseModel: string | null = null): Record<string, unknown> {
  return {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: baseModel,
    bias: "none",
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layers_pattern: null,
    layers_to_transform: null,
    lora_alpha: a.alpha,
    lora_dropout: 0.0,
    modules_to_save: null,
    peft_type: "LORA",
    r: a.r,
    rank_pattern: {},
    revision: null,
    target_modules: [...a.targets],
    task_type: "CAUSAL_LM",
    use_dora: false,
    use_rslora: false,
  };
}

/** The two files of a PEFT folder for `a`. */
export function peftFiles(
  a: LoraAdapter,
  o: { baseModel?: string | null; dtype?: FloatDtype } = {},
): Map<string, Uint8Array> {
  return new Map([
    [PEFT_CONFIG, new TextEncoder().encode(JSON.stringify(peftConfigJson(a, o.baseModel ?? null), null, 2))],
    [PEFT_WEIGHTS, weightsToSafetensors(a.tensors, o.dtype ?? "F32", { format: "pt" })],
  ]);
}
