// The sampling distribution (temperature, top-k, top-p, min-p) against direct float64
// computations, and token choice determinism — pure logic, no GPU.
import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { argmax, chooseToken, DEFAULT_SAMPLING, logSoftmaxAt, rowSeed, samplingDistribution } from "./sampler.ts";

const logits = Float32Array.from([1.0, 3.0, -2.0, 2.5, 0.0, 3.0, -40.0]);

function softmax(x: number[], T: number): number[] {
  const m = Math.max(...x);
  const e = x.map((v) => Math.exp((v - m) / T));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((v) => v / s);
}

Deno.test("sampler: temperature only keeps every non-negligible token with softmax(l/T) probabilities", () => {
  const T = 0.7;
  const d = samplingDistribution(logits, { temperature: T, topK: 0, topP: 1, minP: 0 });
  const full = softmax([...logits], T);
  assertEquals(d.ids, [0, 1, 2, 3, 4, 5, 6].filter((i) => (logits[i] - 3) / T >= -40));
  const kept = d.ids.map((i) => full[i]);
  const s = kept.reduce((a, b) => a + b, 0);
  assertClose(d.probs, kept.map((p) => p / s), { atol: 1e-12, rtol: 1e-9 });
});

Deno.test("sampler: top-k, top-p and min-p keep the expected sets, renormalised", () => {
  const p = softmax([...logits], 1);
  const k2 = samplingDistribution(logits, { temperature: 1, topK: 2, topP: 1, minP: 0 });
  assertEquals(k2.ids, [1, 5]);
  // Ties at the k-th value keep the lowest ids: the top 2 of [3, 1, 3, 3] are ids 0 and 2.
  assertEquals(
    samplingDistribution(Float32Array.from([3, 1, 3, 3]), { temperature: 1, topK: 2, topP: 1, minP: 0 }).ids,
    [0, 2],
  );
  assertClose(k2.probs, [0.5, 0.5], { atol: 1e-12 });
  // Mass of ids 1, 5 is 2*p[1]; adding id 3 crosses 0.75 when 2*p[1] < 0.7.
  const cum2 = p[1] + p[5];
  assert(cum2 < 0.75 && cum2 + p[3] >= 0.75, "fixture: top-p 0.75 should need three tokens");
  const tp = samplingDistribution(logits, { temperature: 1, topK: 0, topP: 0.75, minP: 0 });
  assertEquals(tp.ids, [1, 5, 3]);
  const s = p[1] + p[5] + p[3];
  assertClose(tp.probs, [p[1] / s, p[5] / s, p[3] / s], { atol: 1e-12 });
  // min-p 0.2: keep p >= 0.2 * p_max, i.e. logit >= 3 + ln 0.2 = 1.39: ids 1, 5, 3.
  const mp = samplingDistribution(logits, { temperature: 1, topK: 0, topP: 1, minP: 0.2 });
  assertEquals(mp.ids, [1, 3, 5]);
  // Order of application: top-k 3 first, then top-p 0.5 on the renormalised top-3 keeps 2.
  const both = samplingDistribution(logits, { temperature: 1, topK: 3, topP: 0.5, minP: 0 });
  assertEquals(both.ids, [1, 5]);
  // Top-p over a large vocabulary: the pre-selected likely tokens and the full sort agree.
  const big = new Rng(3).uniformArray(5000, -20, 8);
  for (const topP of [0.1, 0.9, 0.999999]) {
    const d = samplingDistribution(big, { temperature: 1.3, topK: 0, topP, minP: 0 });
    const order = [...big.keys()].sort((a, b) => big[b] - big[a] || a - b);
    const pr = softmax([...big], 1.3);
    let acc = 0, keep = 0;
    while (acc < topP) acc += pr[order[keep++]];
    assertEquals(d.ids, order.slice(0, keep), `top-p ${topP}`);
  }
});

Deno.test("sampler: greedy and top-k 1 pick the argmax (lowest id on ties); log-probabilities are softmax at temperature 1", () => {
  assertEquals(argmax(logits), 1);
  const rng = new Rng(1);
  const g = chooseToken(logits, { ...DEFAULT_SAMPLING, temperature: 0 }, rng);
  const k1 = chooseToken(logits, { ...DEFAULT_SAMPLING, temperature: 1.3, topK: 1 }, rng);
  assertEquals([g.token, k1.token], [1, 1]);
  const lp = Math.log(softmax([...logits], 1)[1]);
  assertClose([g.logprob, k1.logprob, logSoftmaxAt(logits, 1)], [lp, lp, lp], { atol: 1e-6 });
});

Deno.test("sampler: the same seed gives the same draws; frequencies follow the distribution", () => {
  const p = { ...DEFAULT_SAMPLING, temperature: 1 };
  const draw = (seed: number) => {
    const rng = new Rng(seed);
    return Array.from({ length: 200 }, () => chooseToken(logits, p, rng).token);
  };
  assertEquals(draw(5), draw(5));
  assert(draw(5).join() !== draw(6).join(), "different seeds gave identical draws");
  const counts = new Array(logits.length).fill(0);
  const rng = new Rng(42);
  const n = 20000;
  for (let i = 0; i < n; i++) counts[chooseToken(logits, p, rng).token]++;
  const want = softmax([...logits], 1);
  // 5 standard deviations of a binomial count.
  for (let i = 0; i < logits.length; i++) {
    assert(
      Math.abs(counts[i] - n * want[i]) <= 5 * Math.sqrt(n * want[i] * (1 - want[i])) + 1,
      `token ${i}: ${counts[i]} draws, expected ${n * want[i]}`,
    );
  }
  assert(rowSeed(1, 0, 0) !== rowSeed(1, 0, 1) && rowSeed(1, 0, 1) !== rowSeed(1, 1, 0), "row seeds collide");
});

Deno.test("sampler: the two-pass temperature/min-p draw equals walking the distribution with the same random number", () => {
  const big = new Rng(8).uniformArray(3000, -12, 6);
  for (const [temperature, minP] of [[1, 0], [0.6, 0], [1.7, 0.05]]) {
    const p = { ...DEFAULT_SAMPLING, temperature, minP };
    const a = new Rng(77), b = new Rng(77);
    for (let i = 0; i < 50; i++) {
      const fast = chooseToken(big, p, a);
      const d = samplingDistribution(big, p);
      const u = b.next();
      let acc = 0, want = d.ids[d.ids.length - 1];
      for (let j = 0; j < d.ids.length; j++) {
        if (u < (acc += d.probs[j])) {
          want = d.ids[j];
          break;
        }
      }
      assertEquals(fast.token, want, `T ${temperature} min-p ${minP} draw ${i}`);
      assertClose([fast.logprob], [logSoftmaxAt(big, want)], { atol: 1e-9 });
    }
  }
});
