import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeBiasAdd, encodeEmbedding, encodeEmbeddingBackward } from "./ops.ts";
import { biasAddRef, embeddingBackwardRef, embeddingRef } from "./ops.ref.ts";

const gpu = await requestGpu();
const { device } = gpu;

async function run(fn: (enc: GPUCommandEncoder) => Promise<void>): Promise<void> {
  const enc = device.createCommandEncoder();
  await fn(enc);
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
}

Deno.test("model ops: embedding gather and its backward, window by window over an odd vocabulary", async () => {
  const rng = new Rng(1);
  // Windows are V rows or a multiple of 64 (256-byte aligned binding offsets).
  for (const [N, H, V, window] of [[1, 1, 1, 1], [37, 13, 29, 29], [130, 24, 301, 64], [50, 5, 200, 128]]) {
    const ids = Uint32Array.from({ length: N }, () => rng.int(V));
    const table = rng.uniformArray(V * H);
    const dout = rng.uniformArray(N * H);
    const idsB = storageBuffer(device, "ids", ids);
    const out = storageBuffer(device, "out", N * H * 4);
    poison(device, out);
    const tableB = storageBuffer(device, "table", table);
    const gradB = storageBuffer(device, "grad", V * H * 4);
    const doutB = storageBuffer(device, "dout", dout);
    await run(async (enc) => {
      await encodeEmbedding(device, enc, idsB, tableB, out, { N, H, V, window });
      await encodeEmbeddingBackward(device, enc, idsB, doutB, gradB, { N, H, V, window });
    });
    const name = `N${N} H${H} V${V} window ${window}`;
    assertClose(await readF32(device, out, N * H), embeddingRef(ids, table, H), { atol: 0, rtol: 0, name: `embedding ${name}` });
    assertClose(await readF32(device, gradB, V * H), embeddingBackwardRef(ids, dout, V, H), { atol: 1e-5, rtol: 1e-5, name: `embedding backward ${name}` });
  }
});

Deno.test("model ops: bias add over odd shapes", async () => {
  const rng = new Rng(2);
  for (const [N, O] of [[1, 1], [7, 33], [65, 129]]) {
    const y = rng.uniformArray(N * O), b = rng.uniformArray(O);
    const yB = storageBuffer(device, "y", y);
    await run((enc) => encodeBiasAdd(device, enc, storageBuffer(device, "b", b), yB, N, O));
    assertClose(await readF32(device, yB, N * O), biasAddRef(y, b), { atol: 1e-6, rtol: 1e-6, name: `bias N${N} O${O}` });
  }
});
