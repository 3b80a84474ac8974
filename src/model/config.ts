// ModelConfig: the Hugging Face config.json of a supported decoder, normalised so every consumer
// (reference, ONNX builder, WGSL trainer) reads the same fields and defaults.

/** Architectures we build and train; each maps to one `model_type` and one HF class. */
export const SUPPORTED_ARCHS = {
  qwen2: "Qwen2ForCausalLM",
  llama: "LlamaForCausalLM",
  qwen3: "Qwen3ForCausalLM",
} as const;
export type Arch = keyof typeof SUPPORTED_ARCHS;

/** Llama 3.x frequency-dependent RoPE scaling (`rope_scaling.rope_type == "llama3"`). */
export interface Llama3RopeScaling {
  type: "llama3";
  factor: number;
  lowFreqFactor: number;
  highFreqFactor: number;
  originalMaxPositionEmbeddings: number;
}

/** Position interpolation: every inverse frequency divided by `factor`. */
export interface LinearRopeScaling {
  type: "linear";
  factor: number;
}

export type RopeScaling = Llama3RopeScaling | LinearRopeScaling;

/** A decoder-only transformer's shape and constants. */
export interface ModelConfig {
  arch: Arch;
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  /** Per-head dimension; Qwen3 and Llama 3.2 may set it apart from hiddenSize / numHeads. */
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  ropeScaling?: RopeScaling;
  tieWordEmbeddings: boolean;
  /** Biases on q, k and v projections (never on o): Qwen2 always; Llama and Qwen3 never. */
  attentionBias: boolean;
  /** Qwen3's per-head RMSNorm on queries and keys before RoPE. */
  qkNorm: boolean;
  maxPositionEmbeddings: number;
  bosTokenId: number | null;
  eosTokenIds: number[];
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function num(j: Record<string, unknown>, key: string, fallback?: number): number {
  const v = j[key];
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if ((v === undefined || v === null) && fallback !== undefined) return fallback;
  throw new Error(`config.json: ${key} is ${v === undefined ? "missing" : `not a number (${JSON.stringify(v)})`}`);
}

/**
 * Upper bounds of config.json's sizes: far above any published checkpoint, low enough that a
 * typo or a hostile value (num_hidden_layers 1e8) is refused before any tensor is allocated.
 */
export const CONFIG_BOUNDS = {
  vocab_size: 2 ** 22,
  hidden_size: 2 ** 16,
  intermediate_size: 2 ** 18,
  num_hidden_layers: 1024,
  num_attention_heads: 1024,
  head_dim: 2048,
  max_position_embeddings: 2 ** 24,
} as const;

/** A size: a positive integer no larger than `max`. */
function size(j: Record<string, unknown>, key: string, max: number, fallback?: number): number {
  const v = num(j, key, fallback);
  if (!Number.isInteger(v) || v < 1 || v > max) {
    throw new Error(`config.json: ${key} is ${v}; it must be an integer from 1 to ${max}`);
  }
  return v;
}

/** A constant that must be finite and positive (rope_theta, rms_norm_eps, scaling factors). */
function positive(j: Record<string, unknown>, key: string, fallback?: number): number {
  const v = num(j, key, fallback);
  if (!(v > 0)) throw new Error(`config.json: ${key} is ${v}; it must be a positive number`);
  return v;
}

function supportedList(): string {
  return Object.entries(SUPPORTED_ARCHS).map(([t, c]) => `${t} (${c})`).join(", ");
}

/** True for the `model_type`s we support. */
export function isArch(x: unknown): x is Arch {
  return typeof x === "string" && Object.hasOwn(SUPPORTED_ARCHS, x);
}

function archOf(j: Record<string, unknown>): Arch {
  const mt = j.model_type;
  const archs = Array.isArray(j.architectures) ? j.architectures.map(String) : [];
  if (isArch(mt)) {
    const cls = SUPPORTED_ARCHS[mt];
    if (archs.length && !archs.includes(cls)) {
      throw new Error(
        `unsupported architecture ${
          archs.join(", ")
        } for model_type ${mt}: only ${cls} is supported (supported: ${supportedList()})`,
      );
    }
    return mt;
  }
  throw new Error(
    `unsupported model: model_type ${JSON.stringify(mt)}, architectures ${
      JSON.stringify(archs)
    }; supported: ${supportedList()}`,
  );
}

// transformers 5 writes `rope_parameters` ({rope_type, rope_theta, factor, ...}) where 4.x wrote
// `rope_theta` and `rope_scaling`; both are read.
function ropeScalingOf(j: Record<string, unknown>): RopeScaling | undefined {
  const rs = j.rope_scaling ?? j.rope_parameters;
  if (rs === undefined || rs === null) return undefined;
  if (!isRecord(rs)) throw new Error(`config.json: rope_scaling is not an object`);
  const type = rs.rope_type ?? rs.type ?? "default";
  switch (type) {
    case "default":
      return undefined;
    case "linear":
      return { type: "linear", factor: positive(rs, "factor") };
    case "llama3":
      return {
        type: "llama3",
        factor: positive(rs, "factor"),
        lowFreqFactor: positive(rs, "low_freq_factor"),
        highFreqFactor: positive(rs, "high_freq_factor"),
        originalMaxPositionEmbeddings: size(
          rs,
          "original_max_position_embeddings",
          CONFIG_BOUNDS.max_position_embeddings,
        ),
      };
    default:
      throw new Error(
        `config.json: unsupported rope_scaling type ${JSON.stringify(type)} (supported: default, linear, llama3)`,
      );
  }
}

function tokenIds(v: unknown): number[] {
  if (typeof v === "number") return [v];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === "number");
  return [];
}

/** Normalises a parsed HF config.json; throws naming the model type when it is unsupported. */
export function parseConfig(json: unknown): ModelConfig {
  if (!isRecord(json)) throw new Error("config.json is not a JSON object");
  const arch = archOf(json);
  const hiddenSize = size(json, "hidden_size", CONFIG_BOUNDS.hidden_size);
  const numHeads = size(json, "num_attention_heads", CONFIG_BOUNDS.num_attention_heads);
  const numKvHeads = size(json, "num_key_value_heads", numHeads, numHeads);
  if (numHeads % numKvHeads !== 0) {
    throw new Error(
      `config.json: num_attention_heads ${numHeads} is not a multiple of num_key_value_heads ${numKvHeads}`,
    );
  }
  if (json.use_sliding_window === true) {
    throw new Error(`config.json: use_sliding_window is true; sliding-window attention is not supported`);
  }
  if (Array.isArray(json.layer_types) && json.layer_types.some((t) => t !== "full_attention")) {
    throw new Error(
      `config.json: layer_types ${JSON.stringify(json.layer_types)}: only full_attention layers are supported`,
    );
  }
  if (json.mlp_bias === true) throw new Error(`config.json: mlp_bias is true; MLP biases are not supported`);
  const act = json.hidden_act ?? "silu";
  if (act !== "silu") throw new Error(`config.json: hidden_act ${JSON.stringify(act)} is not supported (only silu)`);
  const headDim = num(json, "head_dim", hiddenSize / numHeads);
  if (!Number.isInteger(headDim) || headDim % 2 !== 0 || headDim < 2 || headDim > CONFIG_BOUNDS.head_dim) {
    throw new Error(`config.json: head_dim ${headDim} must be an even integer from 2 to ${CONFIG_BOUNDS.head_dim}`);
  }
  // Llama and Qwen3 put attention_bias on all four projections, o included; no published
  // checkpoint of theirs sets it, so it is refused rather than carried as a fifth bias.
  if (arch !== "qwen2" && json.attention_bias === true) {
    throw new Error(
      `config.json: attention_bias is true for ${arch}; biases on ${arch} attention projections are not supported`,
    );
  }
  const attentionBias = arch === "qwen2";
  return {
    arch,
    vocabSize: size(json, "vocab_size", CONFIG_BOUNDS.vocab_size),
    hiddenSize,
    intermediateSize: size(json, "intermediate_size", CONFIG_BOUNDS.intermediate_size),
    numLayers: size(json, "num_hidden_layers", CONFIG_BOUNDS.num_hidden_layers),
    numHeads,
    numKvHeads,
    headDim,
    rmsNormEps: positive(json, "rms_norm_eps", 1e-6),
    ropeTheta: positive(
      json,
      "rope_theta",
      isRecord(json.rope_parameters) ? positive(json.rope_parameters, "rope_theta", 10000) : 10000,
    ),
    ropeScaling: ropeScalingOf(json),
    tieWordEmbeddings: json.tie_word_embeddings === true,
    attentionBias,
    qkNorm: arch === "qwen3",
    maxPositionEmbeddings: size(json, "max_position_embeddings", CONFIG_BOUNDS.max_position_embeddings, 32768),
    bosTokenId: typeof json.bos_token_id === "number" ? json.bos_token_id : null,
    eosTokenIds: tokenIds(json.eos_token_id),
  };
}

/** Writes a ModelConfig back as an HF config.json object (what `parseConfig` reads). */
export function configToJson(c: ModelConfig): Record<string, unknown> {
  const j: Record<string, unknown> = {
    architectures: [SUPPORTED_ARCHS[c.arch]],
    model_type: c.arch,
    vocab_size: c.vocabSize,
    hidden_size: c.hiddenSize,
    intermediate_size: c.intermediateSize,
    num_hidden_layers: c.numLayers,
    num_attention_heads: c.numHeads,
    num_key_value_heads: c.numKvHeads,
    head_dim: c.headDim,
    hidden_act: "silu",
    rms_norm_eps: c.rmsNormEps,
    rope_theta: c.ropeTheta,
    rope_scaling: null,
    tie_word_embeddings: c.tieWordEmbeddings,
    max_position_embeddings: c.maxPositionEmbeddings,
    bos_token_id: c.bosTokenId,
    eos_token_id: c.eosTokenIds.length === 1 ? c.eosTokenIds[0] : c.eosTokenIds,
    torch_dtype: "float32",
  };
  if (c.arch !== "qwen2") j.attention_bias = c.attentionBias;
  if (c.ropeScaling?.type === "linear") j.rope_scaling = { rope_type: "linear", factor: c.ropeScaling.factor };
  if (c.ropeScaling?.type === "llama3") {
    const r = c.ropeScaling;
    j.rope_scaling = {
      rope_type: "llama3",
      factor: r.factor,
      low_freq_factor: r.lowFreqFactor,
      high_freq_factor: r.highFreqFactor,
      original_max_position_embeddings: r.originalMaxPositionEmbeddings,
    };
  }
  return j;
}

/** The HF names and shapes every layer and the model must have, for validation and builders. */
export function expectedShapes(c: ModelConfig): Map<string, number[]> {
  const m = new Map<string, number[]>();
  const H = c.hiddenSize;
  const qd = c.numHeads * c.headDim;
  const kvd = c.numKvHeads * c.headDim;
  m.set("model.embed_tokens.weight", [c.vocabSize, H]);
  for (let i = 0; i < c.numLayers; i++) {
    const p = `model.layers.${i}`;
    m.set(`${p}.input_layernorm.weight`, [H]);
    m.set(`${p}.self_attn.q_proj.weight`, [qd, H]);
    m.set(`${p}.self_attn.k_proj.weight`, [kvd, H]);
    m.set(`${p}.self_attn.v_proj.weight`, [kvd, H]);
    if (c.attentionBias) {
      m.set(`${p}.self_attn.q_proj.bias`, [qd]);
      m.set(`${p}.self_attn.k_proj.bias`, [kvd]);
      m.set(`${p}.self_attn.v_proj.bias`, [kvd]);
    }
    if (c.qkNorm) {
      m.set(`${p}.self_attn.q_norm.weight`, [c.headDim]);
      m.set(`${p}.self_attn.k_norm.weight`, [c.headDim]);
    }
    m.set(`${p}.self_attn.o_proj.weight`, [H, qd]);
    m.set(`${p}.post_attention_layernorm.weight`, [H]);
    m.set(`${p}.mlp.gate_proj.weight`, [c.intermediateSize, H]);
    m.set(`${p}.mlp.up_proj.weight`, [c.intermediateSize, H]);
    m.set(`${p}.mlp.down_proj.weight`, [H, c.intermediateSize]);
  }
  m.set("model.norm.weight", [H]);
  if (!c.tieWordEmbeddings) m.set("lm_head.weight", [c.vocabSize, H]);
  return m;
}

/**
 * Throws naming the first missing or mis-shaped tensor, or a tensor of a layer past
 * num_hidden_layers (a config that says fewer layers than the checkpoint has would silently drop
 * them); other extra tensors (rotary caches) are ignored. `nonFloat` names tensors the file holds
 * in an integer dtype, so they are reported as such rather than as missing.
 */
export function validateWeights(
  c: ModelConfig,
  w: Map<string, { shape: number[] }>,
  nonFloat: ReadonlyMap<string, string> = new Map(),
): void {
  for (const name of w.keys()) {
    const m = /^model\.layers\.(\d+)\./.exec(name);
    if (m && Number(m[1]) >= c.numLayers) {
      throw new Error(
        `weights: tensor ${name} belongs to layer ${m[1]}, but config.json has num_hidden_layers ${c.numLayers}`,
      );
    }
  }
  for (const [name, shape] of expectedShapes(c)) {
    const t = w.get(name);
    const dtype = nonFloat.get(name);
    if (!t && dtype) {
      throw new Error(
        `weights: tensor ${name} is stored as ${dtype}; weights must be a floating type (F32, F16, BF16 or F64)`,
      );
    }
    if (!t) throw new Error(`weights: missing tensor ${name} (expected shape [${shape.join(", ")}])`);
    if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      throw new Error(
        `weights: tensor ${name} has shape [${t.shape.join(", ")}], config expects [${shape.join(", ")}]`,
      );
    }
  }
}
