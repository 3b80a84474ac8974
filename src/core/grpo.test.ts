import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import {
  AGGREGATIONS,
  aggregationWeights,
  entropyFromLogits,
  entropyMean,
  type GrpoBatch,
  grpoLoss,
  type GrpoLossOptions,
  k3,
  klCoefficient,
  learningRate,
} from "./grpo.ts";
import { Rng } from "./rng.ts";

const close = (a: number, b: number, tol = 1e-12) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

Deno.test("grpoLoss: hand-computed clipped surrogate, both signs of the advantage", () => {
  const base = { S: 1, T: 2, logpOld: [-1, -1], mask: [1, 1] };
  const logpNew = [-1 + Math.log(1.5), -1 + Math.log(0.5)];
  const opts: GrpoLossOptions = { epsLow: 0.2, epsHigh: 0.2, beta: 0, aggregation: "token-mean" };
  // A = +1: r = 1.5 is clipped to 1.2 (no gradient), r = 0.5 is not (the min keeps r A).
  const pos = grpoLoss({ ...base, logpNew, advantages: [1] }, opts);
  assert(close(pos.loss, -(1.2 + 0.5) / 2), `loss ${pos.loss}`);
  assertClose(pos.grad, [0, -0.5 / 2], { atol: 1e-15 });
  assertEquals([pos.metrics.clipHighFrac, pos.metrics.clipLowFrac], [0.5, 0]);
  // A = -1: r = 1.5 is not clipped (the min keeps r A = -1.5), r = 0.5 is clipped to 0.8.
  const neg = grpoLoss({ ...base, logpNew, advantages: [-1] }, opts);
  assert(close(neg.loss, (1.5 + 0.8) / 2), `loss ${neg.loss}`);
  assertClose(neg.grad, [1.5 / 2, 0], { atol: 1e-15 });
  assertEquals([neg.metrics.clipHighFrac, neg.metrics.clipLowFrac, neg.metrics.clipFrac], [0, 0.5, 0.5]);
  assert(close(neg.metrics.ratioMean, 1), `ratioMean ${neg.metrics.ratioMean}`);
  assertEquals([neg.metrics.ratioMin, neg.metrics.ratioMax].map((x) => Math.round(x * 1e12) / 1e12), [0.5, 1.5]);
  assert(
    close(neg.metrics.approxKl, (0.5 - Math.log(1.5) + -0.5 - Math.log(0.5)) / 2),
    "approxKl is mean k3 of the ratio",
  );
  // Clip-higher: with epsHigh = 0.6 the ratio 1.5 is inside the range and keeps its gradient.
  const dapo = grpoLoss({ ...base, logpNew, advantages: [1] }, { ...opts, epsHigh: 0.6 });
  assertClose(dapo.grad, [-1.5 / 2, -0.5 / 2], { atol: 1e-15 });
});

Deno.test("grpoLoss: on-policy step (old = new) gives -A m w, aggregations differ as documented", () => {
  // Two sequences of 1 and 3 tokens (T = 4), advantages +1 and -1.
  const S = 2, T = 4;
  const mask = [1, 0, 0, 0, 1, 1, 1, 0];
  const logp = [-0.5, 0, 0, 0, -1, -2, -0.1, 0];
  const b: GrpoBatch = { S, T, logpNew: logp, logpOld: logp, mask, advantages: [1, -1] };
  const o = { epsLow: 0.2, epsHigh: 0.28, beta: 0 };
  const tm = grpoLoss(b, { ...o, aggregation: "token-mean" });
  assert(close(tm.loss, -(1 - 3) / 4), `token-mean ${tm.loss}`); // each token weighs 1/4
  assertClose(tm.grad, [-1 / 4, 0, 0, 0, 1 / 4, 1 / 4, 1 / 4, 0], { atol: 1e-15 });
  const sm = grpoLoss(b, { ...o, aggregation: "seq-mean-token-mean" });
  assert(close(sm.loss, 0), `seq-mean ${sm.loss}`); // (-1 + 1) / 2: each sequence weighs 1/2
  assertClose(sm.grad, [-1 / 2, 0, 0, 0, 1 / 6, 1 / 6, 1 / 6, 0], { atol: 1e-15 });
  const dr = grpoLoss(b, { ...o, aggregation: "seq-mean-token-sum-norm" });
  assert(close(dr.loss, -(1 - 3) / 8), `Dr. GRPO ${dr.loss}`); // divided by T * S = 8
  const drc = grpoLoss(b, { ...o, aggregation: "seq-mean-token-sum-norm", normConstant: 100 });
  assert(close(drc.loss, -(1 - 3) / 100), `Dr. GRPO constant ${drc.loss}`);
  assertEquals(drc.metrics.tokens, 4);
});

Deno.test("aggregationWeights: token-mean and seq-mean weights sum to 1, empty sequences excluded", () => {
  const mask = [1, 1, 0, 0, 0, 0, 1, 0, 0];
  for (const a of ["token-mean", "seq-mean-token-mean"] as const) {
    const w = aggregationWeights(3, 3, mask, a);
    assert(close(w.reduce((x, y) => x + y, 0), 1), `${a}: ${Array.from(w)}`);
  }
  assertClose(aggregationWeights(3, 3, mask, "seq-mean-token-mean"), [0.25, 0.25, 0, 0, 0, 0, 0.5, 0, 0], {
    atol: 1e-15,
  });
  assertEquals(Array.from(aggregationWeights(2, 2, [0, 0, 0, 0], "token-mean")), [0, 0, 0, 0]);
});

function randomBatch(rng: Rng, S: number, T: number, perToken: boolean, eps: { lo: number; hi: number }): GrpoBatch {
  const n = S * T;
  const logpOld = Float64Array.from({ length: n }, () => -3 * rng.next() - 0.01);
  const logpRef = Float64Array.from(logpOld, (x) => x + 0.6 * rng.normal());
  const logpNew = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    // Ratios spread over both clip regions, kept away from the kinks where the loss is not differentiable.
    let r: number;
    do r = Math.exp(0.5 * rng.normal()); while (Math.abs(r - (1 - eps.lo)) < 1e-3 || Math.abs(r - (1 + eps.hi)) < 1e-3);
    logpNew[i] = logpOld[i] + Math.log(r);
  }
  const mask = new Float64Array(n);
  for (let s = 0; s < S; s++) {
    const len = s === 0 ? 0 : 1 + rng.int(T); // sequence 0 is empty: the aggregations must cope
    for (let t = 0; t < len; t++) mask[s * T + t] = 1;
  }
  const advantages = Float64Array.from({ length: perToken ? n : S }, () => rng.normal());
  return { S, T, logpNew, logpOld, logpRef, mask, advantages };
}

Deno.test("grpoLoss: closed-form dL/dlogp matches central finite differences (all aggregations, KL on/off)", () => {
  const rng = new Rng(12345);
  const h = 1e-6;
  let worst = 0;
  const clipped = { low: 0, high: 0 };
  for (const aggregation of AGGREGATIONS) {
    for (const beta of [0, 0.05]) {
      for (const perToken of [false, true]) {
        const eps = { lo: 0.2, hi: 0.28 };
        const b = randomBatch(rng, 6, 9, perToken, eps);
        const opts: GrpoLossOptions = { epsLow: eps.lo, epsHigh: eps.hi, beta, aggregation };
        const { grad, metrics } = grpoLoss(b, opts);
        clipped.low += metrics.clipLowFrac;
        clipped.high += metrics.clipHighFrac;
        const fd = new Float64Array(b.S * b.T);
        const x = Float64Array.from(b.logpNew);
        for (let i = 0; i < x.length; i++) {
          const keep = x[i];
          x[i] = keep + h;
          const up = grpoLoss({ ...b, logpNew: x }, opts).loss;
          x[i] = keep - h;
          const down = grpoLoss({ ...b, logpNew: x }, opts).loss;
          x[i] = keep;
          fd[i] = (up - down) / (2 * h);
        }
        const { maxAbs } = assertClose(grad, fd, {
          atol: 1e-8,
          rtol: 1e-6,
          name: `grad ${aggregation} beta=${beta} perToken=${perToken}`,
        });
        worst = Math.max(worst, maxAbs);
      }
    }
  }
  assert(clipped.low > 0 && clipped.high > 0, "the batches exercise both clips");
  console.log(`largest |closed form - finite difference| over 12 batches: ${worst.toExponential(2)}`);
});

Deno.test("grpoLoss: k3 KL term and its gradient; klRef metric; beta without reference refused", () => {
  assert(close(k3(-1, -1), 0) && k3(-1, -2) > 0 && k3(-2, -1) > 0, "k3 is >= 0 and 0 at equality");
  const b: GrpoBatch = { S: 1, T: 1, logpNew: [-1], logpOld: [-1], logpRef: [-1.5], mask: [1], advantages: [0] };
  const r = grpoLoss(b, { epsLow: 0.2, epsHigh: 0.2, beta: 0.1, aggregation: "token-mean" });
  const d = -0.5;
  assert(close(r.klLoss, Math.exp(d) - d - 1) && close(r.loss, 0.1 * r.klLoss), `kl ${r.klLoss}`);
  assert(close(r.grad[0], 0.1 * (1 - Math.exp(d))), `grad ${r.grad[0]}`);
  assert(close(r.metrics.klRef, r.klLoss), "klRef metric");
  let threw = false;
  try {
    grpoLoss({ ...b, logpRef: undefined }, { epsLow: 0.2, epsHigh: 0.2, beta: 0.1, aggregation: "token-mean" });
  } catch {
    threw = true;
  }
  assert(threw, "beta > 0 without logpRef must throw");
});

Deno.test("entropy: from logits against -sum p log p, uniform gives log V, masked mean", () => {
  const rng = new Rng(3);
  const z = Array.from({ length: 50 }, () => 4 * rng.normal());
  for (const temp of [1, 0.7]) {
    const m = Math.max(...z.map((x) => x / temp));
    const e = z.map((x) => Math.exp(x / temp - m));
    const sum = e.reduce((a, b) => a + b, 0);
    const h = -e.reduce((a, x) => a + (x / sum) * Math.log(x / sum), 0);
    assert(close(entropyFromLogits(z, temp), h, 1e-12), `T=${temp}: ${entropyFromLogits(z, temp)} vs ${h}`);
  }
  assert(close(entropyFromLogits(new Array(10).fill(3)), Math.log(10)), "uniform");
  assert(close(entropyMean([1, 2, 100], [1, 1, 0]), 1.5), "masked mean");
});

Deno.test("learningRate and klCoefficient schedules", () => {
  const s = { base: 1e-3, warmupSteps: 4, totalSteps: 14 };
  assert(close(learningRate(0, { ...s, decay: "cosine" }), 0.25e-3), "warm-up starts at base / warmup");
  assert(close(learningRate(3, { ...s, decay: "cosine" }), 1e-3));
  assert(close(learningRate(4, { ...s, decay: "cosine" }), 1e-3));
  assert(close(learningRate(9, { ...s, decay: "cosine" }), 0.5e-3), "half-way through the cosine");
  assert(close(learningRate(14, { ...s, decay: "cosine" }), 0));
  assert(close(learningRate(100, { ...s, decay: "cosine", minRatio: 0.1 }), 1e-4), "floor, clamped past the end");
  assert(close(learningRate(9, { ...s, decay: "linear" }), 0.5e-3));
  assert(close(learningRate(11, { ...s, decay: "linear", minRatio: 0.2 }), 1e-3 * (0.2 + 0.8 * 0.3)));
  assert(close(learningRate(50, { ...s, decay: "constant" }), 1e-3));
  const k = { beta: 0.04, totalSteps: 100 };
  assert(close(klCoefficient(50, { ...k, schedule: "constant" }), 0.04));
  assert(close(klCoefficient(25, { ...k, schedule: "linear" }), 0.03));
  assert(close(klCoefficient(50, { ...k, schedule: "cosine", final: 0.01 }), 0.025));
  assert(close(klCoefficient(200, { ...k, schedule: "linear" }), 0), "clamped after totalSteps");
  assertEquals(klCoefficient(0, { ...k, schedule: "off" }), 0);
});
