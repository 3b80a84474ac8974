import { assertClose } from "../assert.ts";
import { Rng } from "../../src/core/rng.ts";
import { numericGrad } from "./layer-fd.ts";
import { attentionBackwardRef, type AttentionDims, attentionForwardRef } from "./attention.ref.ts";

Deno.test("attention reference: backward matches central finite differences of the forward (GQA, padding)", () => {
  const a: AttentionDims = { B: 2, T: 5, H: 4, Hkv: 2, D: 3 };
  const rng = new Rng(7);
  const q = Float64Array.from(rng.uniformArray(a.B * a.T * a.H * a.D, -2, 2));
  const k = Float64Array.from(rng.uniformArray(a.B * a.T * a.Hkv * a.D, -2, 2));
  const v = Float64Array.from(rng.uniformArray(a.B * a.T * a.Hkv * a.D));
  const dout = rng.uniformArray(q.length);
  const lens = [5, 3];
  const loss = () => {
    const { o } = attentionForwardRef(q, k, v, lens, a);
    let s = 0;
    for (let i = 0; i < o.length; i++) s += dout[i] * o[i];
    return s;
  };
  const g = attentionBackwardRef(q, k, v, lens, dout, a);
  assertClose(g.dq, numericGrad(q, loss), { atol: 1e-8, rtol: 1e-6, name: "dq" });
  assertClose(g.dk, numericGrad(k, loss), { atol: 1e-8, rtol: 1e-6, name: "dk" });
  assertClose(g.dv, numericGrad(v, loss), { atol: 1e-8, rtol: 1e-6, name: "dv" });
});

Deno.test("attention reference: softmax rows sum to one and lse is consistent", () => {
  const a: AttentionDims = { B: 1, T: 4, H: 1, Hkv: 1, D: 2 };
  const q = new Float64Array([0, 0, 1, 0, 0, 1, 1, 1]);
  const k = new Float64Array([0, 0, 1, 0, 0, 1, 2, 2]);
  const v = new Float64Array([1, 0, 0, 1, 0, 0, 1, 1]); // o's first coordinate is p_0 + p_3
  const { o, lse } = attentionForwardRef(q, k, v, [4], a);
  const s = 1 / Math.sqrt(2);
  // Row 1: q = (1, 0) scores (0, s); row 3: q = (1, 1) scores (0, s, s, 4s).
  assertClose([lse[1], o[2]], [Math.log(1 + Math.exp(s)), 1 / (1 + Math.exp(s))], { atol: 1e-12, name: "row 1" });
  const z3 = 1 + 2 * Math.exp(s) + Math.exp(4 * s);
  assertClose([lse[3], o[6], o[7]], [Math.log(z3), (1 + Math.exp(4 * s)) / z3, (Math.exp(s) + Math.exp(4 * s)) / z3], {
    atol: 1e-12,
    name: "row 3",
  });
});
