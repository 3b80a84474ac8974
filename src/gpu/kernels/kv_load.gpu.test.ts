// kv_load.wgsl against its reference: rows from any prefill row (repeated, reordered), ragged prompt lengths
// including the full width and one column, fewer rows than the batch, columns past each length untouched, and a
// second load through the same KvLoad (rows and width rewritten).
import { assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { readBuffer, requestGpu, storageBuffer } from "../device.ts";
import { KvLoad } from "./kv_load.ts";
import { kvLoadRef } from "../../../tests/gpu-ref/kv_load.ref.ts";

const gpu = await requestGpu();

Deno.test("kv_load: each decoding row gets its prefill row's last (or, from0, first) len columns at columns 0..len-1, per head; the rest untouched", async () => {
  const { device } = gpu;
  const rng = new Rng(21);
  const B = 6, K = 2, T = 40, D = 12;
  const load = await KvLoad.create(device, { batch: B, K, T, D });
  const dstInit = Float32Array.from({ length: B * K * T * D }, () => rng.normal());
  const dst = storageBuffer(device, "dst", dstInit);
  let want: Float32Array = dstInit;
  for (
    const { R, P, rows, from0 } of [
      {
        R: 3,
        P: 17,
        rows: [{ src: 2, len: 17 }, { src: 0, len: 1 }, { src: 2, len: 9 }, { src: 1, len: 16 }],
        from0: false,
      },
      {
        R: 2,
        P: 30,
        rows: [{ src: 1, len: 30 }, { src: 1, len: 3 }, { src: 0, len: 22 }, { src: 0, len: 30 }, { src: 1, len: 7 }, {
          src: 0,
          len: 1,
        }],
        from0: false,
      },
      // The captured prefill's layout: each prompt from column 0 of its row.
      {
        R: 3,
        P: 24,
        rows: [{ src: 1, len: 5 }, { src: 2, len: 24 }, { src: 0, len: 1 }, { src: 1, len: 13 }, { src: 2, len: 2 }],
        from0: true,
      },
    ]
  ) {
    const srcData = Float32Array.from({ length: R * K * P * D }, () => rng.normal());
    const src = storageBuffer(device, "src", srcData);
    load.setRows(P, rows.map((r) => r.src), rows.map((r) => r.len), from0);
    const enc = device.createCommandEncoder();
    load.encode(enc, src, dst);
    device.queue.submit([enc.finish()]);
    const before = want;
    want = kvLoadRef(srcData, want, rows, K, P, T, D, from0);
    // The two layouts move different columns (a negative control for the flag).
    if (from0) {
      const other = kvLoadRef(srcData, before, rows, K, P, T, D, false);
      assertEquals(want.every((x, i) => x === other[i]), false);
    }
    assertEquals(
      Array.from(new Float32Array(await readBuffer(device, dst, want.byteLength))),
      Array.from(want),
      `R=${R} P=${P} from0=${from0}`,
    );
    src.destroy();
  }
  dst.destroy();
  load.destroy();
});

Deno.test("kv_load: rows beyond the batch or lengths outside 1..P are refused", async () => {
  const load = await KvLoad.create(gpu.device, { batch: 2, K: 1, T: 8, D: 4 });
  const throws = (f: () => void) => {
    try {
      f();
    } catch {
      return true;
    }
    return false;
  };
  assertEquals(throws(() => load.setRows(4, [0, 0, 0], [1, 1, 1])), true);
  assertEquals(throws(() => load.setRows(4, [0], [5])), true);
  assertEquals(throws(() => load.setRows(4, [0], [0])), true);
  assertEquals(throws(() => load.setRows(4, [0, 1], [4, 2])), false);
  load.destroy();
});
