import { assert, assertEquals } from "../../tests/assert.ts";
import { labelQuestions, type RolloutEnv } from "./prm-label.ts";
import { Rng } from "./rng.ts";

// A toy world: an answer is three steps and a final statement, "g;b;g;f" — a step is good (g) or
// bad (b), and the answer reaches the gold exactly when every step is good. A completion from a
// prefix draws the remaining steps good with probability `p`, so after a bad step nothing can
// reach the gold: the true first error is the first b.
const STEPS = 3;
function world(p: number, seed: number): RolloutEnv & { calls: number[] } {
  const calls: number[] = [];
  const draw = (rng: Rng, from: number) => {
    const parts: string[] = [];
    for (let i = from; i < STEPS; i++) parts.push(rng.next() < p ? "g" : "b");
    return parts;
  };
  return {
    calls,
    async sample(requests, n, wave) {
      calls.push(requests.length * n);
      // A step's rollouts name the chain they were cut from (the sampler continues its tokens); whole answers none.
      for (const r of requests) {
        assert(
          r.prefix === ""
            ? r.answer === undefined
            : r.answer !== undefined && r.answer.startsWith(r.prefix) && r.answer.length > r.prefix.length,
          JSON.stringify(r),
        );
      }
      return requests.map((r, i) =>
        Array.from({ length: n }, (_, j) => {
          const rng = new Rng((seed * 1_000_003 + wave * 7919 + i * 131 + j) >>> 0);
          const have = r.prefix === "" ? 0 : r.prefix.split(";").length;
          const rest = [...draw(rng, have), "f"].join(";");
          return r.prefix === "" ? rest : `;${rest}`;
        })
      );
    },
    async judge(_q, answers) {
      return answers.map((a) => a === "g;g;g;f");
    },
    steps(answer) {
      const ends: number[] = [];
      let at = 0;
      for (const part of answer.split(";")) {
        at += part.length;
        ends.push(at);
        at += 1;
      }
      return { ends, lastIsFinal: answer.endsWith("f") };
    },
  };
}

const trueFirstError = (text: string) => {
  const k = text.split(";").findIndex((s) => s === "b");
  return k < 0 ? (text.endsWith("f") ? null : STEPS) : k;
};

Deno.test("labelQuestions: labels are sound (a positive step can reach the gold), first errors never later than the true one, correct chains all positive, budget kept", async () => {
  const env = world(0.6, 1);
  const r = await labelQuestions(6, env, { chains: 4, rollouts: 4, budget: 24, maxSteps: 8 });
  assert(r.chains.some((c) => c.source === "rollout"), "mixed outcomes branch into new chains");
  assert(r.chains.some((c) => c.firstError !== null && c.firstError > 0), "some first errors lie past step 0");
  for (const c of r.chains) {
    const t = trueFirstError(c.completion);
    if (c.correct) {
      assertEquals(c.labels, [1, 1, 1, 1]);
      assert(c.complete && c.firstError === null, "a correct chain is complete");
      continue;
    }
    assert(t !== null, `${c.completion} is wrong`);
    c.labels.forEach((y, k) => {
      if (y === 1) assert(k < t, `${c.completion}: step ${k} labelled correct at or after the first b`);
    });
    if (c.firstError !== null) {
      assert(c.firstError <= t, `${c.completion}: first error ${c.firstError} after the true one ${t}`);
      assertEquals(c.labels.length, c.firstError + 1);
      assert(c.labels.slice(0, -1).every((y) => y === 1) && c.labels.at(-1) === 0, `labels ${c.labels}`);
    }
    if (c.source === "rollout") assert(c.prefixSteps >= 1, "a branch inherits its prefix");
  }
  r.rollouts.forEach((n) => assert(n <= 24, `budget ${n}`));
  // The search is deterministic for a seeded world.
  const again = await labelQuestions(6, world(0.6, 1), { chains: 4, rollouts: 4, budget: 24, maxSteps: 8 });
  assertEquals(again.chains.map((c) => [c.completion, c.labels]), r.chains.map((c) => [c.completion, c.labels]));
});

Deno.test("labelQuestions: with enough rollouts the first errors are the true ones; with no budget wrong chains stay unresolved", async () => {
  const sure = await labelQuestions(4, world(0.9, 2), { chains: 6, rollouts: 64, budget: 10_000, maxSteps: 8 });
  for (const c of sure.chains) if (!c.correct) assertEquals(c.firstError, trueFirstError(c.completion), c.completion);
  const none = await labelQuestions(4, world(0.5, 3), { chains: 4, rollouts: 4, budget: 0, maxSteps: 8 });
  assert(none.rollouts.every((n) => n === 0), "no rollout without budget");
  for (const c of none.chains) {
    if (c.correct) continue;
    assert(!c.complete && c.labels.length === 0, `${c.completion}: unresolved, got ${c.labels}`);
  }
  assertEquals(none.waves, 1);
});

Deno.test("labelQuestions: a wrong chain whose steps all pass before its final statement has the first error there, without rollouts; maxSteps stops probing", async () => {
  // Every whole answer is "g;g;g;x": right steps, wrong final statement.
  const env: RolloutEnv = {
    async sample(requests, n) {
      // From a prefix of m good steps: the remaining good steps and the right final statement.
      return requests.map((r) =>
        Array.from(
          { length: n },
          () => (r.prefix === ""
            ? "g;g;g;x"
            : ";" + [...new Array(STEPS - r.prefix.split(";").length).fill("g"), "f"].join(";")),
        )
      );
    },
    async judge(_q, answers) {
      return answers.map((a) => a === "g;g;g;f");
    },
    steps: (a) => ({ ...world(1, 0).steps(a), lastIsFinal: true }),
  };
  const r = await labelQuestions(1, env, { chains: 1, rollouts: 2, budget: 100, maxSteps: 8 });
  const root = r.chains[0];
  assertEquals([root.completion, root.labels, root.firstError, root.rates], ["g;g;g;x", [1, 1, 1, 0], 3, [
    1,
    1,
    1,
    null,
  ]]);
  const short = await labelQuestions(1, env, { chains: 1, rollouts: 2, budget: 100, maxSteps: 2 });
  assertEquals([short.chains[0].labels, short.chains[0].complete], [[1, 1], false]);
});
