import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeMatmul, type MatmulOpts } from "./matmul.ts";
import { matmulRef } from "./matmul.ref.ts";

const gpu = await requestGpu();

async function check(o: MatmulOpts & { accumulate?: boolean }, seed: number) {
  const { device } = gpu;
  const rng = new Rng(seed);
  const batch = o.batch ?? 1;
  const a = rng.uniformArray((o.broadcastA ? 1 : batch) * o.M * o.K);
  const b = rng.uniformArray((o.broadcastB ? 1 : batch) * o.K * o.N);
  const c0 = rng.uniformArray(batch * o.M * o.N);
  const ga = storageBuffer(device, "a", a);
  const gb = storageBuffer(device, "b", b);
  const gc = storageBuffer(device, "c", c0);
  if (!o.accumulate) poison(device, gc);
  const enc = device.createCommandEncoder();
  await encodeMatmul(device, enc, ga, gb, gc, o);
  device.queue.submit([enc.finish()]);
  const got = await readF32(device, gc);
  const want = matmulRef(a, b, o, o.accumulate ? c0 : undefined);
  assertClose(got, want, { atol: 1e-4 * Math.sqrt(o.K), rtol: 1e-4, name: `matmul ${JSON.stringify(o)}` });
  for (const x of [ga, gb, gc]) x.destroy();
}

Deno.test("matmul: odd sizes, every transpose combination, against the float64 reference", async () => {
  let seed = 1;
  for (const [M, N, K] of [[1, 1, 1], [7, 13, 5], [65, 63, 17], [100, 37, 129]]) {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        await check({ M, N, K, transA, transB, alpha: 0.75 }, seed++);
      }
    }
  }
});

Deno.test("matmul: batched, broadcast operands and accumulation", async () => {
  await check({ M: 33, N: 70, K: 19, batch: 3 }, 11);
  await check({ M: 33, N: 70, K: 19, batch: 3, broadcastB: true, transB: true }, 12);
  await check({ M: 9, N: 66, K: 40, batch: 2, broadcastA: true }, 13);
  await check({ M: 129, N: 65, K: 31, accumulate: true, alpha: -2 }, 14);
});

Deno.test("matmul: split-K (long contracted dimension, few output tiles) matches the reference", async () => {
  const { splitKSlices } = await import("./matmul.ts");
  // The weight-gradient shapes: dW (out, in) = dY^T X with K = tokens; uneven last slice included.
  const shapes = [
    { M: 16, N: 70, K: 1000, transA: true },
    { M: 70, N: 16, K: 777, transA: true, alpha: 0.5, accumulate: true },
    { M: 1, N: 33, K: 2049, transA: true },
  ];
  for (const [i, o] of shapes.entries()) {
    const slices = splitKSlices(o);
    if (slices < 2) throw new Error(`expected ${JSON.stringify(o)} to be split, got ${slices}`);
    await check(o, 40 + i);
  }
});

Deno.test("matmul: split-K scratch growing between two products recorded in one encoder keeps the first valid", async () => {
  const { device } = gpu;
  const rng = new Rng(77);
  const shapes = [{ M: 8, N: 16, K: 600, transA: true }, { M: 40, N: 60, K: 900, transA: true }];
  const enc = device.createCommandEncoder();
  const runs = [];
  for (const o of shapes) {
    const a = rng.uniformArray(o.M * o.K), b = rng.uniformArray(o.K * o.N);
    const ga = storageBuffer(device, "a", a), gb = storageBuffer(device, "b", b), gc = storageBuffer(device, "c", o.M * o.N * 4);
    poison(device, gc);
    await encodeMatmul(device, enc, ga, gb, gc, o);
    runs.push({ o, a, b, gc });
  }
  device.queue.submit([enc.finish()]);
  for (const r of runs) assertClose(await readF32(device, r.gc), matmulRef(r.a, r.b, r.o), { atol: 1e-4 * Math.sqrt(r.o.K), rtol: 1e-4, name: `split ${JSON.stringify(r.o)}` });
  const { releaseTransients } = await import("../device.ts");
  releaseTransients(device);
});
