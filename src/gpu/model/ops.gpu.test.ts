import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeEmbedding, encodeEmbeddingBackward, encodeRowGather, encodeRowScatter } from "./ops.ts";
import { embeddingBackwardRef, embeddingRef, rowGatherRef, rowScatterRef } from "../../../tests/gpu-ref/ops.ref.ts";

const gpu = await requestGpu();
const { device } = gpu;

async function run(fn: (enc: GPUCommandEncoder) => Promise<void>): Promise<void> {
  const enc = device.createCommandEncoder();
  await fn(enc);
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
}

Deno.test("model ops: embedding gather and its backward (a links pass and a chain walk), window by window over an odd vocabulary", async () => {
  const rng = new Rng(1);
  {
    // Windows are V rows or a multiple of 64 (256-byte aligned binding offsets); the last case repeats a few ids many times
    // (a long chain, ids spread over three windows) and leaves most rows untouched.
    for (
      const [N, H, V, window] of [[1, 1, 1, 1], [37, 13, 29, 29], [130, 24, 301, 64], [50, 5, 200, 128], [
        600,
        8,
        150,
        64,
      ]]
    ) {
      const ids = Uint32Array.from({ length: N }, (_, i) => (N === 600 ? [3, 3, 70, 149, 3][i % 5] : rng.int(V)));
      const table = rng.uniformArray(V * H);
      const dout = rng.uniformArray(N * H);
      const idsB = storageBuffer(device, "ids", ids);
      const out = storageBuffer(device, "out", N * H * 4);
      poison(device, out);
      const tableB = storageBuffer(device, "table", table);
      // The gradient accumulates: it starts from values, as a step's second micro-batch finds it.
      const grad0 = rng.uniformArray(V * H);
      const gradB = storageBuffer(device, "grad", grad0);
      const doutB = storageBuffer(device, "dout", dout);
      await run(async (enc) => {
        await encodeEmbedding(device, enc, idsB, tableB, out, { N, H, V, window });
        await encodeEmbeddingBackward(device, enc, idsB, doutB, gradB, { N, H, V, window });
      });
      const name = `N${N} H${H} V${V} window ${window}`;
      assertClose(await readF32(device, out, N * H), embeddingRef(ids, table, H), {
        atol: 0,
        rtol: 0,
        name: `embedding ${name}`,
      });
      const want = embeddingBackwardRef(ids, dout, V, H).map((x, i) => x + grad0[i]);
      const got = await readF32(device, gradB, V * H);
      assertClose(got, want, { atol: 1e-5, rtol: 1e-5, name: `embedding backward ${name}` });
    }
  }
});

Deno.test("model ops: row gather and scatter, f32 bit for bit (a denormal included) and u32 ids", async () => {
  const rng = new Rng(3);
  for (const [N, C, R] of [[1, 1, 1], [40, 7, 13], [300, 64, 257], [5, 1, 0]]) {
    // Distinct rows in a random order.
    const rows = Uint32Array.from(rng.shuffle(Array.from({ length: N }, (_, i) => i)).slice(0, R));
    const src = rng.uniformArray(N * C);
    src[0] = 1e-40; // a denormal: a float move could flush it
    const dst = rng.uniformArray(N * C);
    const rowsB = storageBuffer(device, "rows", rows.length ? rows : new Uint32Array(1));
    const srcB = storageBuffer(device, "src", src);
    const gathered = storageBuffer(device, "gathered", Math.max(1, R * C) * 4);
    poison(device, gathered);
    const dstB = storageBuffer(device, "dst", dst);
    const ids = Uint32Array.from({ length: N }, () => rng.int(151936));
    const idsB = storageBuffer(device, "ids", ids);
    const idsOut = storageBuffer(device, "ids-out", Math.max(1, R) * 4);
    await run(async (enc) => {
      await encodeRowGather(device, enc, rowsB, srcB, gathered, R, C);
      await encodeRowScatter(device, enc, rowsB, gathered, dstB, R, C);
      await encodeRowGather(device, enc, rowsB, idsB, idsOut, R, 1);
    });
    const name = `N${N} C${C} R${R}`;
    const g = await readF32(device, gathered, R * C);
    assertClose(g, rowGatherRef(rows, src, C), { atol: 0, rtol: 0, name: `gather ${name}` });
    const bits = new Uint32Array(g.buffer), srcBits = new Uint32Array(src.buffer);
    for (let i = 0; i < R * C; i++) {
      if (bits[i] !== srcBits[rows[Math.floor(i / C)] * C + (i % C)]) {
        throw new Error(`gather ${name}: word ${i} changed bits`);
      }
    }
    // Scattered back over dst: the gathered rows restored, every other row of dst as it was.
    assertClose(await readF32(device, dstB, N * C), rowScatterRef(rows, rowGatherRef(rows, src, C), dst, C), {
      atol: 0,
      rtol: 0,
      name: `scatter ${name}`,
    });
    const gotIds = new Uint32Array((await readF32(device, idsOut, Math.max(1, R))).buffer);
    for (let i = 0; i < R; i++) if (gotIds[i] !== ids[rows[i]]) throw new Error(`gather u32 ${name}: row ${i}`);
  }
});
