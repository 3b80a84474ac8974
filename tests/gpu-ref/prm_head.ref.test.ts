import { assertClose } from "../assert.ts";
import { Rng } from "../../src/core/rng.ts";
import { numericGrad } from "./layer-fd.ts";
import {
  prmBceRef,
  prmHeadBackwardRef,
  type PrmHeadDims,
  prmHeadForwardRef,
  sigmoid,
  softplus,
} from "./prm_head.ref.ts";

Deno.test("prm head reference: dh and dwb match central finite differences of the weighted BCE (soft label, unweighted row)", () => {
  const d: PrmHeadDims = { N: 5, C: 3 };
  const rng = new Rng(11);
  const h = Float64Array.from(rng.uniformArray(d.N * d.C, -2, 2));
  const wb = Float64Array.from(rng.uniformArray(d.C + 1, -2, 2));
  const labels = [1, 0, 0.3, 1, 0];
  const weights = [0.5, 1, 2, 0, 0.25];
  const loss = () => prmBceRef(prmHeadForwardRef(h, wb, d), labels, weights).loss.reduce((a, b) => a + b, 0);
  const { dz } = prmBceRef(prmHeadForwardRef(h, wb, d), labels, weights);
  const got = prmHeadBackwardRef(dz, h, wb, d);
  assertClose(got.dh, numericGrad(h, loss), { atol: 1e-8, rtol: 1e-6, name: "dh" });
  assertClose(got.dwb, numericGrad(wb, loss), { atol: 1e-8, rtol: 1e-6, name: "dwb" });
});

Deno.test("prm head reference: softplus and sigmoid agree with their definitions and stay finite at the extremes", () => {
  for (const x of [-3, -0.5, 0, 0.7, 4]) {
    assertClose([softplus(x), sigmoid(x)], [Math.log(1 + Math.exp(x)), 1 / (1 + Math.exp(-x))], {
      atol: 1e-12,
      rtol: 1e-12,
    });
  }
  assertClose([softplus(-800), softplus(800), sigmoid(-800), sigmoid(800)], [0, 800, 0, 1], { atol: 1e-300 });
});
