import { assert, assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodePrmBce, encodePrmHeadBackward, encodePrmHeadForward, encodePrmHeadWeightGrad } from "./prm_head.ts";
import {
  prmBceRef,
  prmHeadBackwardRef,
  type PrmHeadDims,
  prmHeadForwardRef,
} from "../../../tests/gpu-ref/prm_head.ref.ts";

const gpu = await requestGpu();

async function check(d: PrmHeadDims, seed: number, o: { accumulate?: boolean; hScale?: number } = {}) {
  const { device } = gpu;
  const rng = new Rng(seed);
  const h = rng.uniformArray(d.N * d.C, -(o.hScale ?? 1), o.hScale ?? 1);
  const wb = rng.uniformArray(d.C + 1);
  // Hard labels, a soft one, and rows left out (weight 0), as a batch of chains has them.
  const labels = new Float32Array(d.N).map((_, n) => (n % 7 === 3 ? 0.25 : rng.int(2)));
  const weights = new Float32Array(d.N).map((_, n) => (n % 3 === 1 ? 0 : 0.1 + 0.9 * rng.next()));
  const dh0 = rng.uniformArray(d.N * d.C);
  const dwb0 = rng.uniformArray(d.C + 1);
  const b = {
    h: storageBuffer(device, "h", h),
    wb: storageBuffer(device, "wb", wb),
    labels: storageBuffer(device, "labels", labels),
    weights: storageBuffer(device, "weights", weights),
    z: storageBuffer(device, "z", d.N * 4),
    dz: storageBuffer(device, "dz", d.N * 4),
    loss: storageBuffer(device, "loss", d.N * 4),
    dh: storageBuffer(device, "dh", o.accumulate ? dh0 : d.N * d.C * 4),
    dwb: storageBuffer(device, "dwb", o.accumulate ? dwb0 : (d.C + 1) * 4),
  };
  for (const x of [b.z, b.dz, b.loss]) poison(device, x);
  if (!o.accumulate) { for (const x of [b.dh, b.dwb]) poison(device, x); }
  const enc = device.createCommandEncoder({ label: "prm-head-test" });
  await encodePrmHeadForward(device, enc, b, d);
  await encodePrmBce(device, enc, b, d.N);
  await encodePrmHeadBackward(device, enc, b, { ...d, accumulate: o.accumulate });
  await encodePrmHeadWeightGrad(device, enc, b, { ...d, accumulate: o.accumulate });
  device.queue.submit([enc.finish()]);
  const z = prmHeadForwardRef(h, wb, d);
  const bce = prmBceRef(z, labels, weights);
  const grad = prmHeadBackwardRef(bce.dz, h, wb, d);
  if (o.accumulate) {
    grad.dh.forEach((v, i) => (grad.dh[i] = v + dh0[i]));
    grad.dwb.forEach((v, i) => (grad.dwb[i] = v + dwb0[i]));
  }
  const tag = `N ${d.N} C ${d.C}${o.accumulate ? " accumulate" : ""}${o.hScale ? ` |h| <= ${o.hScale}` : ""}`;
  const got = {
    z: await readF32(device, b.z),
    dz: await readF32(device, b.dz),
    loss: await readF32(device, b.loss),
    dh: await readF32(device, b.dh),
    dwb: await readF32(device, b.dwb),
  };
  for (const [k, v] of Object.entries(got)) {
    for (const x of v) assert(Number.isFinite(x), `${tag}: non-finite ${k} ${x}`);
  }
  const tol = { atol: 1e-5, rtol: 1e-4 };
  const scale = Math.max(1, ...Array.from(z, Math.abs));
  const e = [
    assertClose(got.z, z, { atol: 1e-5 * scale, rtol: 1e-4, name: `z ${tag}` }),
    assertClose(got.loss, bce.loss, { atol: 1e-5 * scale, rtol: 1e-4, name: `loss ${tag}` }),
    assertClose(got.dz, bce.dz, { ...tol, name: `dz ${tag}` }),
    assertClose(got.dh, grad.dh, { ...tol, name: `dh ${tag}` }),
    assertClose(got.dwb, grad.dwb, { atol: 1e-5 * Math.sqrt(d.N), rtol: 1e-4, name: `dwb ${tag}` }),
  ];
  console.log(`${tag}: max |err| z, loss, dz, dh, dwb: ${e.map((x) => x.maxAbs.toExponential(2)).join(" ")}`);
  for (const x of Object.values(b)) x.destroy();
}

Deno.test("prm head: forward, BCE, dh and dw against float64, odd sizes", async () => {
  await check({ N: 1, C: 1 }, 1);
  await check({ N: 37, C: 45 }, 2);
  await check({ N: 300, C: 257 }, 3);
  await check({ N: 64, C: 896 }, 4);
  await check({ N: 29, C: 33 }, 5, { accumulate: true });
});

Deno.test("prm head: saturated logits (|z| ~ 100) give finite loss and gradient", async () => {
  await check({ N: 40, C: 16 }, 6, { hScale: 25 });
});
