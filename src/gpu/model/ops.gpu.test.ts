import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeBiasAdd, encodeEmbedding, encodeEmbeddingBackward, encodeLmHeadBackward, encodeLseChunk } from "./ops.ts";
import { biasAddRef, embeddingBackwardRef, embeddingRef, logSoftmaxBackwardRef, logSoftmaxStatsRef } from "./ops.ref.ts";

const gpu = await requestGpu();
const { device } = gpu;

/** Vocabulary chunks [v0, v0 + rows) covering V. */
function chunks(V: number, rows: number): [number, number][] {
  const out: [number, number][] = [];
  for (let v0 = 0; v0 < V; v0 += rows) out.push([v0, Math.min(rows, V - v0)]);
  return out;
}

async function run(fn: (enc: GPUCommandEncoder) => Promise<void>): Promise<void> {
  const enc = device.createCommandEncoder();
  await fn(enc);
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
}

Deno.test("model ops: embedding gather and its backward, chunk by chunk over an odd vocabulary", async () => {
  const rng = new Rng(1);
  for (const [N, H, V, rows] of [[1, 1, 1, 1], [37, 13, 29, 10], [130, 24, 301, 64]]) {
    const ids = Uint32Array.from({ length: N }, () => rng.int(V));
    const table = rng.uniformArray(V * H);
    const dout = rng.uniformArray(N * H);
    const idsB = storageBuffer(device, "ids", ids);
    const out = storageBuffer(device, "out", N * H * 4);
    poison(device, out);
    const parts = chunks(V, rows).map(([v0, n]) => ({ v0, n, buf: storageBuffer(device, "table", table.subarray(v0 * H, (v0 + n) * H)), grad: storageBuffer(device, "grad", n * H * 4) }));
    const doutB = storageBuffer(device, "dout", dout);
    await run(async (enc) => {
      for (const p of parts) {
        await encodeEmbedding(device, enc, idsB, p.buf, out, { N, H, v0: p.v0, Vc: p.n });
        await encodeEmbeddingBackward(device, enc, idsB, doutB, p.grad, { N, H, v0: p.v0, Vc: p.n });
      }
    });
    assertClose(await readF32(device, out, N * H), embeddingRef(ids, table, H), { atol: 0, rtol: 0, name: `embedding N${N} H${H} V${V}` });
    const want = embeddingBackwardRef(ids, dout, V, H);
    for (const p of parts) {
      assertClose(await readF32(device, p.grad, p.n * H), want.subarray(p.v0 * H, (p.v0 + p.n) * H), { atol: 1e-5, rtol: 1e-5, name: `embedding backward chunk ${p.v0}` });
    }
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

Deno.test("model ops: streaming log-softmax statistics and their backward over vocabulary chunks", async () => {
  const rng = new Rng(3);
  for (const [N, V, rows] of [[1, 1, 1], [5, 97, 32], [70, 300, 128], [9, 50, 50]]) {
    // Spread logits (scale 8) so the running max moves between chunks and exp underflows somewhere.
    const logits = rng.uniformArray(N * V, -8, 8);
    const tgt = Uint32Array.from({ length: N }, () => rng.int(V));
    const g = rng.uniformArray(N);
    const b = {
      tgt: storageBuffer(device, "tgt", tgt), state: storageBuffer(device, "state", N * 16),
      logp: storageBuffer(device, "logp", N * 4), lse: storageBuffer(device, "lse", N * 4), entropy: storageBuffer(device, "ent", N * 4),
    };
    for (const x of [b.state, b.logp, b.lse, b.entropy]) poison(device, x);
    const gB = storageBuffer(device, "g", g);
    const parts = chunks(V, rows).map(([v0, n]) => {
      const chunk = new Float32Array(N * n);
      for (let r = 0; r < N; r++) chunk.set(logits.subarray(r * V + v0, r * V + v0 + n), r * n);
      return { v0, n, buf: storageBuffer(device, "logits", chunk) };
    });
    await run(async (enc) => {
      for (const [i, p] of parts.entries()) await encodeLseChunk(device, enc, p.buf, b, { N, Vc: p.n, v0: p.v0, first: i === 0 });
    });
    const want = logSoftmaxStatsRef(logits, tgt, V);
    const name = `N${N} V${V} chunks of ${rows}`;
    assertClose(await readF32(device, b.logp, N), want.logp, { atol: 2e-5, rtol: 1e-5, name: `logp ${name}` });
    assertClose(await readF32(device, b.lse, N), want.lse, { atol: 2e-5, rtol: 1e-5, name: `lse ${name}` });
    assertClose(await readF32(device, b.entropy, N), want.entropy, { atol: 2e-5, rtol: 1e-5, name: `entropy ${name}` });
    await run(async (enc) => {
      for (const p of parts) await encodeLmHeadBackward(device, enc, p.buf, b.tgt, b.lse, gB, { N, Vc: p.n, v0: p.v0 });
    });
    const dz = logSoftmaxBackwardRef(logits, tgt, g, V);
    for (const p of parts) {
      const got = await readF32(device, p.buf, N * p.n);
      const ref = new Float64Array(N * p.n);
      for (let r = 0; r < N; r++) ref.set(dz.subarray(r * V + p.v0, r * V + p.v0 + p.n), r * p.n);
      assertClose(got, ref, { atol: 1e-6, rtol: 1e-4, name: `dz ${name} chunk ${p.v0}` });
    }
  }
});
