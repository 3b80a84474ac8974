import { assert, assertEquals } from "../../../tests/assert.ts";
import { parseSafetensors } from "../../model/safetensors.ts";
import {
  decays,
  DEFAULT_DEMO_ARCH,
  demoConfig,
  demoFolderFiles,
  INITIALIZER_RANGE,
  initWeights,
  parameterCount,
} from "./model.ts";

Deno.test("demo model: the default architecture has 10-40M parameters and its f16 safetensors is under 60 MB", () => {
  const cfg = demoConfig({ ...DEFAULT_DEMO_ARCH, vocabSize: 8192 }, [8190, 8185]);
  const n = parameterCount(cfg);
  // By hand: embeddings 8192*384; per layer q/o 2*384^2, k/v 2*384*128, q/k/v biases 384+2*128, MLP 3*384*1024, norms 2*384.
  const perLayer = 2 * 384 * 384 + 2 * 384 * 128 + 384 + 2 * 128 + 3 * 384 * 1024 + 2 * 384;
  assertEquals(n, 8192 * 384 + 8 * perLayer + 384);
  assert(n > 10e6 && n < 40e6, `${n} parameters`);
  assert(2 * n < 60e6, `${(2 * n / 1e6).toFixed(1)} MB in f16`);
  assertEquals([cfg.arch, cfg.headDim, cfg.tieWordEmbeddings, cfg.attentionBias, cfg.maxPositionEmbeddings], [
    "qwen2",
    64,
    true,
    true,
    1024,
  ]);
});

Deno.test("demo model: initialisation is N(0, 0.02) for matrices, ones for norms, zeros for biases, seeded", () => {
  const cfg = demoConfig({
    ...DEFAULT_DEMO_ARCH,
    vocabSize: 512,
    hidden: 64,
    heads: 4,
    kvHeads: 2,
    layers: 2,
    intermediate: 96,
  }, [1]);
  const w = initWeights(cfg, 5);
  assertEquals(
    initWeights(cfg, 5).get("model.layers.1.mlp.up_proj.weight")?.data,
    w.get("model.layers.1.mlp.up_proj.weight")?.data,
  );
  let sum = 0, sq = 0, count = 0;
  for (const [name, t] of w) {
    if (name.endsWith("norm.weight")) assert(t.data.every((x) => x === 1), name);
    else if (name.endsWith(".bias")) assert(t.data.every((x) => x === 0), name);
    else for (const x of t.data) (sum += x, sq += x * x, count++);
    assertEquals(decays(name), !name.endsWith("norm.weight") && !name.endsWith(".bias"));
  }
  const mean = sum / count, std = Math.sqrt(sq / count - mean * mean);
  assert(Math.abs(mean) < 3 * INITIALIZER_RANGE / Math.sqrt(count), `mean ${mean}`);
  assert(Math.abs(std - INITIALIZER_RANGE) < 0.01 * INITIALIZER_RANGE, `std ${std} over ${count} values`);
});

Deno.test("demo model: the folder files are a Hugging Face layout with the right architecture, dtype and stop tokens", () => {
  const cfg = demoConfig({
    ...DEFAULT_DEMO_ARCH,
    arch: "llama",
    vocabSize: 320,
    hidden: 32,
    heads: 4,
    kvHeads: 2,
    layers: 1,
    intermediate: 48,
  }, [300, 299]);
  const files = demoFolderFiles(cfg, initWeights(cfg, 1), { tokenizerJson: { model: {} }, tokenizerConfig: {} }, {
    dtype: "F16",
  });
  assertEquals([...files.keys()].sort(), [
    "config.json",
    "generation_config.json",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
  ]);
  const json = (f: string) => JSON.parse(new TextDecoder().decode(files.get(f)));
  const c = json("config.json");
  assertEquals([
    c.architectures,
    c.model_type,
    c.torch_dtype,
    c.initializer_range,
    c.eos_token_id,
    c.tie_word_embeddings,
  ], [["LlamaForCausalLM"], "llama", "float16", 0.02, [300, 299], true]);
  assertEquals(json("generation_config.json").eos_token_id, [300, 299]);
  const st = parseSafetensors(files.get("model.safetensors") ?? new Uint8Array());
  assert([...st.tensors.values()].every((t) => t.dtype === "F16"), "every tensor F16");
});
