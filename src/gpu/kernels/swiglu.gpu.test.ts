import { assert, assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeSwigluBackward, encodeSwigluForward } from "./swiglu.ts";
import { swigluBackwardRef, swigluForwardRef } from "../../../tests/gpu-ref/swiglu.ref.ts";

const gpu = await requestGpu();

async function check(gate: Float32Array, up: Float32Array, dh: Float32Array, name: string) {
  const { device } = gpu;
  const n = gate.length;
  const [gg, gu, gdh] = [
    storageBuffer(device, "gate", gate),
    storageBuffer(device, "up", up),
    storageBuffer(device, "dh", dh),
  ];
  const [gh, gdg, gdu] = [
    storageBuffer(device, "h", n * 4),
    storageBuffer(device, "dgate", n * 4),
    storageBuffer(device, "dup", n * 4),
  ];
  for (const b of [gh, gdg, gdu]) poison(device, b);
  const enc = device.createCommandEncoder({ label: "swiglu-test" });
  await encodeSwigluForward(device, enc, gg, gu, gh, n);
  await encodeSwigluBackward(device, enc, gdh, gg, gu, gdg, gdu, n);
  device.queue.submit([enc.finish()]);
  const b = swigluBackwardRef(dh, gate, up);
  const tol = { atol: 1e-6, rtol: 1e-5 };
  const [h, dg, du] = [await readF32(device, gh), await readF32(device, gdg), await readF32(device, gdu)];
  for (const v of [...h, ...dg, ...du]) assert(Number.isFinite(v), `${name}: non-finite output ${v}`);
  const eh = assertClose(h, swigluForwardRef(gate, up), { ...tol, name: `${name} h` });
  const eg = assertClose(dg, b.dgate, { ...tol, name: `${name} dgate` });
  const eu = assertClose(du, b.dup, { ...tol, name: `${name} dup` });
  const fmt = (e: { maxAbs: number; maxRel: number }) =>
    `${e.maxAbs.toExponential(2)} (rel ${e.maxRel.toExponential(2)})`;
  console.log(`${name}: max|err| h ${fmt(eh)} dgate ${fmt(eg)} dup ${fmt(eu)}`);
  for (const x of [gg, gu, gdh, gh, gdg, gdu]) x.destroy();
}

Deno.test("swiglu: forward and backward against the float64 reference, odd sizes", async () => {
  for (const [n, seed] of [[1, 51], [257, 52], [7 * 4865, 53]]) {
    const rng = new Rng(seed);
    await check(rng.uniformArray(n, -6, 6), rng.uniformArray(n, -2, 2), rng.uniformArray(n), `swiglu n=${n}`);
  }
});

Deno.test("swiglu: saturated gates (|gate| up to 1e30) give finite, correct values", async () => {
  const gate = Float32Array.from([-1e30, -1e4, -100, -88.7, -20, 0, 20, 88.7, 100, 1e4, 1e30]);
  const up = new Rng(54).uniformArray(gate.length);
  const dh = new Rng(55).uniformArray(gate.length);
  await check(gate, up, dh, "swiglu extreme gates");
});
