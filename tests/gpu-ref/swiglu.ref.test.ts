import { assert } from "../assert.ts";
import { Rng } from "../../src/core/rng.ts";
import { checkGradFd } from "./layer-fd.ts";
import { swigluBackwardRef, swigluForwardRef } from "./swiglu.ref.ts";

Deno.test("swiglu reference: dgate and dup match central finite differences of the forward", () => {
  const rng = new Rng(41);
  const gate = rng.uniformArray(40, -8, 8);
  const up = rng.uniformArray(40, -2, 2);
  const dh = rng.uniformArray(40);
  const { dgate, dup } = swigluBackwardRef(dh, gate, up);
  const eg = checkGradFd((g) => swigluForwardRef(g, up), gate, dh, dgate, "swiglu dgate");
  const eu = checkGradFd((u) => swigluForwardRef(gate, u), up, dh, dup, "swiglu dup");
  console.log(`swiglu ref: max |dgate - fd| ${eg.toExponential(2)}, max |dup - fd| ${eu.toExponential(2)}`);
});

Deno.test("swiglu reference: finite for extreme gates", () => {
  const gate = [-1e30, -1000, -88.8, 88.8, 1000, 1e30];
  const up = gate.map(() => 1);
  const h = swigluForwardRef(gate, up);
  const { dgate, dup } = swigluBackwardRef(up, gate, up);
  for (const v of [...h, ...dgate, ...dup]) assert(Number.isFinite(v), `non-finite ${v}`);
});
