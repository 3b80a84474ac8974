import { Rng } from "../../src/core/rng.ts";
import { embeddingBackwardRef, type EmbeddingDims, embeddingForwardRef } from "./embedding.ref.ts";
import { checkGradFd } from "./layer-fd.ts";

Deno.test("embedding reference: scatter-add backward matches finite differences of the gather", () => {
  const d: EmbeddingDims = { N: 9, C: 3, V: 5 };
  const rng = new Rng(61);
  const ids = Uint32Array.from([0, 2, 2, 4, 7, 0, 2, 1, 9]); // repeats, and ids >= V
  const table = rng.uniformArray(d.V * d.C);
  const dy = rng.uniformArray(d.N * d.C);
  const dtable = embeddingBackwardRef(ids, dy, d);
  const e = checkGradFd((t) => embeddingForwardRef(ids, t, d), table, dy, dtable, "embedding dtable");
  console.log(`embedding ref: max |dtable - fd| ${e.toExponential(2)}`);
});
