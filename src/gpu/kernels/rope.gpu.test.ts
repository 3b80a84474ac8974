import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeRope, type RopeDims } from "./rope.ts";
import { defaultInvFreq, ropeRef } from "../../../tests/gpu-ref/rope.ref.ts";

const gpu = await requestGpu();

async function check(d: RopeDims, maxPos: number, base: number, seed: number) {
  const { device } = gpu;
  const rng = new Rng(seed);
  const n = d.N * d.H * d.D;
  const x = rng.uniformArray(n);
  const dy = rng.uniformArray(n);
  const pos = Uint32Array.from({ length: d.N }, () => rng.int(maxPos));
  pos[0] = maxPos - 1;
  const invFreq = defaultInvFreq(d.D, base);
  const [gx, gdy, gpos, gf] = [
    storageBuffer(device, "x", x),
    storageBuffer(device, "dy", dy),
    storageBuffer(device, "pos", pos),
    storageBuffer(device, "invFreq", invFreq),
  ];
  const gy = storageBuffer(device, "y", n * 4);
  const gdx = storageBuffer(device, "dx", n * 4);
  poison(device, gy);
  poison(device, gdx);
  const enc = device.createCommandEncoder({ label: "rope-test" });
  await encodeRope(device, enc, gx, gpos, gf, gy, d);
  await encodeRope(device, enc, gdy, gpos, gf, gdx, { ...d, backward: true });
  device.queue.submit([enc.finish()]);
  const name = `rope N=${d.N} H=${d.H} D=${d.D} maxPos=${maxPos} base=${base}`;
  const ey = assertClose(await readF32(device, gy), ropeRef(x, pos, invFreq, d), {
    atol: 2e-6,
    rtol: 1e-5,
    name: `${name} y`,
  });
  const ex = assertClose(await readF32(device, gdx), ropeRef(dy, pos, invFreq, d, true), {
    atol: 2e-6,
    rtol: 1e-5,
    name: `${name} dx`,
  });
  console.log(`${name}: max|err| y ${ey.maxAbs.toExponential(2)} dx ${ex.maxAbs.toExponential(2)}`);
  for (const b of [gx, gdy, gpos, gf, gy, gdx]) b.destroy();
}

Deno.test("rope: forward and backward against the float64 reference, odd sizes", async () => {
  await check({ N: 1, H: 1, D: 2 }, 3, 10000, 31);
  await check({ N: 7, H: 3, D: 10 }, 50, 10000, 32);
  await check({ N: 13, H: 5, D: 64 }, 4096, 1e6, 33);
});

Deno.test("rope: far positions (angles up to ~3e4 rad) stay accurate after range reduction", async () => {
  await check({ N: 33, H: 2, D: 128 }, 32768, 1e6, 34);
});
