import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { prmFigures, rocAuc } from "./prm-eval.ts";

Deno.test("rocAuc: perfect, reversed, ties and a missing class", () => {
  assertEquals(rocAuc([0.1, 0.4, 0.8, 0.9], [0, 0, 1, 1]), 1);
  assertEquals(rocAuc([0.9, 0.8, 0.1], [0, 0, 1]), 0);
  assertEquals(rocAuc([0.5, 0.5, 0.5, 0.5], [0, 1, 0, 1]), 0.5);
  // Pairs (pos, neg): (0.7 > 0.3) yes, (0.7 > 0.7) half, (0.2 > 0.3) no, (0.2 > 0.7) no -> 1.5 / 4.
  assertEquals(rocAuc([0.7, 0.3, 0.2, 0.7], [1, 0, 1, 0]), 0.375);
  assert(Number.isNaN(rocAuc([0.1, 0.2], [1, 1])), "one class");
});

Deno.test("prmFigures: accuracy at 0.5, BCE and the first error found", () => {
  const f = prmFigures([
    { scores: [0.9, 0.8, 0.2], labels: [1, 1, 0] }, // first error found at 2
    { scores: [0.4, 0.9], labels: [1, 0] }, // scored under 0.5 first at 0, labelled at 1
    { scores: [0.7], labels: [1] },
  ]);
  assertEquals([f.chains, f.steps, f.accuracy, f.firstError], [3, 6, 4 / 6, 0.5]);
  const bce = -(Math.log(0.9) + Math.log(0.8) + Math.log(0.8) + Math.log(0.4) + Math.log(0.1) + Math.log(0.7)) / 6;
  assertClose([f.bce], [bce], { atol: 1e-12 });
});
