import { assert, assertClose } from "../../../tests/assert.ts";
import { AGGREGATIONS } from "../../core/grpo.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeGrpoLoss, grpoResult } from "./grpo_loss.ts";
import { aggregationWeights, entropyMean, grpoLoss } from "../../../tests/gpu-ref/grpo_loss.ref.ts";

const gpu = await requestGpu();

Deno.test("grpo_loss: gradient, loss parts and metrics against src/core/grpo.ts, every aggregation, with and without KL", async () => {
  const { device } = gpu;
  let seed = 1;
  for (const [S, T] of [[1, 1], [3, 7], [17, 45], [5, 300]]) {
    for (const aggregation of AGGREGATIONS) {
      for (const beta of [0, 0.05]) {
        const rng = new Rng(seed++);
        const n = S * T;
        const logpOld = Float32Array.from({ length: n }, () => -3 * rng.next());
        // New log-probs within +-0.5 of old, so both clips bite on some tokens.
        const logpNew = logpOld.map((x) => x + (rng.next() - 0.5));
        const logpRef = logpOld.map((x) => x + 0.3 * (rng.next() - 0.5));
        const mask = Float32Array.from({ length: n }, () => (rng.next() < 0.8 ? 1 : 0));
        const advS = Float32Array.from({ length: S }, () => 2 * rng.next() - 1);
        const adv = Float32Array.from({ length: n }, (_, i) => advS[Math.floor(i / T)]);
        const ent = Float32Array.from({ length: n }, () => 3 * rng.next());
        const w = Float32Array.from(aggregationWeights(S, T, mask, aggregation));
        const b = {
          logpNew: storageBuffer(device, "new", logpNew),
          logpOld: storageBuffer(device, "old", logpOld),
          logpRef: storageBuffer(device, "ref", logpRef),
          mask: storageBuffer(device, "mask", mask),
          weight: storageBuffer(device, "w", w),
          adv: storageBuffer(device, "adv", adv),
          entropy: storageBuffer(device, "ent", ent),
          grad: storageBuffer(device, "grad", n * 4),
          stats: storageBuffer(device, "grpo-stats", 12 * 4),
        };
        poison(device, b.grad);
        poison(device, b.stats);
        const opts = { epsLow: 0.2, epsHigh: 0.28, beta, aggregation };
        const enc = device.createCommandEncoder();
        await encodeGrpoLoss(device, enc, b, { N: n, ...opts });
        device.queue.submit([enc.finish()]);
        const want = grpoLoss({ S, T, logpNew, logpOld, logpRef, mask, advantages: advS }, opts);
        const got = grpoResult(await readF32(device, b.stats, 12), beta);
        const grad = await readF32(device, b.grad, n);
        const name = `S${S} T${T} ${aggregation} beta ${beta}`;
        assertClose(grad, want.grad, { atol: 1e-6, rtol: 1e-4, name: `${name} grad` });
        assertClose([got.loss, got.pgLoss, got.klLoss], [want.loss, want.pgLoss, want.klLoss], {
          atol: 1e-5,
          rtol: 1e-4,
          name: `${name} loss`,
        });
        const m = want.metrics, g = got.metrics;
        assertClose(
          [
            g.tokens,
            g.clipLowFrac,
            g.clipHighFrac,
            g.clipFrac,
            g.approxKl,
            g.klRef,
            g.ratioMean,
            g.ratioMin,
            g.ratioMax,
            got.entropy,
          ],
          [
            m.tokens,
            m.clipLowFrac,
            m.clipHighFrac,
            m.clipFrac,
            m.approxKl,
            m.klRef,
            m.ratioMean,
            m.ratioMin,
            m.ratioMax,
            entropyMean(ent, mask),
          ],
          { atol: 1e-5, rtol: 1e-4, name: `${name} metrics` },
        );
        if (n > 100) assert(m.clipLowFrac > 0 && m.clipHighFrac > 0, `${name}: both clips active somewhere`);
        for (const x of Object.values(b)) x.destroy();
      }
    }
  }
});
