import { assert, assertClose } from "../assert.ts";
import { type AdamWHyper, adamwRef } from "./adamw.ref.ts";
import { gradNormRef } from "./gradnorm.ref.ts";

const hp: AdamWHyper = { lr: 1e-2, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.1, step: 1 };

Deno.test("adamw reference: first step moves by lr*sign(g), decay is decoupled, skip changes nothing", () => {
  const p = [0.5, -0.25, 2];
  const g = [3, -1e-3, 0];
  const r = adamwRef(p, g, [0, 0, 0], [0, 0, 0], hp);
  // Step 1: mhat = g and vhat = g^2, so the Adam part is lr * g / (|g| + eps); g = 0 leaves decay only.
  const want = p.map((x, i) => x * (1 - hp.lr * hp.weightDecay) - (hp.lr * g[i]) / (Math.abs(g[i]) + hp.eps));
  assertClose(r.param, want, { atol: 1e-15, rtol: 1e-12, name: "adamw step 1" });
  assertClose(r.m, g.map((x) => 0.1 * x), { atol: 1e-15, rtol: 1e-12, name: "adamw m" });
  assertClose(r.v, g.map((x) => 0.001 * x * x), { atol: 1e-18, rtol: 1e-12, name: "adamw v" });
  const s = adamwRef(p, g, [1, 2, 3], [4, 5, 6], hp, 1, true);
  assertClose(s.param, p, { atol: 0, rtol: 0, name: "skipped param" });
  assertClose(s.v, [4, 5, 6], { atol: 0, rtol: 0, name: "skipped v" });
});

Deno.test("gradnorm reference: 3-4-12-13 norm, torch's clip factor, NaN and Inf flagged", () => {
  const r = gradNormRef([[3], [4, 12]], 6.5);
  assertClose([r.norm, r.clip], [13, 6.5 / (13 + 1e-6)], { atol: 0, rtol: 1e-15, name: "norm and clip" });
  assert(!r.nonFinite, "finite gradients flagged");
  assert(gradNormRef([[3], [4, 12]], 100).clip === 1, "clip above 1");
  assert(gradNormRef([[3], [4, 12]], 0).clip === 1, "maxNorm 0 must not clip");
  assert(gradNormRef([[1, NaN]], 1).nonFinite && gradNormRef([[-Infinity]], 1).nonFinite, "NaN/Inf not flagged");
  assert(gradNormRef([[1e300, 1e300]], 1).nonFinite, "overflowing sum not flagged");
});
