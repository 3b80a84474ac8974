import { assertClose, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { type EmbeddingDims, encodeEmbeddingLinks, encodeEmbeddingScatter } from "./embedding.ts";
import { embeddingBackwardRef } from "../../../tests/gpu-ref/embedding.ref.ts";

const gpu = await requestGpu();

/** Runs the scatter once; returns the GPU's dtable so determinism can be compared. */
async function check(d: EmbeddingDims, ids: Uint32Array, seed: number): Promise<Float32Array> {
  const { device } = gpu;
  const rng = new Rng(seed);
  const dy = rng.uniformArray(d.N * d.C);
  const dtable0 = rng.uniformArray(d.V * d.C);
  const [gids, gdy, gdt] = [
    storageBuffer(device, "ids", ids),
    storageBuffer(device, "dy", dy),
    storageBuffer(device, "dtable", dtable0),
  ];
  const links = storageBuffer(device, "embedding-links", d.N * 4);
  poison(device, links);
  const enc = device.createCommandEncoder({ label: "embedding-test" });
  await encodeEmbeddingLinks(device, enc, gids, links, d.N);
  await encodeEmbeddingScatter(device, enc, gids, links, gdy, gdt, d);
  device.queue.submit([enc.finish()]);
  const name = `embedding N=${d.N} C=${d.C} V=${d.V}`;
  const maxRepeat = Math.max(...Object.values(countIds(ids)));
  const got = await readF32(device, gdt);
  const et = assertClose(got, embeddingBackwardRef(ids, dy, d, dtable0), {
    atol: 1e-6 * maxRepeat,
    rtol: 1e-6,
    name: `${name} dtable`,
  });
  console.log(`${name} (max repeats ${maxRepeat}): max|err| dtable ${et.maxAbs.toExponential(2)}`);
  for (const b of [gids, gdy, gdt, links]) b.destroy();
  return got;
}

function countIds(ids: Uint32Array): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const id of ids) counts[id] = (counts[id] ?? 0) + 1;
  return counts;
}

Deno.test("embedding: scatter-add against the float64 reference, repeated ids", async () => {
  await check({ N: 1, C: 1, V: 1 }, Uint32Array.from([0]), 71);
  await check({ N: 7, C: 5, V: 3 }, Uint32Array.from([2, 0, 2, 2, 5, 1, 0]), 72); // 5 >= V
  const rng = new Rng(73);
  const d = { N: 1031, C: 67, V: 300 };
  const ids = Uint32Array.from({ length: d.N }, () => (rng.next() < 0.3 ? rng.int(4) : rng.int(d.V)));
  await check(d, ids, 74);
});

Deno.test("embedding: backward is bit-for-bit deterministic across runs", async () => {
  const rng = new Rng(75);
  const d = { N: 600, C: 33, V: 50 };
  const ids = Uint32Array.from({ length: d.N }, () => rng.int(d.V));
  const a = await check(d, ids, 76);
  const b = await check(d, ids, 76);
  assertEquals(a, b, "two runs of the embedding backward differ");
});

Deno.test("embedding: scatter into vocabulary chunks [v0, v0 + Vc) equals the whole-table scatter", async () => {
  const { device } = gpu;
  const rng = new Rng(77);
  const d = { N: 333, C: 19, V: 100 };
  const ids = Uint32Array.from({ length: d.N }, () => rng.int(d.V + 5)); // some ids >= V
  const dy = rng.uniformArray(d.N * d.C);
  const want = embeddingBackwardRef(ids, dy, d);
  const [gids, gdy, links] = [
    storageBuffer(device, "ids", ids),
    storageBuffer(device, "dy", dy),
    storageBuffer(device, "embedding-links", d.N * 4),
  ];
  poison(device, links);
  const chunks = [[0, 37], [37, 40], [77, 23]].map(([v0, Vc]) => ({
    v0,
    Vc,
    buf: storageBuffer(device, `dtable-${v0}`, Vc * d.C * 4),
  }));
  const enc = device.createCommandEncoder({ label: "embedding-chunks-test" });
  await encodeEmbeddingLinks(device, enc, gids, links, d.N);
  for (const ch of chunks) {
    await encodeEmbeddingScatter(device, enc, gids, links, gdy, ch.buf, { ...d, V: ch.Vc, v0: ch.v0 });
  }
  device.queue.submit([enc.finish()]);
  const got = new Float32Array(d.V * d.C);
  for (const ch of chunks) got.set(await readF32(device, ch.buf), ch.v0 * d.C);
  const e = assertClose(got, want, { atol: 1e-5, rtol: 1e-6, name: "chunked dtable" });
  console.log(
    `embedding chunked scatter N=${d.N} C=${d.C} V=${d.V} in 3 chunks: max|err| ${e.maxAbs.toExponential(2)}`,
  );
  for (const b of [gids, gdy, links, ...chunks.map((c) => c.buf)]) b.destroy();
});
