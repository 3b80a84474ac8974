// readBuffers against one readF32 per buffer: seeded random contents, sizes that straddle the
// staging cap, an empty part, and the snapshot taken at the call (writes submitted after it do not
// show), which the GRPO cell's overlapped checkpoint relies on.
import { assert, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { readBuffers, readF32, requestGpu, storageBuffer, writeBuffer } from "./device.ts";

const { device } = await requestGpu();

/** The leading `count` floats of each buffer through readBuffers (a few maps), `cap` its staging cap. */
async function readF32Parts(parts: { buffer: GPUBuffer; count: number }[], cap?: number): Promise<Float32Array[]> {
  const read = await readBuffers(device, parts.map((p) => ({ buffer: p.buffer, bytes: p.count * 4 })), cap);
  return read.map((b) => new Float32Array(b));
}

function randomBuffers(sizes: number[], seed: number): { buffer: GPUBuffer; data: Float32Array }[] {
  const rng = new Rng(seed);
  return sizes.map((n, i) => {
    const data = Float32Array.from({ length: n }, () => rng.normal());
    const buffer = storageBuffer(device, `readback-test-${i}`, Math.max(4, n * 4) + 12);
    if (n > 0) writeBuffer(device, buffer, data); // Deno panics on an empty write
    return { buffer, data };
  });
}

Deno.test("readBuffers: many buffers in a few maps equal one readF32 each, packed under the cap or not", async () => {
  const sizes = [1, 37, 0, 4096, 1000, 3, 2048, 5];
  const bufs = randomBuffers(sizes, 7);
  const single = await Promise.all(bufs.map((b, i) => readF32(device, b.buffer, sizes[i])));
  // Default cap: one staging buffer. 8 KiB: several, and the 16 KiB part alone in its own.
  for (const cap of [undefined, 8192]) {
    const got = await readF32Parts(bufs.map((b, i) => ({ buffer: b.buffer, count: sizes[i] })), cap);
    assertEquals(got.length, sizes.length);
    got.forEach((g, i) => {
      assertEquals(g.length, sizes[i], `part ${i} length (cap ${cap})`);
      assertEquals(Array.from(g), Array.from(single[i]), `part ${i} (cap ${cap})`);
      assertEquals(Array.from(g), Array.from(bufs[i].data), `part ${i} against what was written (cap ${cap})`);
    });
  }
  for (const b of bufs) b.buffer.destroy();
});

Deno.test("readBuffers: reads the buffers as they were at the call, not after later writes", async () => {
  const [b] = randomBuffers([256], 11);
  const pending = readF32Parts([{ buffer: b.buffer, count: 256 }]);
  writeBuffer(device, b.buffer, new Float32Array(256).fill(-1));
  const [got] = await pending;
  assertEquals(Array.from(got), Array.from(b.data));
  assert((await readF32(device, b.buffer, 1))[0] === -1, "the later write landed");
  b.buffer.destroy();
});
