import { assertClose } from "../assert.ts";
import { Rng } from "../../src/core/rng.ts";
import { checkGradFd } from "./layer-fd.ts";
import { defaultInvFreq, type RopeDims, ropeRef } from "./rope.ref.ts";

Deno.test("rope reference: backward matches central finite differences of the forward", () => {
  const d: RopeDims = { N: 5, H: 3, D: 8 };
  const rng = new Rng(21);
  const x = rng.uniformArray(d.N * d.H * d.D);
  const dy = rng.uniformArray(d.N * d.H * d.D);
  const pos = Uint32Array.from({ length: d.N }, () => rng.int(5000));
  const invFreq = defaultInvFreq(d.D, 10000);
  const dx = ropeRef(dy, pos, invFreq, d, true);
  const e = checkGradFd((xx) => ropeRef(xx, pos, invFreq, d), x, dy, dx, "rope dx");
  console.log(`rope ref: max |dx - fd| ${e.toExponential(2)}`);
});

Deno.test("rope reference: backward undoes forward, position 0 is the identity", () => {
  const d: RopeDims = { N: 4, H: 2, D: 6 };
  const rng = new Rng(22);
  const x = rng.uniformArray(d.N * d.H * d.D);
  const pos = Uint32Array.from([0, 1, 77, 4095]);
  const invFreq = defaultInvFreq(d.D, 1e6);
  const y = ropeRef(x, pos, invFreq, d);
  assertClose(ropeRef(y, pos, invFreq, d, true), x, { atol: 1e-12, rtol: 0, name: "rope round trip" });
  assertClose(y.subarray(0, d.H * d.D), x.subarray(0, d.H * d.D), { atol: 0, rtol: 0, name: "rope at position 0" });
});
