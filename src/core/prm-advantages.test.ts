import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { perStepNormAdvantages, prmWeightedAdvantages } from "./prm-advantages.ts";
import { tokenSteps } from "./prm-steps.ts";

const sum = (x: ArrayLike<number>) => Array.from(x).reduce((a, b) => a + b, 0);

Deno.test("prmWeightedAdvantages: a positive chain's credit goes to its well-scored steps, a negative chain's blame to its badly scored ones; the token sum stays A*n", () => {
  const steps = tokenSteps(10, [2, 5, 9]); // 3, 3 and 4 tokens
  const scores = [0.9, 0.2, 0.6];
  const pos = prmWeightedAdvantages(1.5, scores, steps);
  assertClose([sum(pos)], [15], { atol: 1e-12 });
  assert(pos[0] > pos[9] && pos[9] > pos[4], `good steps get more: ${Array.from(pos)}`);
  // u = s: A * s_j * n / (3*0.9 + 3*0.2 + 4*0.6) = 1.5 * 0.9 * 10 / 5.7
  assertClose([pos[0]], [(1.5 * 0.9 * 10) / 5.7], { atol: 1e-12 });
  const neg = prmWeightedAdvantages(-2, scores, steps);
  assertClose([sum(neg)], [-20], { atol: 1e-12 });
  assert(neg[4] < neg[9] && neg[9] < neg[0], `bad steps take more blame: ${Array.from(neg)}`);
  assertClose([neg[4]], [(-2 * 0.8 * 10) / (3 * 0.1 + 3 * 0.8 + 4 * 0.4)], { atol: 1e-12 });
});

Deno.test("prmWeightedAdvantages: uniform where nothing can be shared (A = 0, equal scores, no steps, all-zero weights)", () => {
  const steps = tokenSteps(4, [1, 3]);
  assertEquals(Array.from(prmWeightedAdvantages(0, [0.3, 0.9], steps)), [0, 0, 0, 0]);
  assertClose(prmWeightedAdvantages(2, [0.4, 0.4], steps), [2, 2, 2, 2], { atol: 1e-12 });
  assertEquals(Array.from(prmWeightedAdvantages(2, [], tokenSteps(3, []))), [2, 2, 2]);
  assertEquals(Array.from(prmWeightedAdvantages(2, [0, 0], steps)), [2, 2, 2, 2]);
  let threw = false;
  try {
    prmWeightedAdvantages(1, [1.2], tokenSteps(2, [1]));
  } catch {
    threw = true;
  }
  assert(threw, "a score outside [0, 1] is refused");
});

Deno.test("perStepNormAdvantages: step rewards normalised over the group, each token sums its own and the later steps, plus the outcome advantage", () => {
  const a = { stepRewards: [0.8, 0.4], tokenStep: tokenSteps(4, [1, 3]), outcomeAdvantage: 0.5 };
  const b = { stepRewards: [0.2], tokenStep: tokenSteps(2, [1]), outcomeAdvantage: -0.5 };
  const [ga, gb] = perStepNormAdvantages([a, b]);
  const all = [0.8, 0.4, 0.2];
  const std = Math.sqrt(all.reduce((s, r) => s + (r - 1.4 / 3) ** 2, 0) / 2);
  const n = all.map((r) => (r - 1.4 / 3) / (std + 1e-6));
  assertClose(ga, [0.5 + n[0] + n[1], 0.5 + n[0] + n[1], 0.5 + n[1], 0.5 + n[1]], { atol: 1e-12 });
  assertClose(gb, [-0.5 + n[2], -0.5 + n[2]], { atol: 1e-12 });
  // Equal step rewards carry no process signal: the outcome advantage alone.
  const [eq] = perStepNormAdvantages([{ ...a, stepRewards: [0.5, 0.5] }, { ...b, stepRewards: [0.5] }]);
  assertClose(eq, [0.5, 0.5, 0.5, 0.5], { atol: 1e-12 });
});
