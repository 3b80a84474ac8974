// The GPU token choice against its float64 reference: the same token wherever float32 sums cannot
// decide otherwise, the same log-probability to float32 rounding, counters advanced, and the same
// outputs for the same seeds and counters.
import { assert, assertClose, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { readBuffer, requestGpu, storageBuffer } from "../device.ts";
import { type ChoiceParams, TokenChooser } from "./sample.ts";
import { chooseRef } from "../../../tests/gpu-ref/sample.ref.ts";

const gpu = await requestGpu();
/** Boundaries closer than this (relative) to a float32 sum are skipped: measured, the GPU agrees to 1e-7. */
const EPS = 1e-6;

const SETTINGS: ChoiceParams[] = [
  { temperature: 0, topK: 0, topP: 1, minP: 0 },
  { temperature: 1, topK: 0, topP: 1, minP: 0 },
  { temperature: 0.6, topK: 0, topP: 1, minP: 0 },
  { temperature: 1, topK: 7, topP: 1, minP: 0 },
  { temperature: 1.2, topK: 0, topP: 0.9, minP: 0 },
  { temperature: 1, topK: 0, topP: 1, minP: 0.05 },
  { temperature: 0.9, topK: 40, topP: 0.7, minP: 0.01 },
  { temperature: 1, topK: 1, topP: 1, minP: 0 },
];

async function run(
  device: GPUDevice,
  logits: Float32Array,
  R: number,
  V: number,
  src: number[],
  seeds: number[],
  counters: number[],
  c: ChoiceParams,
) {
  const B = src.length;
  const bufs = {
    logits: storageBuffer(device, "logits", logits),
    src: storageBuffer(device, "src", Uint32Array.from(src)),
    seeds: storageBuffer(device, "seeds", Uint32Array.from(seeds)),
    counters: storageBuffer(device, "counters", Uint32Array.from(counters)),
    out: storageBuffer(device, "out", new Uint32Array(2 * B).fill(0xffffffff)), // poisoned
  };
  const chooser = await TokenChooser.create(device, bufs, B, V, V, c);
  const enc = device.createCommandEncoder({ label: "sample-test" });
  chooser.encode(enc);
  device.queue.submit([enc.finish()]);
  const out = new Uint32Array(await readBuffer(device, bufs.out, 8 * B));
  const after = new Uint32Array(await readBuffer(device, bufs.counters, 4 * B));
  chooser.destroy();
  for (const b of Object.values(bufs)) b.destroy();
  return {
    tokens: Array.from({ length: B }, (_, b) => out[2 * b]),
    logprobs: Array.from({ length: B }, (_, b) => new Float32Array(out.buffer, 8 * b + 4, 1)[0]),
    after: Array.from(after),
  };
}

Deno.test("sample: GPU token choice = float64 reference (tokens, log-probabilities, counters), odd vocabularies, ties", async () => {
  const { device } = gpu;
  const rng = new Rng(2024);
  let checked = 0, ambiguous = 0, maxErr = 0;
  for (const V of [1, 5, 300, 8219, 151936]) {
    const R = 3;
    for (const [si, c] of SETTINGS.entries()) {
      if (V === 151936 && si % 2 === 1) continue; // the largest vocabulary on half the settings (lavapipe time)
      // Rows: spread logits (a peaked and a flat row) and quantised ones with many exact ties.
      const logits = new Float32Array(R * V);
      for (let v = 0; v < V; v++) {
        logits[v] = rng.normal() * 3;
        logits[V + v] = rng.normal() * 0.5;
        logits[2 * V + v] = Math.round(rng.normal() * 16) / 8;
      }
      const src = [0, 1, 2, 2, 0, 1, 2];
      const seeds = src.map(() => rng.nextU32());
      const counters = src.map(() => rng.int(1000));
      const got = await run(device, logits, R, V, src, seeds, counters, c);
      assertEquals(got.after, counters.map((x) => x + 1), "counters advance by one");
      for (let b = 0; b < src.length; b++) {
        const row = logits.subarray(src[b] * V, (src[b] + 1) * V);
        const ref = chooseRef(row, c, seeds[b], counters[b], EPS);
        assert(
          got.tokens[b] < V,
          `V ${V} ${JSON.stringify(c)} row ${b}: token ${got.tokens[b]} (unwritten or out of range)`,
        );
        // The log-probability of the token the GPU chose, whichever it is.
        const lpRef = chooseRef(row, { temperature: 0, topK: 0, topP: 1, minP: 0 }, 0, 0).logprob -
          row[chooseRef(row, { temperature: 0, topK: 0, topP: 1, minP: 0 }, 0, 0).token] + row[got.tokens[b]];
        maxErr = Math.max(maxErr, Math.abs(got.logprobs[b] - lpRef));
        assertClose([got.logprobs[b]], [lpRef], {
          atol: 2e-5,
          rtol: 1e-6,
          name: `V ${V} ${JSON.stringify(c)} row ${b} logprob`,
        });
        if (ref.ambiguous) {
          ambiguous++;
          continue;
        }
        assertEquals(got.tokens[b], ref.token, `V ${V} ${JSON.stringify(c)} row ${b} token`);
        checked++;
      }
      // Same seeds and counters: the same outputs.
      const again = await run(device, logits, R, V, src, seeds, counters, c);
      assertEquals(again.tokens, got.tokens, "same seeds and counters, same tokens");
    }
  }
  console.log(
    `sample: ${checked} rows equal to the reference, ${ambiguous} within float32 rounding of a boundary skipped; max |logprob err| ${
      maxErr.toExponential(2)
    }`,
  );
  assert(checked > 10 * ambiguous, `too many ambiguous rows: ${ambiguous} of ${checked + ambiguous}`);
});
