import { assert, assertClose } from "../../../tests/assert.ts";
import { grpoLoss } from "../../core/grpo.ts";
import { Rng } from "../../core/rng.ts";
import { randomAdapter } from "../../model/lora.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { destroyAdapter, destroyModel, readAdapterGrads, uploadAdapter, uploadModel } from "../model/state.ts";
import { type GrpoSample, grpoStep, grpoTrainer, sampleLogprobs } from "./grpo-step.ts";

const gpu = await requestGpu();
const tiny = makeTinyModel("llama", { seed: 6 });
const cfg = tiny.config;

function samples(seed: number): GrpoSample[] {
  const rng = new Rng(seed);
  return [[9, 3], [6, 2], [11, 5]].map(([len, promptLen]) => ({
    ids: Array.from({ length: len }, () => rng.int(cfg.vocabSize)),
    promptLen,
    advantage: 0.7,
    tokenAdvantages: Array.from({ length: len - promptLen }, () => 2 * rng.next() - 1),
  }));
}

Deno.test("grpoStep with per-token advantages (step-level credit): loss and metrics equal core grpoLoss on (S, T) advantages, gradient equals finite differences of the surrogate", async () => {
  const adapter = randomAdapter(cfg, {
    r: 2,
    alpha: 4,
    targets: ["q_proj", "v_proj", "down_proj"],
    seed: 3,
    bScale: 0.2,
  });
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const s = samples(2);
  const opts = { aggregation: "seq-mean-token-mean", beta: 0, maxGradNorm: 0, epsLow: 0.2, epsHigh: 0.28 } as const;
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  const tr = grpoTrainer(model, lora, opts);
  const lp = await sampleLogprobs(tr, s.map((x) => x.ids));
  const rep = await grpoStep(tr, s);
  const grads = await readAdapterGrads(gpu.device, lora);
  const C = Math.max(...s.map((x) => x.ids.length - x.promptLen));
  const at = (f: (x: GrpoSample, i: number, j: number) => number) => {
    const out = new Float64Array(s.length * C);
    s.forEach((x, i) => {
      for (let j = 0; j < x.ids.length - x.promptLen; j++) out[i * C + j] = f(x, i, j);
    });
    return out;
  };
  const logp = at((x, i, j) => lp[i][x.promptLen - 1 + j]);
  const mask = at(() => 1);
  const adv = at((x, _, j) => x.tokenAdvantages![j]);
  const ref = grpoLoss({ S: s.length, T: C, logpNew: logp, logpOld: logp, mask, advantages: adv }, opts);
  assertClose([rep.loss, ...Object.values(rep.metrics)], [ref.loss, ...Object.values(ref.metrics)], {
    atol: 1e-6,
    rtol: 1e-4,
    name: "step vs core grpoLoss",
  });
  // The surrogate with logp_old frozen at its value: its gradient at ratio 1 is the step's.
  const old = s.map((x) => referenceLogprobs(cfg, tiny.weights, [x.ids], adapter)[0]);
  const w = new Float64Array(s.length * C);
  s.forEach((x, i) => w.fill(1 / (s.length * (x.ids.length - x.promptLen)), i * C, i * C + x.ids.length - x.promptLen));
  const surrogate = () => {
    let l = 0;
    s.forEach((x, i) => {
      const now = referenceLogprobs(cfg, tiny.weights, [x.ids], adapter)[0];
      for (let j = 0; j < x.ids.length - x.promptLen; j++) {
        const t = x.promptLen - 1 + j;
        l -= w[i * C + j] * x.tokenAdvantages![j] * Math.exp(now[t] - old[i][t]);
      }
    });
    return l;
  };
  let gmax = 0, worst = 0;
  for (const g of grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
  for (const [name, g] of grads) {
    const t = adapter.tensors.get(name);
    assert(t !== undefined, name);
    let i = 0;
    for (let k = 1; k < g.data.length; k++) if (Math.abs(g.data[k]) > Math.abs(g.data[i])) i = k;
    const x0 = t.data[i];
    t.data[i] = x0 + 1e-3;
    const hp = t.data[i] - x0, up = surrogate();
    t.data[i] = x0 - 1e-3;
    const hm = x0 - t.data[i], down = surrogate();
    t.data[i] = x0;
    const fd = (up - down) / (hp + hm);
    worst = Math.max(worst, Math.abs(g.data[i] - fd) / gmax);
    assert(
      Math.abs(g.data[i] - fd) <= 1e-3 * gmax + 2e-3 * Math.abs(fd),
      `${name}[${i}]: gpu ${g.data[i]} vs finite difference ${fd}`,
    );
  }
  // Uniform token advantages are the per-sequence advantage exactly.
  const lora2 = uploadAdapter(gpu.device, cfg, adapter), lora3 = uploadAdapter(gpu.device, cfg, adapter);
  await grpoStep(grpoTrainer(model, lora2, opts), s.map((x) => ({ ...x, tokenAdvantages: undefined })));
  await grpoStep(
    grpoTrainer(model, lora3, opts),
    s.map((x) => ({ ...x, tokenAdvantages: new Array(x.ids.length - x.promptLen).fill(x.advantage) })),
  );
  const [g2, g3] = [await readAdapterGrads(gpu.device, lora2), await readAdapterGrads(gpu.device, lora3)];
  for (const [name, g] of g2) {
    assert(
      g.data.every((v, k) => v === g3.get(name)?.data[k]),
      `${name}: uniform token advantages differ from the sequence advantage`,
    );
  }
  console.log(
    `per-token advantages: loss ${rep.loss.toFixed(6)} vs core ${
      ref.loss.toFixed(6)
    }; ${grads.size} tensors, max |gpu - fd| / max|grad| ${worst.toExponential(2)}; uniform = per-sequence bitwise`,
  );
  for (const l of [lora, lora2, lora3]) destroyAdapter(l);
  destroyModel(model);
});

Deno.test("grpoStep refuses token advantages of the wrong length or not finite", async () => {
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const lora = uploadAdapter(gpu.device, cfg, randomAdapter(cfg, { r: 2, alpha: 4, targets: ["q_proj"], seed: 1 }));
  const tr = grpoTrainer(model, lora);
  const [x] = samples(5);
  for (const bad of [[0.1], [...Array.from(x.tokenAdvantages!).slice(1), NaN]]) {
    let msg = "";
    await grpoStep(tr, [{ ...x, tokenAdvantages: bad }]).catch((
      e: unknown,
    ) => (msg = e instanceof Error ? e.message : String(e)));
    assert(msg.includes("finite token advantages"), msg);
  }
  destroyAdapter(lora);
  destroyModel(model);
});
