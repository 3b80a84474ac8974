import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { FocusScheduler, groupAdvantages, splitGroups } from "./advantages.ts";
import { Rng } from "./rng.ts";

Deno.test("groupAdvantages: mean-std matches hand-computed values (sample std, epsilon)", () => {
  // Group [1, 0, 0, 1]: mean 0.5, sample variance (4 * 0.25) / 3 = 1/3.
  const s = Math.sqrt(1 / 3);
  const a = groupAdvantages([[1, 0, 0, 1], [0.2, 0.2, 0.2, 0.2]], { mode: "mean-std", epsilon: 1e-4 });
  assertClose(a.advantages, [0.5 / (s + 1e-4), -0.5 / (s + 1e-4), -0.5 / (s + 1e-4), 0.5 / (s + 1e-4), 0, 0, 0, 0], {
    atol: 1e-12,
    rtol: 1e-12,
  });
  assertClose(a.mean, [0.5, 0.2], { atol: 1e-15 });
  assertClose(a.std, [s, 0], { atol: 1e-15 });
  assertEquals(Array.from(a.equal), [0, 1]);
  assertEquals(a.equalFraction, 0.5);
  assertEquals(Array.from(a.keep), [1, 1, 1, 1, 1, 1, 1, 1], "equal groups are kept unless dropEqualGroups");
  assertEquals(Array.from(a.group), [0, 0, 0, 0, 1, 1, 1, 1]);
});

Deno.test("groupAdvantages: population std and mean-only (Dr. GRPO)", () => {
  const g = [3, 1, 2];
  const pop = groupAdvantages([g], { mode: "mean-std", std: "population", epsilon: 0 });
  const sd = Math.sqrt(2 / 3);
  assertClose(pop.advantages, [1 / sd, -1 / sd, 0], { atol: 1e-12, rtol: 1e-12 });
  const dr = groupAdvantages([g], { mode: "mean" });
  assertClose(dr.advantages, [1, -1, 0], { atol: 0 });
});

Deno.test("groupAdvantages: standardised group has mean 0 and sample std ~1 on random rewards", () => {
  const rng = new Rng(5);
  const groups = Array.from({ length: 20 }, () => Float64Array.from({ length: 7 }, () => rng.normal()));
  const a = groupAdvantages(groups, { mode: "mean-std", epsilon: 0 });
  for (let g = 0; g < 20; g++) {
    const xs = Array.from(a.advantages.subarray(g * 7, g * 7 + 7));
    const m = xs.reduce((s, x) => s + x, 0) / 7;
    const v = xs.reduce((s, x) => s + (x - m) ** 2, 0) / 6;
    assert(Math.abs(m) < 1e-12 && Math.abs(v - 1) < 1e-12, `group ${g}: mean ${m} var ${v}`);
  }
});

Deno.test("groupAdvantages: dropEqualGroups, tolerance, variable group sizes, non-finite rewards", () => {
  const a = groupAdvantages([[1, 1], [0, 1e-9, 0], [0.5]], {
    mode: "mean-std",
    equalTolerance: 1e-6,
    dropEqualGroups: true,
  });
  assertEquals(Array.from(a.equal), [1, 1, 1]);
  assertEquals(Array.from(a.keep), [0, 0, 0, 0, 0, 0]);
  assertEquals(Array.from(a.advantages), [0, 0, 0, 0, 0, 0], "within tolerance: exactly zero, not (r - mean) / eps");
  assertEquals(a.equalFraction, 1);
  assertEquals(groupAdvantages([], { mode: "mean" }).equalFraction, 0);
  let threw = false;
  try {
    groupAdvantages([[0, NaN]], { mode: "mean" });
  } catch (e) {
    threw = e instanceof Error && /not finite/.test(e.message);
  }
  assert(threw, "NaN reward must be refused");
  assertEquals(splitGroups([1, 2, 3, 4], 2).map((g) => Array.from(g)), [[1, 2], [3, 4]]);
});

function simulate(
  s: FocusScheduler,
  steps: number,
  batch: number,
  solveRate: (id: string) => number,
  rng: Rng,
): string[][] {
  const out: string[][] = [];
  for (let t = 0; t < steps; t++) {
    const b = s.nextBatch(batch);
    out.push(b);
    for (const id of b) {
      let c = 0;
      for (let k = 0; k < 4; k++) if (rng.next() < solveRate(id)) c++;
      s.record(id, c, 4);
    }
  }
  return out;
}

Deno.test("FocusScheduler: epoch order covers every question once, batches are distinct", () => {
  const ids = Array.from({ length: 10 }, (_, i) => `q${i}`);
  const s = new FocusScheduler(ids, new Rng(1), { revisitFraction: 0 });
  const seen = [...s.nextBatch(4), ...s.nextBatch(4), ...s.nextBatch(2)];
  assertEquals([...seen].sort(), [...ids].sort());
  assertEquals(s.epoch, 1);
  const b = s.nextBatch(4);
  assertEquals(new Set(b).size, 4);
  assertEquals(s.epoch, 2);
});

Deno.test("FocusScheduler: always-solved questions are skipped after k visits, others stay", () => {
  const ids = Array.from({ length: 12 }, (_, i) => `q${i}`);
  const easy = new Set(["q0", "q1", "q2", "q3"]);
  const s = new FocusScheduler(ids, new Rng(2), { skipAfter: 2, revisitFraction: 0 });
  const batches = simulate(s, 30, 4, (id) => (easy.has(id) ? 1 : 0.5), new Rng(3));
  for (const id of easy) {
    assert(s.isMastered(id), `${id} should be mastered`);
    assertEquals(s.history(id)?.visits, 2, `${id} visited exactly skipAfter times`);
  }
  const late = batches.slice(10).flat();
  assert(late.every((id) => !easy.has(id)), "mastered questions never come back with recheckProb 0");
  assertEquals(s.activeIds().length, 12 - 4 - ids.filter((id) => !easy.has(id) && s.isMastered(id)).length);
});

Deno.test("FocusScheduler: sometimes-solved questions are revisited more often", () => {
  const ids = Array.from({ length: 40 }, (_, i) => `q${i}`);
  const medium = new Set(ids.slice(0, 5));
  const s = new FocusScheduler(ids, new Rng(4), { revisitFraction: 0.5 });
  // Never-solved questions are not "sometimes solved": they give equal groups, so no revisits.
  simulate(s, 40, 8, (id) => (medium.has(id) ? 0.5 : 0), new Rng(5));
  const visitsMedium = [...medium].map((id) => s.history(id)?.visits ?? 0);
  const visitsHard = ids.filter((id) => !medium.has(id)).map((id) => s.history(id)?.visits ?? 0);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  assert(mean(visitsMedium) > 3 * mean(visitsHard), `medium ${mean(visitsMedium)} vs hard ${mean(visitsHard)}`);
});

Deno.test("FocusScheduler: JSON round trip continues the same sequence; all mastered gives empty batches", () => {
  const ids = Array.from({ length: 15 }, (_, i) => `q${i}`);
  const a = new FocusScheduler(ids, new Rng(9), { revisitFraction: 0.3, recheckProb: 0.2 });
  simulate(a, 5, 4, (id) => (id < "q5" ? 1 : 0.4), new Rng(10));
  const saved = JSON.parse(JSON.stringify(a.toJSON()));
  const b = FocusScheduler.fromJSON(saved);
  const rate = (id: string) => (id < "q5" ? 1 : 0.4);
  assertEquals(simulate(b, 10, 4, rate, new Rng(11)), simulate(a, 10, 4, rate, new Rng(11)));
  assertEquals(a.toJSON(), b.toJSON());

  for (
    const bad of [null, {}, { ...saved, version: 2 }, { ...saved, rng: [0, 0, 0, 0] }, { ...saved, queue: ["nope"] }, {
      ...saved,
      history: { q1: { visits: "3" } },
    }]
  ) {
    let threw = false;
    try {
      FocusScheduler.fromJSON(bad);
    } catch (e) {
      threw = e instanceof Error && /fromJSON/.test(e.message);
    }
    assert(threw, `accepted ${JSON.stringify(bad).slice(0, 80)}`);
  }

  const c = new FocusScheduler(["x", "y"], new Rng(1), { skipAfter: 1, revisitFraction: 0 });
  for (const id of c.nextBatch(2)) c.record(id, 3, 3);
  assertEquals(c.nextBatch(2), []);
  const epochs = c.epoch;
  assertEquals(c.nextBatch(2), []);
  assertEquals(c.epoch, epochs, "no epochs burnt while nothing is active");
});
