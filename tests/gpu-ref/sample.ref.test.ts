// The float64 reference of the GPU token choice keeps what the CPU sampler keeps, and its draw
// follows the distribution it keeps.
import { assert, assertEquals } from "../assert.ts";
import { Rng } from "../../src/core/rng.ts";
import { samplingDistribution } from "../../src/model/sampler.ts";
import { chooseRef, drawUniform, keptIds } from "./sample.ref.ts";

const SETTINGS = [
  { temperature: 1, topK: 0, topP: 1, minP: 0 },
  { temperature: 0.7, topK: 5, topP: 1, minP: 0 },
  { temperature: 1.3, topK: 0, topP: 0.9, minP: 0 },
  { temperature: 1, topK: 0, topP: 1, minP: 0.05 },
  { temperature: 0.8, topK: 20, topP: 0.8, minP: 0.02 },
  { temperature: 0, topK: 0, topP: 1, minP: 0 },
  { temperature: 1, topK: 1, topP: 1, minP: 0 },
];

Deno.test("sample.ref: the kept tokens are samplingDistribution's (ties at the boundaries included)", () => {
  const rng = new Rng(5);
  let n = 0;
  for (const V of [1, 7, 64, 1000]) {
    for (const c of SETTINGS) {
      for (let rep = 0; rep < 4; rep++) {
        // Quantised logits (steps of 1/8) make ties at the top-k and top-p boundaries common.
        const logits = Float32Array.from({ length: V }, () => Math.round(rng.normal() * 24) / 8);
        const want = samplingDistribution(logits, c).ids.sort((a, b) => a - b);
        assertEquals(keptIds(logits, c), want, `V ${V} ${JSON.stringify(c)}`);
        n++;
      }
    }
  }
  assert(n === 4 * SETTINGS.length * 4);
});

Deno.test("sample.ref: the draw's uniform is deterministic and in [0, 1); frequencies follow the kept distribution", () => {
  assertEquals(drawUniform(7, 3), drawUniform(7, 3));
  assert(drawUniform(7, 3) !== drawUniform(7, 4) && drawUniform(7, 3) !== drawUniform(8, 3));
  const logits = Float32Array.of(2, 1, 0.5, -1, 3, 0, 0.5);
  const c = { temperature: 1, topK: 0, topP: 0.95, minP: 0 };
  const dist = samplingDistribution(logits, c);
  const counts = new Map<number, number>();
  const N = 40000;
  for (let i = 0; i < N; i++) {
    const u = drawUniform(11, i);
    assert(u >= 0 && u < 1);
    const { token } = chooseRef(logits, c, 11, i);
    counts.set(token, (counts.get(token) ?? 0) + 1);
  }
  for (const [i, id] of dist.ids.entries()) {
    const f = (counts.get(id) ?? 0) / N;
    assert(
      Math.abs(f - dist.probs[i]) < 0.01,
      `token ${id}: frequency ${f.toFixed(4)}, probability ${dist.probs[i].toFixed(4)}`,
    );
  }
  assertEquals([...counts.keys()].filter((k) => !dist.ids.includes(k)), []);
});
