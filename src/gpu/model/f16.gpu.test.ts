// f16 storage of the frozen layer projections (uploadModel { f16: true }): the forward and the LoRA
// gradients equal those of an f32 upload of the f16-rounded weights, and the f32 path is what a
// device without shader-f16 gets.
import { assert, assertClose, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { fromF16, toF16 } from "../../model/half.ts";
import { LORA_TARGETS, randomAdapter } from "../../model/lora.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import type { Weights } from "../../model/tensor.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { loraGradients, type PgSequence } from "../trainer/grad.ts";
import { logprobsWebgpu } from "../trainer/logprobs.ts";
import { fullParams } from "./full.ts";
import { destroyAdapter, destroyModel, halfProjections, uploadAdapter, uploadModel } from "./state.ts";

const gpu = await requestGpu();

const PROJECTION = /^model\.layers\.\d+\.(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight$/;

/** The weights an f16 upload computes with: the seven projections of every layer rounded to f16 (the vocabulary matrices stay f32). */
function halfWeights(w: Weights): Weights {
  const out = new Map(w);
  for (const [name, t] of w) if (PROJECTION.test(name)) out.set(name, { shape: t.shape, data: fromF16(toF16(t.data)) });
  return out;
}

for (const arch of ["qwen2", "llama", "qwen3"] as const) {
  Deno.test(`f16 projections ${arch}: logprobs match the float64 reference on the f16-rounded weights`, async () => {
    const tiny = makeTinyModel(arch, { seed: 31 });
    const cfg = tiny.config;
    const seqs = [9, 4, 13].map((n, i) => Array.from({ length: n }, (_, t) => (7 * t + 13 * i + 1) % cfg.vocabSize));
    const adapter = randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 3, bScale: 0.2 });
    const model = uploadModel(gpu.device, cfg, tiny.weights, { f16: true });
    if (gpu.f16) {
      assert(model.half.size === 7 * cfg.numLayers, `every projection held as f16 (${model.half.size})`);
      assert(!model.weights.has("model.layers.0.mlp.up_proj.weight"), "no f32 copy of an f16 projection");
    } else {
      assert(model.half.size === 0, "without shader-f16 the upload stays f32");
    }
    const w = gpu.f16 ? halfWeights(tiny.weights) : tiny.weights;
    const got = await logprobsWebgpu(model, seqs, adapter);
    const want = referenceLogprobs(cfg, w, seqs, adapter);
    const f32 = referenceLogprobs(cfg, tiny.weights, seqs, adapter);
    let worst = 0, rounding = 0;
    got.forEach((g, i) => {
      worst = Math.max(worst, assertClose(g, want[i], { atol: 2e-3, rtol: 0, name: `${arch} f16 seq ${i}` }).maxAbs);
      rounding = Math.max(rounding, ...f32[i].map((x, t) => Math.abs(x - want[i][t])));
    });
    console.log(
      `${arch} f16 (${gpu.f16 ? "shader-f16" : "f32 fallback"}): max |logp gpu - ref(rounded)| = ${
        worst.toExponential(2)
      }; rounding to f16 itself moves logp by up to ${rounding.toExponential(2)}`,
    );
    destroyModel(model);
  });
}

Deno.test({
  name: "f16 projections: LoRA gradients equal those of an f32 upload of the rounded weights",
  ignore: !gpu.f16,
}, async () => {
  const tiny = makeTinyModel("llama", { seed: 21 });
  const cfg = tiny.config;
  const rng = new Rng(5);
  const seqs: PgSequence[] = [
    { ids: Array.from({ length: 9 }, () => rng.int(cfg.vocabSize)), promptLen: 4, advantage: 1.3 },
    { ids: Array.from({ length: 11 }, () => rng.int(cfg.vocabSize)), promptLen: 7, advantage: -0.4 },
  ];
  const adapter = randomAdapter(cfg, { r: 3, alpha: 6, targets: LORA_TARGETS, seed: 9, bScale: 0.3 });
  const run = async (w: Weights, f16: boolean) => {
    const model = uploadModel(gpu.device, cfg, w, { f16 });
    const lora = uploadAdapter(gpu.device, cfg, adapter);
    const r = await loraGradients(model, lora, seqs);
    destroyAdapter(lora);
    destroyModel(model);
    return r;
  };
  const half = await run(tiny.weights, true);
  const f32 = await run(halfWeights(tiny.weights), false);
  let gmax = 0, worst = 0;
  for (const g of f32.grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
  assert(gmax > 0, "non-zero gradients");
  for (const [name, g] of f32.grads) {
    const h = half.grads.get(name);
    assert(h !== undefined, `f16 run has ${name}`);
    worst = Math.max(worst, assertClose(h.data, g.data, { atol: 1e-5 * gmax, rtol: 1e-4, name }).maxAbs);
  }
  assert(Math.abs(half.loss - f32.loss) <= 1e-5 * Math.max(1, Math.abs(f32.loss)), `loss ${half.loss} vs ${f32.loss}`);
  console.log(
    `f16 vs f32-of-rounded LoRA grads: ${f32.grads.size} tensors, max |diff| ${worst.toExponential(2)} (max |grad| ${
      gmax.toExponential(2)
    })`,
  );
});

Deno.test("f16 projections: refused by full fine-tuning", async () => {
  const tiny = makeTinyModel("llama", { seed: 2 });
  const model = uploadModel(gpu.device, tiny.config, tiny.weights, { f16: true });
  if (gpu.f16) await assertRejects(() => Promise.resolve().then(() => fullParams(model)), /f16 weights/);
  destroyModel(model);
});

Deno.test("f16 projections on a device without shader-f16 (forceF32, as on SwiftShader): the f32 upload and path", async () => {
  const plain = await requestGpu({ forceF32: true });
  assert(!plain.device.features.has("shader-f16"), "device made without shader-f16");
  const tiny = makeTinyModel("qwen2", { seed: 31 });
  const cfg = tiny.config;
  const model = uploadModel(plain.device, cfg, tiny.weights, { f16: true });
  assert(model.half.size === 0 && model.weights.has("model.layers.0.mlp.up_proj.weight"), "projections stay f32");
  const seqs = [[1, 5, 9, 2, 7], [3, 3, 8]];
  const got = await logprobsWebgpu(model, seqs);
  const want = referenceLogprobs(cfg, tiny.weights, seqs);
  got.forEach((g, i) => assertClose(g, want[i], { atol: 2e-3, rtol: 0, name: `f32 fallback seq ${i}` }));
  destroyModel(model);
  plain.device.destroy();
});

// What a user gets when the trainer switches to f16 storage (model-runtime, lora-grad, logprobs
// --dtype f16): the logprobs move from the f32 upload of the same checkpoint by f16's rounding of the
// projections only. Stated tolerance: 2e-2 nats per token on these tiny random models (measured
// 5e-4 to 7.4e-3); a trained model's weights are smoother, but the bound is this test's, not a promise.
const F16_VS_F32_ATOL = 2e-2;
Deno.test("f16 projections vs the f32 upload of the same weights: logprobs within 2e-2 nats (qwen2, llama, qwen3)", async () => {
  for (const arch of ["qwen2", "llama", "qwen3"] as const) {
    const tiny = makeTinyModel(arch, { seed: 31 });
    const cfg = tiny.config;
    const seqs = [9, 4, 13].map((n, i) => Array.from({ length: n }, (_, t) => (7 * t + 13 * i + 1) % cfg.vocabSize));
    const adapter = randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 3, bScale: 0.2 });
    const half = uploadModel(gpu.device, cfg, tiny.weights, { f16: true });
    const full = uploadModel(gpu.device, cfg, tiny.weights);
    const a = await logprobsWebgpu(half, seqs, adapter);
    const b = await logprobsWebgpu(full, seqs, adapter);
    const err =
      assertClose(a.flat(), b.flat(), { atol: F16_VS_F32_ATOL, rtol: 0, name: `${arch} f16 vs f32 upload` }).maxAbs;
    if (gpu.f16) assert(err > 0, `${arch}: f16 storage changed nothing (was it applied?)`);
    console.log(
      `${arch}: max |logp(f16 upload) - logp(f32 upload)| = ${err.toExponential(2)} (tolerance ${F16_VS_F32_ATOL})`,
    );
    destroyModel(half);
    destroyModel(full);
  }
});

Deno.test("halfProjections: f16 only for f16/bf16 checkpoints on a shader-f16 device, and never when f32 is forced", async () => {
  assertEquals(halfProjections(gpu.device, { torch_dtype: "bfloat16" }), gpu.f16);
  assertEquals(halfProjections(gpu.device, { dtype: "float16" }), gpu.f16);
  assertEquals(halfProjections(gpu.device, { torch_dtype: "float32" }), false);
  assertEquals(halfProjections(gpu.device, {}), false);
  assertEquals(halfProjections(gpu.device, { torch_dtype: "bfloat16" }, { forceF32: true }), false);
  const plain = await requestGpu({ forceF32: true });
  assertEquals(halfProjections(plain.device, { torch_dtype: "bfloat16" }), false);
  plain.device.destroy();
  Deno.env.set("RLVR_TRAINER_F32", "1");
  try {
    assertEquals(halfProjections(gpu.device, { torch_dtype: "bfloat16" }), false);
  } finally {
    Deno.env.delete("RLVR_TRAINER_F32");
  }
});
