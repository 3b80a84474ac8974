import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { dequantizeQ4, fakeQuantize, quantErrorReport, quantizeQ4 } from "./quant.ts";
import { referenceLogprobs } from "./reference.ts";
import type { Tensor } from "./tensor.ts";
import { makeTinyModel } from "./tiny.ts";

function gaussian(seed: number, N: number, K: number): Tensor {
  const rng = new Rng(seed);
  const data = new Float32Array(N * K);
  for (let i = 0; i < data.length; i++) data[i] = 0.02 * rng.normal();
  // A few outliers, as real checkpoints have.
  for (let i = 0; i < 8; i++) data[rng.int(data.length)] = 0.3 * (rng.next() - 0.5);
  return { shape: [N, K], data };
}

/** Decodes MatMulNBits tensors straight from onnxruntime's description, counting nibbles in one flat stream. */
function decodeFromSpec(
  B: Uint8Array,
  scales: Float32Array,
  zp: Uint8Array | null,
  N: number,
  K: number,
): Float32Array {
  const nb = Math.ceil(K / 32);
  const nibble = (bytes: Uint8Array, i: number) => (i % 2 === 0 ? bytes[i >> 1] & 0x0f : bytes[i >> 1] >> 4);
  const out = new Float32Array(N * K);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const blk = Math.floor(k / 32);
      const code = nibble(B, n * nb * 32 + k); // blocks of a row are contiguous, 32 codes each
      const z = zp ? nibble(zp, n * 2 * Math.ceil(nb / 2) + blk) : 8;
      out[n * K + k] = (code - z) * scales[n * nb + blk];
    }
  }
  return out;
}

Deno.test("q4: a 1x3 weight quantises to the codes worked out by hand", () => {
  const q = quantizeQ4({ shape: [1, 3], data: Float32Array.from([-1, 0, 2]) });
  // min -1, max 2: scale 3/15 = 0.2, zp = round(1/0.2) = 5; codes 0, 5, 15; padding codes = zp.
  assertEquals(q.scales, Float32Array.from([0.2]));
  assertEquals(q.zeroPoints, Uint8Array.from([5]));
  assertEquals(q.packed.length, 16);
  assertEquals(Array.from(q.packed.subarray(0, 3)), [0x50, 0x5f, 0x55]);
  assertClose(dequantizeQ4(q).data, [-1, 0, 2], { atol: 1e-6, rtol: 0 });
});

Deno.test("q4: layout matches the MatMulNBits description (odd N, K not a multiple of 32, odd block count)", () => {
  for (const [N, K] of [[5, 70], [3, 96], [7, 33]]) {
    const w = gaussian(N * K, N, K);
    for (const symmetric of [false, true]) {
      const q = quantizeQ4(w, { symmetric });
      const nb = Math.ceil(K / 32);
      assertEquals([q.packed.length, q.scales.length, q.zeroPoints?.length ?? null], [
        N * nb * 16,
        N * nb,
        symmetric ? null : N * Math.ceil(nb / 2),
      ]);
      assertEquals(
        dequantizeQ4(q).data,
        decodeFromSpec(q.packed, q.scales, q.zeroPoints, N, K),
        `N ${N} K ${K} sym ${symmetric}`,
      );
    }
  }
});

Deno.test("q4: error within one scale step per element (half a step when symmetric), RMS error as measured", () => {
  const w = gaussian(1, 64, 200);
  const K = 200;
  const nb = Math.ceil(K / 32);
  for (const symmetric of [false, true]) {
    const q = quantizeQ4(w, { symmetric });
    const d = dequantizeQ4(q).data;
    for (let n = 0; n < 64; n++) {
      for (let k = 0; k < K; k++) {
        const s = q.scales[n * nb + Math.floor(k / 32)];
        // Asymmetric: rounding the zero point can push the top code past 15 by half a step.
        const bound = symmetric ? 0.5 * s : s;
        const err = Math.abs(w.data[n * K + k] - d[n * K + k]);
        assert(err <= bound * (1 + 1e-6) + 1e-12, `element (${n}, ${k}): |err| ${err} > ${bound}`);
      }
    }
  }
  const [asym] = quantErrorReport(new Map([["lm_head.weight", w]]), "q4");
  const [sym] = quantErrorReport(new Map([["lm_head.weight", w]]), "q4sym");
  const [h] = quantErrorReport(new Map([["lm_head.weight", w]]), "f16");
  console.log(
    `gaussian 64x200 with outliers: q4 asym rmsRel ${asym.rmsRel.toFixed(4)} maxAbs ${
      asym.maxAbs.toExponential(2)
    }; q4 sym rmsRel ${sym.rmsRel.toFixed(4)}; f16 rmsRel ${h.rmsRel.toExponential(2)}`,
  );
  // Uniform rounding error of a 16-level grid over a block's range gives ~0.08-0.12 for Gaussian blocks.
  assert(asym.rmsRel < 0.15 && asym.rmsRel > 0.02, `q4 rmsRel ${asym.rmsRel}`);
  assert(h.rmsRel < 2 ** -11, `f16 rmsRel ${h.rmsRel}`);
});

Deno.test("q4: per-layer report on a tiny model and the effect on log-probabilities", () => {
  const m = makeTinyModel("qwen2", { seed: 21, hidden: 64, heads: 4, kvHeads: 2, intermediate: 96 });
  const report = quantErrorReport(m.weights, "q4");
  assertEquals(report.length, 7 * m.config.numLayers, "all seven projections of every layer (lm_head is tied)");
  for (const r of report) {
    console.log(`  ${r.name} [${r.shape}] maxAbs ${r.maxAbs.toExponential(2)} rmsRel ${r.rmsRel.toFixed(4)}`);
  }
  const rng = new Rng(22);
  const ids = Array.from({ length: 10 }, () => rng.int(m.config.vocabSize));
  const [base] = referenceLogprobs(m.config, m.weights, [ids]);
  const delta: Record<string, number> = {};
  for (const mode of ["f16", "q4"] as const) {
    const [lp] = referenceLogprobs(m.config, fakeQuantize(m.weights, mode), [ids]);
    delta[mode] = Math.max(...lp.map((v, i) => Math.abs(v - base[i])));
    console.log(`  ${mode}: max |delta logprob| over ${lp.length} tokens = ${delta[mode].toExponential(2)}`);
  }
  // Random tiny models have peaky logits, so q4's effect is large here; the measurement is what
  // matters. f16 keeps 11 bits against q4's 4, so its effect must be far smaller.
  assert(delta.f16 > 0 && delta.f16 < 1e-2, `f16 delta ${delta.f16}`);
  assert(delta.q4 > 20 * delta.f16 && Number.isFinite(delta.q4), `q4 delta ${delta.q4}`);
});
