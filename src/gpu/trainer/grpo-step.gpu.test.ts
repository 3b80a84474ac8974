import { assert, assertClose } from "../../../tests/assert.ts";
import { grpoLoss } from "../../core/grpo.ts";
import { Rng } from "../../core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../../model/lora.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { adamwRef } from "../../../tests/gpu-ref/adamw.ref.ts";
import {
  destroyAdapter,
  destroyModel,
  readAdapter,
  readAdapterGrads,
  uploadAdapter,
  uploadModel,
} from "../model/state.ts";
import { loraGradients } from "./grad.ts";
import { type GrpoSample, grpoStep, grpoTrainer, sampleLogprobs } from "./grpo-step.ts";

const gpu = await requestGpu();
const tiny = makeTinyModel("qwen3", { seed: 4 });
const cfg = tiny.config;

function samples(seed: number): GrpoSample[] {
  const rng = new Rng(seed);
  return [[8, 3], [5, 2], [10, 6], [7, 4]].map(([len, promptLen]) => ({
    ids: Array.from({ length: len }, () => rng.int(cfg.vocabSize)),
    promptLen,
    advantage: 2 * rng.next() - 1,
  }));
}

Deno.test("grpoStep at ratio 1 (token-mean, no KL) applies AdamW with global-norm clipping to the lora-grad gradient", async () => {
  const adapter = randomAdapter(cfg, { r: 2, alpha: 4, targets: LORA_TARGETS, seed: 8, bScale: 0.2 });
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const s = samples(1);
  const ref = uploadAdapter(gpu.device, cfg, adapter);
  const { grads } = await loraGradients(
    model,
    ref,
    s.map((x) => ({ ids: x.ids, promptLen: x.promptLen, advantage: x.advantage })),
  );
  let sumsq = 0;
  for (const g of grads.values()) for (const x of g.data) sumsq += x * x;
  const norm = Math.sqrt(sumsq);
  const maxGradNorm = 0.5 * norm; // clipping active
  const lr = 1e-2;
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  const tr = grpoTrainer(model, lora, {
    aggregation: "token-mean",
    beta: 0,
    maxGradNorm,
    adamEps: 1e-4,
    weightDecay: 0.1,
    lr: { base: lr, warmupSteps: 0, totalSteps: 10, decay: "constant" },
  });
  const rep = await grpoStep(tr, s);
  assert(!rep.skipped && rep.step === 1, "step applied");
  // At ratio 1 the surrogate's value is -mean over tokens of A (its gradient is the lora-grad one).
  const tokens = s.reduce((n, x) => n + x.ids.length - x.promptLen, 0);
  const loss = -s.reduce((n, x) => n + x.advantage * (x.ids.length - x.promptLen), 0) / tokens;
  assertClose([rep.loss, rep.gradNorm, rep.clip, rep.metrics.clipFrac, rep.metrics.ratioMean], [
    loss,
    norm,
    maxGradNorm / (norm + 1e-6),
    0,
    1,
  ], { atol: 1e-5, rtol: 1e-4, name: "loss, norm, clip, metrics" });
  assert(rep.metrics.tokens === tokens, "token count");
  const after = await readAdapter(gpu.device, lora);
  const hp = { lr, beta1: 0.9, beta2: 0.999, eps: 1e-4, weightDecay: 0.1, step: 1 };
  for (const [name, g] of grads) {
    const p0 = adapter.tensors.get(name);
    const p1 = after.tensors.get(name);
    assert(p0 !== undefined && p1 !== undefined, name);
    const want =
      adamwRef(p0.data, g.data, new Float32Array(g.data.length), new Float32Array(g.data.length), hp, rep.clip).param;
    assertClose(p1.data, want, { atol: 0.02 * lr, rtol: 0, name });
  }
  destroyAdapter(ref);
  destroyAdapter(lora);
  destroyModel(model);
});

Deno.test("grpoStep with a non-finite gradient is skipped: parameters and step counter untouched", async () => {
  const adapter = randomAdapter(cfg, { r: 2, alpha: 4, targets: ["q_proj", "down_proj"], seed: 2 });
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  const tr = grpoTrainer(model, lora, { lr: { base: 1e-2, warmupSteps: 0, totalSteps: 10, decay: "constant" } });
  const s = samples(2);
  s[1].advantage = Infinity; // an overflowed advantage: -A * r is -Inf, the backward turns it into NaN
  const rep = await grpoStep(tr, s);
  assert(rep.skipped, "reported as skipped");
  assert(rep.step === 0, "step counter unchanged");
  const after = await readAdapter(gpu.device, lora);
  for (const [name, t] of adapter.tensors) {
    assertClose(after.tensors.get(name)?.data ?? [], t.data, { atol: 0, rtol: 0, name });
  }
  // A finite batch afterwards trains normally.
  const ok = await grpoStep(tr, samples(3));
  assert(!ok.skipped && ok.step === 1, "next finite step applies");
  destroyAdapter(lora);
  destroyModel(model);
});

Deno.test("grpoStep in micro-batches accumulates to the whole-batch gradient and metrics (old/ref log-probs, clipping, KL, seq-mean-token-mean)", async () => {
  const adapter = randomAdapter(cfg, {
    r: 2,
    alpha: 4,
    targets: ["k_proj", "o_proj", "gate_proj"],
    seed: 12,
    bScale: 0.2,
  });
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const s = [...samples(7), ...samples(8)];
  const probe = grpoTrainer(model, uploadAdapter(gpu.device, cfg, adapter));
  const lp = await sampleLogprobs(probe, s.map((x) => x.ids));
  const rng = new Rng(3);
  s.forEach((x, i) => {
    x.logpOld = lp[i].map((v) => v + 0.4 * (rng.next() - 0.5));
    x.logpRef = lp[i].map((v) => v + 0.2 * (rng.next() - 0.5));
  });
  const opts = { aggregation: "seq-mean-token-mean", beta: 0.05, epsLow: 0.1, epsHigh: 0.1, maxGradNorm: 0 } as const;
  const runs = [];
  for (const microBatch of [undefined, 3]) {
    const lora = uploadAdapter(gpu.device, cfg, adapter);
    const rep = await grpoStep(grpoTrainer(model, lora, opts), s, { microBatch });
    runs.push({ rep, grads: await readAdapterGrads(gpu.device, lora) });
    destroyAdapter(lora);
  }
  const [whole, sliced] = runs;
  assert(whole.rep.metrics.clipFrac > 0, "clipping active");
  // The step's loss and metrics against src/core/grpo.ts on the same log-probs laid out (S, C).
  const C = Math.max(...s.map((x) => x.ids.length - x.promptLen));
  const at = (rows: ArrayLike<number>[]) => {
    const out = new Float64Array(s.length * C);
    s.forEach((x, i) => {
      for (let j = 0; j < x.ids.length - x.promptLen; j++) out[i * C + j] = rows[i][x.promptLen - 1 + j];
    });
    return out;
  };
  const mask = at(s.map((x) => new Array(x.ids.length - 1).fill(1)));
  const ref = grpoLoss({
    S: s.length,
    T: C,
    logpNew: at(lp),
    logpOld: at(s.map((x) => x.logpOld ?? [])),
    logpRef: at(s.map((x) => x.logpRef ?? [])),
    mask,
    advantages: s.map((x) => x.advantage),
  }, opts);
  assertClose([whole.rep.loss, whole.rep.pgLoss, whole.rep.klLoss, ...Object.values(whole.rep.metrics)], [
    ref.loss,
    ref.pgLoss,
    ref.klLoss,
    ...Object.values(ref.metrics),
  ], { atol: 1e-5, rtol: 1e-4, name: "step vs core grpoLoss" });
  const m = (r: typeof whole.rep) => [r.loss, r.pgLoss, r.klLoss, r.entropy, r.gradNorm, ...Object.values(r.metrics)];
  assertClose(m(sliced.rep), m(whole.rep), { atol: 1e-6, rtol: 1e-5, name: "loss and metrics" });
  // Micro-batches split the sum over tokens of dA and dB, so they round differently from the whole batch: how much depends
  // on the kernel's order. The narrow kernel sums tokens in sequence and keeps the absolute bound 1e-7 (3e-7 of a
  // tensor's largest gradient here).
  for (const [name, g] of whole.grads) {
    assertClose(sliced.grads.get(name)?.data ?? [], g.data, { atol: 1e-7, rtol: 1e-4, name });
  }
  if (probe.lora) destroyAdapter(probe.lora);
  destroyModel(model);
});
