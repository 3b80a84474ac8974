import { assert, assertClose, assertRejects } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { Arch } from "../../model/config.ts";
import { LORA_TARGETS, randomAdapter } from "../../model/lora.ts";
import { entropyFromLogits } from "../../core/grpo.ts";
import { referenceLogits, referenceLogprobs } from "../../model/reference.ts";
import { dequantizeQ4, quantizeQ4 } from "../../model/quant.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../model/state.ts";
import { batchLogprobs, logprobsWebgpu } from "./logprobs.ts";

const gpu = await requestGpu();

function randomSeqs(rng: Rng, V: number, lens: number[]): number[][] {
  return lens.map((n) => Array.from({ length: n }, () => rng.int(V)));
}

for (const arch of ["qwen2", "llama", "qwen3"] as const satisfies readonly Arch[]) {
  Deno.test(`logprobsWebgpu ${arch}: matches the float64 reference, with and without a LoRA adapter on all seven targets`, async () => {
    const tiny = makeTinyModel(arch, { seed: 7 });
    const cfg = tiny.config;
    const rng = new Rng(11);
    const seqs = randomSeqs(rng, cfg.vocabSize, [9, 4, 13]);
    // maxVocabRows 100 binds the 280-row embedding in 64-row windows, exercising the windowed gather.
    const model = uploadModel(gpu.device, cfg, tiny.weights, { maxVocabRows: 100 });
    const adapter = randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 3, bScale: 0.2 });
    let worst = 0;
    for (const a of [undefined, adapter]) {
      const got = await logprobsWebgpu(model, seqs, a);
      const want = referenceLogprobs(cfg, tiny.weights, seqs, a);
      assert(got.length === want.length, "one row per sequence");
      got.forEach((g, i) => {
        const { maxAbs } = assertClose(g, want[i], {
          atol: 2e-3,
          rtol: 0,
          name: `${arch} seq ${i} ${a ? "lora" : "base"}`,
        });
        worst = Math.max(worst, maxAbs);
      });
    }
    if (adapter) {
      // The adapter must change the result, or the comparison would not test the LoRA path.
      const base = referenceLogprobs(cfg, tiny.weights, seqs);
      const adapted = referenceLogprobs(cfg, tiny.weights, seqs, adapter);
      const diff = Math.max(...base.flatMap((r, i) => r.map((x, t) => Math.abs(x - adapted[i][t]))));
      assert(diff > 1e-2, `adapter changes logprobs visibly (max diff ${diff})`);
    }
    console.log(`${arch}: max |logp gpu - ref| = ${worst.toExponential(2)}`);
    destroyModel(model);
  });
}

Deno.test("logprobsWebgpu with q4 base projections: matches the float64 reference on the dequantised weights, all three archs", async () => {
  for (const arch of ["qwen2", "llama", "qwen3"] as const) {
    const tiny = makeTinyModel(arch, { seed: 17 });
    const cfg = tiny.config;
    const deq = new Map(tiny.weights);
    let n = 0;
    for (const [name, t] of tiny.weights) {
      if (/^model\.layers\.\d+\.(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight$/.test(name)) {
        deq.set(name, dequantizeQ4(quantizeQ4(t)));
        n++;
      }
    }
    assert(n === 7 * cfg.numLayers, "every projection quantised");
    const seqs = randomSeqs(new Rng(2), cfg.vocabSize, [8, 11]);
    const adapter = randomAdapter(cfg, {
      r: 2,
      alpha: 4,
      targets: ["q_proj", "o_proj", "up_proj"],
      seed: 5,
      bScale: 0.2,
    });
    const model = uploadModel(gpu.device, cfg, tiny.weights, { q4: true });
    assert(
      model.q4.size === n && !model.weights.has("model.layers.0.mlp.up_proj.weight"),
      "projections held as q4 only",
    );
    const got = await logprobsWebgpu(model, seqs, adapter);
    const want = referenceLogprobs(cfg, deq, seqs, adapter);
    const f32 = referenceLogprobs(cfg, tiny.weights, seqs, adapter);
    let worst = 0, qerr = 0;
    got.forEach((g, i) => {
      worst = Math.max(worst, assertClose(g, want[i], { atol: 2e-3, rtol: 0, name: `${arch} q4 seq ${i}` }).maxAbs);
      qerr = Math.max(qerr, ...f32[i].map((x, t) => Math.abs(x - want[i][t])));
    });
    console.log(
      `${arch} q4: max |logp gpu - ref(dequantised)| = ${
        worst.toExponential(2)
      } (quantisation itself moves logp by up to ${qerr.toExponential(2)})`,
    );
    destroyModel(model);
  }
});

Deno.test("batchLogprobs: per-row entropy of the next-token distribution matches the float64 reference", async () => {
  const tiny = makeTinyModel("qwen3", { seed: 23 });
  const cfg = tiny.config;
  const seqs = randomSeqs(new Rng(4), cfg.vocabSize, [7, 12]);
  const adapter = randomAdapter(cfg, { r: 2, alpha: 4, targets: LORA_TARGETS, seed: 6, bScale: 0.2 });
  const model = uploadModel(gpu.device, cfg, tiny.weights, { maxVocabRows: 64 });
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  const r = await batchLogprobs(model, seqs, lora);
  let worst = 0;
  seqs.forEach((s, b) => {
    const want = referenceLogits(cfg, tiny.weights, s, adapter).map((z) => entropyFromLogits(z));
    worst = Math.max(
      worst,
      assertClose(r.entropy.subarray(b * r.T, b * r.T + s.length), want, {
        atol: 2e-4,
        rtol: 1e-4,
        name: `entropy seq ${b}`,
      }).maxAbs,
    );
  });
  console.log(`entropy: max |gpu - ref| = ${worst.toExponential(2)} nats`);
  destroyAdapter(lora);
  destroyModel(model);
});

Deno.test("forward refuses a batch whose activations exceed one storage binding, naming the limit", async () => {
  const tiny = makeTinyModel("llama", { seed: 1 });
  const model = uploadModel(gpu.device, tiny.config, tiny.weights);
  // (N, I) floats past the binding limit: N = limit / (4 I) + 1 rows.
  const rows = Math.floor(gpu.device.limits.maxStorageBufferBindingSize / (4 * tiny.config.intermediateSize)) + 1;
  const err = await assertRejects(
    () => logprobsWebgpu(model, [new Array(rows).fill(1)]),
    /exceed this device's maxStorageBufferBindingSize/,
  );
  assert(/micro-\)batches/.test(err.message), err.message);
  destroyModel(model);
});
