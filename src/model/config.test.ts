import { assert, assertClose, assertEquals, assertRejects } from "../../tests/assert.ts";
import { configToJson, expectedShapes, parseConfig, validateWeights } from "./config.ts";
import { ropeInvFreq } from "./reference.ts";

// config.json files as published on the Hub (trimmed of fields nobody reads).
const QWEN25_05B = {
  architectures: ["Qwen2ForCausalLM"],
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  hidden_act: "silu",
  hidden_size: 896,
  intermediate_size: 4864,
  max_position_embeddings: 32768,
  max_window_layers: 21,
  model_type: "qwen2",
  num_attention_heads: 14,
  num_hidden_layers: 24,
  num_key_value_heads: 2,
  rms_norm_eps: 1e-6,
  rope_theta: 1000000.0,
  sliding_window: 32768,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  use_sliding_window: false,
  vocab_size: 151936,
};
const SMOLLM2_135M = {
  architectures: ["LlamaForCausalLM"],
  attention_bias: false,
  bos_token_id: 1,
  eos_token_id: 2,
  head_dim: 64,
  hidden_act: "silu",
  hidden_size: 576,
  intermediate_size: 1536,
  max_position_embeddings: 8192,
  mlp_bias: false,
  model_type: "llama",
  num_attention_heads: 9,
  num_hidden_layers: 30,
  num_key_value_heads: 3,
  pad_token_id: 2,
  rms_norm_eps: 1e-5,
  rope_interleaved: false,
  rope_scaling: null,
  rope_theta: 100000,
  tie_word_embeddings: true,
  vocab_size: 49152,
};
const LLAMA32_1B = {
  architectures: ["LlamaForCausalLM"],
  attention_bias: false,
  bos_token_id: 128000,
  eos_token_id: [128001, 128008, 128009],
  head_dim: 64,
  hidden_act: "silu",
  hidden_size: 2048,
  intermediate_size: 8192,
  max_position_embeddings: 131072,
  mlp_bias: false,
  model_type: "llama",
  num_attention_heads: 32,
  num_hidden_layers: 16,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-5,
  rope_scaling: {
    factor: 32.0,
    high_freq_factor: 4.0,
    low_freq_factor: 1.0,
    original_max_position_embeddings: 8192,
    rope_type: "llama3",
  },
  rope_theta: 500000.0,
  tie_word_embeddings: true,
  vocab_size: 128256,
};
const QWEN3_06B = {
  architectures: ["Qwen3ForCausalLM"],
  attention_bias: false,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: "silu",
  hidden_size: 1024,
  intermediate_size: 3072,
  max_position_embeddings: 40960,
  model_type: "qwen3",
  num_attention_heads: 16,
  num_hidden_layers: 28,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

Deno.test("config: Qwen2.5-0.5B normalises with q/k/v biases and head_dim = hidden / heads", () => {
  const c = parseConfig(QWEN25_05B);
  assertEquals(c, {
    arch: "qwen2",
    vocabSize: 151936,
    hiddenSize: 896,
    intermediateSize: 4864,
    numLayers: 24,
    numHeads: 14,
    numKvHeads: 2,
    headDim: 64,
    rmsNormEps: 1e-6,
    ropeTheta: 1e6,
    ropeScaling: undefined,
    tieWordEmbeddings: true,
    attentionBias: true,
    qkNorm: false,
    maxPositionEmbeddings: 32768,
    bosTokenId: 151643,
    eosTokenIds: [151645],
  });
  assert(expectedShapes(c).has("model.layers.23.self_attn.k_proj.bias"));
  assert(!expectedShapes(c).has("lm_head.weight"), "tied: no lm_head");
});

Deno.test("config: SmolLM2 and Llama 3.2 (llama3 rope scaling, several eos ids)", () => {
  const s = parseConfig(SMOLLM2_135M);
  assertEquals([s.arch, s.numHeads, s.numKvHeads, s.headDim, s.attentionBias, s.ropeScaling, s.eosTokenIds], [
    "llama",
    9,
    3,
    64,
    false,
    undefined,
    [2],
  ]);
  const l = parseConfig(LLAMA32_1B);
  assertEquals(l.ropeScaling, {
    type: "llama3",
    factor: 32,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositionEmbeddings: 8192,
  });
  assertEquals(l.eosTokenIds, [128001, 128008, 128009]);
  assertEquals(l.bosTokenId, 128000);
  // Values from transformers' _compute_llama3_parameters, evaluated independently in numpy.
  const want: [number, number][] = [
    [0, 1.0],
    [10, 0.016560440080994446],
    [17, 9.70828780262767e-05],
    [18, 1.9461638184831125e-05],
    [19, 1.291476718704739e-05],
    [20, 8.570255489881478e-06],
    [21, 5.687232150457047e-06],
    [25, 1.102883668639601e-06],
    [31, 9.418306725434911e-08],
  ];
  const inv = ropeInvFreq(l);
  assertClose(want.map(([i]) => inv[i]), want.map(([, v]) => v), { atol: 0, rtol: 1e-12, name: "llama3 inv_freq" });
});

Deno.test("config: Qwen3 keeps head_dim 128 apart from hidden / heads, q/k norms, no biases", () => {
  const c = parseConfig(QWEN3_06B);
  assertEquals([c.arch, c.headDim, c.hiddenSize / c.numHeads, c.qkNorm, c.attentionBias], [
    "qwen3",
    128,
    64,
    true,
    false,
  ]);
  const shapes = expectedShapes(c);
  assertEquals(shapes.get("model.layers.0.self_attn.q_proj.weight"), [2048, 1024]);
  assertEquals(shapes.get("model.layers.0.self_attn.o_proj.weight"), [1024, 2048]);
  assertEquals(shapes.get("model.layers.0.self_attn.q_norm.weight"), [128]);
  assert(!shapes.has("model.layers.0.self_attn.q_proj.bias"));
});

Deno.test("config: transformers 5's rope_parameters (theta and llama3 scaling inside) reads like rope_theta + rope_scaling", () => {
  const { rope_scaling, rope_theta, ...rest } = LLAMA32_1B;
  const v5 = { ...rest, rope_parameters: { ...rope_scaling, rope_theta } };
  assertEquals(parseConfig(v5), parseConfig(LLAMA32_1B));
  const { rope_theta: qTheta, ...qRest } = QWEN25_05B;
  assertEquals(
    parseConfig({ ...qRest, rope_parameters: { rope_type: "default", rope_theta: qTheta } }),
    parseConfig(QWEN25_05B),
  );
});

Deno.test("config: configToJson -> parseConfig is the identity for all three", () => {
  for (const j of [QWEN25_05B, SMOLLM2_135M, LLAMA32_1B, QWEN3_06B]) {
    const c = parseConfig(j);
    assertEquals(parseConfig(configToJson(c)), c);
  }
});

Deno.test("config: unsupported architectures name themselves and list the supported ones", async () => {
  const e = await assertRejects(
    () => parseConfig({ ...QWEN25_05B, model_type: "gemma2", architectures: ["Gemma2ForCausalLM"] }),
    /gemma2/,
  );
  assert(
    /Gemma2ForCausalLM/.test(e.message) && /qwen2 \(Qwen2ForCausalLM\)/.test(e.message) && /llama/.test(e.message) &&
      /qwen3/.test(e.message),
    e.message,
  );
  await assertRejects(
    () => parseConfig({ ...QWEN25_05B, architectures: ["Qwen2ForSequenceClassification"] }),
    /Qwen2ForSequenceClassification.*Qwen2ForCausalLM/,
  );
  await assertRejects(
    () => parseConfig({ ...LLAMA32_1B, rope_scaling: { rope_type: "yarn", factor: 4 } }),
    /rope_scaling type "yarn"/,
  );
  await assertRejects(() => parseConfig({ ...QWEN25_05B, use_sliding_window: true }), /sliding/);
  await assertRejects(() => parseConfig({ ...SMOLLM2_135M, attention_bias: true }), /attention_bias is true for llama/);
  await assertRejects(
    () => parseConfig({ ...QWEN3_06B, layer_types: ["full_attention", "sliding_attention"] }),
    /only full_attention/,
  );
  await assertRejects(() => parseConfig({ ...QWEN25_05B, hidden_size: undefined }), /hidden_size is missing/);
});

Deno.test("config: validateWeights names the missing or mis-shaped tensor", async () => {
  const c = parseConfig({ ...SMOLLM2_135M, num_hidden_layers: 1 });
  const w = new Map([...expectedShapes(c)].map(([k, shape]) => [k, { shape }]));
  validateWeights(c, w);
  w.set("model.layers.0.mlp.up_proj.weight", { shape: [1536, 575] });
  await assertRejects(
    () => validateWeights(c, w),
    /model\.layers\.0\.mlp\.up_proj\.weight has shape \[1536, 575\], config expects \[1536, 576\]/,
  );
  w.set("model.layers.0.mlp.up_proj.weight", { shape: [1536, 576] });
  w.delete("model.norm.weight");
  await assertRejects(() => validateWeights(c, w), /missing tensor model\.norm\.weight/);
});
