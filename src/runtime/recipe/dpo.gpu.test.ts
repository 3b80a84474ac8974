// The DPO warm-up's reduction to the trainer's policy-gradient step: the gradient the trainer
// computes from dpoBatch's samples equals the finite-difference gradient of the mean DPO loss,
// computed in float64 by the reference model (src/model/reference.ts).
import { assert } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { requestGpu } from "../../gpu/device.ts";
import { destroyAdapter, destroyModel, readAdapterGrads, uploadAdapter, uploadModel } from "../../gpu/model/state.ts";
import { grpoStep, grpoTrainer } from "../../gpu/trainer/grpo-step.ts";
import { type LoraAdapter, randomAdapter } from "../../model/lora.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { dpoBatch } from "./warmup.ts";

Deno.test("warm-up dpo: the trainer's gradient on dpoBatch's samples is the gradient of the mean DPO loss (finite differences, float64 reference)", async () => {
  const gpu = await requestGpu();
  const tiny = makeTinyModel("qwen2", { seed: 21, vocabSize: 40 });
  const cfg = tiny.config;
  const adapter = randomAdapter(cfg, {
    r: 2,
    alpha: 4,
    targets: ["q_proj", "v_proj", "down_proj"],
    seed: 5,
    bScale: 0.3,
  });
  const rng = new Rng(9);
  const prompt = () => Array.from({ length: 3 }, () => rng.int(cfg.vocabSize));
  const completion = (n: number) => Array.from({ length: n }, () => rng.int(cfg.vocabSize));
  const p1 = prompt(), p2 = prompt();
  const pairs = [
    { sample: { ids: [...p1, ...completion(3)], promptLen: 3, advantage: 0 }, chosen: true },
    { sample: { ids: [...p1, ...completion(4)], promptLen: 3, advantage: 0 }, chosen: false },
    { sample: { ids: [...p2, ...completion(2)], promptLen: 3, advantage: 0 }, chosen: true },
    { sample: { ids: [...p2, ...completion(3)], promptLen: 3, advantage: 0 }, chosen: false },
  ];
  const beta = 0.7;
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  // lr 0: the step computes the gradients and leaves the adapter as it is.
  const tr = grpoTrainer(model, lora, {
    aggregation: "seq-mean-token-sum-norm",
    maxGradNorm: 0,
    beta: 0,
    lr: { base: 0, warmupSteps: 0, totalSteps: 1, decay: "constant" },
  });
  const seqs = pairs.map((p) => p.sample.ids);
  const batch = await dpoBatch(tr, pairs, beta, (s) => Promise.resolve(referenceLogprobs(cfg, tiny.weights, s)));
  const rep = await grpoStep(tr, batch);
  assert(!rep.skipped, "finite step");
  const grads = await readAdapterGrads(gpu.device, lora);

  const dpoLoss = (a: LoraAdapter): number => {
    const pol = referenceLogprobs(cfg, tiny.weights, seqs, a);
    const ref = referenceLogprobs(cfg, tiny.weights, seqs);
    const m = seqs.map((s, i) => {
      let x = 0;
      for (let t = 2; t < s.length - 1; t++) x += pol[i][t] - ref[i][t];
      return x;
    });
    let loss = 0;
    for (let k = 0; k < pairs.length; k += 2) loss += Math.log1p(Math.exp(-beta * (m[k] - m[k + 1])));
    return loss / (pairs.length / 2);
  };
  const h = 1e-3;
  let worst = 0, checked = 0, gmax = 0;
  for (const [name, g] of grads) {
    const t = adapter.tensors.get(name);
    assert(t, name);
    for (const idx of [0, Math.floor(t.data.length / 2), t.data.length - 1]) {
      const at = (d: number): LoraAdapter => {
        const tensors = new Map(adapter.tensors);
        const data = Float32Array.from(t.data);
        data[idx] += d;
        tensors.set(name, { shape: t.shape, data });
        return { ...adapter, tensors };
      };
      // The perturbation actually stored in float32.
      const plus = at(h), minus = at(-h);
      const dx = (plus.tensors.get(name)?.data[idx] ?? 0) - (minus.tensors.get(name)?.data[idx] ?? 0);
      const fd = (dpoLoss(plus) - dpoLoss(minus)) / dx;
      worst = Math.max(worst, Math.abs(g.data[idx] - fd) / (1e-4 + Math.abs(fd)));
      gmax = Math.max(gmax, Math.abs(fd));
      checked++;
    }
  }
  console.log(
    `dpo: ${checked} coordinates, largest |fd| ${gmax.toExponential(2)}, worst relative error ${
      worst.toExponential(2)
    }`,
  );
  assert(gmax > 1e-3, "the loss has a gradient to check");
  assert(worst < 2e-2, `trainer gradient vs finite differences of the DPO loss: worst relative error ${worst}`);
  destroyAdapter(lora);
  destroyModel(model);
});
