import { assertClose } from "../assert.ts";
import { Rng } from "../../src/core/rng.ts";
import { numericGrad } from "./layer-fd.ts";
import { lmheadBackwardRef, type LmHeadDims, lmheadForwardRef } from "./lmhead.ref.ts";

Deno.test("lmhead reference: dh and dW match central finite differences (logp and entropy terms, ignored row, logit scale)", () => {
  const d: LmHeadDims = { N: 4, C: 3, V: 7 };
  const rng = new Rng(3);
  const h = Float64Array.from(rng.uniformArray(d.N * d.C, -2, 2));
  const w = Float64Array.from(rng.uniformArray(d.V * d.C, -2, 2));
  const targets = [0, 6, 3, 0xffffffff];
  const g = rng.uniformArray(d.N);
  const gEnt = rng.uniformArray(d.N);
  const scale = 0.8;
  const loss = () => {
    const r = lmheadForwardRef(h, w, targets, d, scale);
    let s = 0;
    for (let n = 0; n < d.N; n++) s += g[n] * r.logp[n] + gEnt[n] * r.entropy[n];
    return s;
  };
  const got = lmheadBackwardRef(h, w, targets, g, gEnt, d, scale);
  assertClose(got.dh, numericGrad(h, loss), { atol: 1e-8, rtol: 1e-6, name: "dh" });
  assertClose(got.dw, numericGrad(w, loss), { atol: 1e-8, rtol: 1e-6, name: "dW" });
});

Deno.test("lmhead reference: uniform logits give lse log V, entropy log V, logp -log V", () => {
  const d: LmHeadDims = { N: 1, C: 2, V: 5 };
  const w = new Float64Array(d.V * d.C).fill(0.5);
  const r = lmheadForwardRef([1, -3], w, [2], d);
  assertClose([r.lse[0] + 1, r.entropy[0], r.logp[0]], [Math.log(5), Math.log(5), -Math.log(5)], { atol: 1e-12 });
});
