import { assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { readBuffer, requestGpu, storageBuffer } from "../device.ts";
import { DecodeAdvance } from "./decode_advance.ts";
import { advanceRef } from "../../../tests/gpu-ref/decode_advance.ref.ts";

const gpu = await requestGpu();

Deno.test("decode_advance: ids from the chosen tokens, int64 high words zeroed, positions / key counts / total + 1", async () => {
  const { device } = gpu;
  const rng = new Rng(8);
  for (const B of [1, 63, 130]) {
    const chosen = Uint32Array.from({ length: 2 * B }, (_, i) => (i % 2 ? rng.nextU32() : rng.int(151936)));
    const pos = Array.from({ length: B }, () => rng.int(4000)),
      seqlens = Array.from({ length: B }, () => rng.int(4000)),
      total = 4001;
    const i64 = (xs: number[]) => Uint32Array.from(xs.flatMap((x) => [x, 0]));
    const bufs = {
      chosen: storageBuffer(device, "chosen", chosen),
      ids: storageBuffer(device, "ids", new Uint32Array(2 * B).fill(0xdeadbeef)), // poisoned
      pos: storageBuffer(device, "pos", i64(pos)),
      seqlens: storageBuffer(device, "seqlens", Uint32Array.from(seqlens)),
      total: storageBuffer(device, "total", Uint32Array.of(total)),
    };
    const adv = await DecodeAdvance.create(device, bufs, B);
    const enc = device.createCommandEncoder();
    adv.encode(enc);
    device.queue.submit([enc.finish()]);
    const want = advanceRef(chosen, pos, seqlens, total);
    assertEquals(
      Array.from(new Uint32Array(await readBuffer(device, bufs.ids, 8 * B))),
      Array.from(i64(want.ids)),
      `ids B=${B}`,
    );
    assertEquals(
      Array.from(new Uint32Array(await readBuffer(device, bufs.pos, 8 * B))),
      Array.from(i64(want.pos)),
      `pos B=${B}`,
    );
    assertEquals(
      Array.from(new Uint32Array(await readBuffer(device, bufs.seqlens, 4 * B))),
      want.seqlens,
      `seqlens B=${B}`,
    );
    assertEquals(new Uint32Array(await readBuffer(device, bufs.total, 4))[0], want.total);
    adv.destroy();
    for (const b of Object.values(bufs)) b.destroy();
  }
});
