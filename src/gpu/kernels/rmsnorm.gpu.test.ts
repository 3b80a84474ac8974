import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, sharedScratch, storageBuffer } from "../device.ts";
import {
  encodeRmsNormBackward,
  encodeRmsNormForward,
  encodeRmsNormWeightGrad,
  type RmsNormDims,
  rmsnormSubgroups,
} from "./rmsnorm.ts";
import { rmsnormBackwardRef, rmsnormForwardRef } from "../../../tests/gpu-ref/rmsnorm.ref.ts";

const gpu = await requestGpu();

async function check(
  d: RmsNormDims & { subgroups?: boolean },
  seed: number,
  accumulate: boolean,
  label: string,
) {
  const { device } = gpu;
  const rng = new Rng(seed);
  const { rows, C } = d;
  const x = rng.uniformArray(rows * C, -2, 2);
  const w = rng.uniformArray(C, 0.5, 1.5);
  const dy = rng.uniformArray(rows * C);
  const dx0 = rng.uniformArray(rows * C);
  const dw0 = rng.uniformArray(C);
  const [gx, gw, gdy] = [storageBuffer(device, "x", x), storageBuffer(device, "w", w), storageBuffer(device, "dy", dy)];
  const gy = storageBuffer(device, "y", rows * C * 4);
  const grstd = storageBuffer(device, "rstd", rows * 4);
  const gdx = storageBuffer(device, "dx", dx0);
  const gdw = storageBuffer(device, "dw", dw0);
  for (const b of [gy, grstd]) poison(device, b);
  if (!accumulate) { for (const b of [gdx, gdw]) poison(device, b); }
  // The dw partials' scratch (at most 64 slices), poisoned: every slot must be written.
  poison(device, sharedScratch(device, "rmsnorm_dw-partials", 64 * C * 4));
  const enc = device.createCommandEncoder({ label: "rmsnorm-test" });
  await encodeRmsNormForward(device, enc, gx, gw, gy, grstd, d);
  await encodeRmsNormBackward(device, enc, gdy, gx, gw, grstd, gdx, { ...d, accumulate });
  await encodeRmsNormWeightGrad(device, enc, gdy, gx, grstd, gdw, { ...d, accumulate });
  device.queue.submit([enc.finish()]);
  const f = rmsnormForwardRef(x, w, d);
  const b = rmsnormBackwardRef(dy, x, w, d);
  if (accumulate) {
    for (let i = 0; i < b.dx.length; i++) b.dx[i] += dx0[i];
    for (let i = 0; i < C; i++) b.dw[i] += dw0[i];
  }
  const name = `${label} rows=${rows} C=${C}${accumulate ? " accumulate" : ""}`;
  const ey = assertClose(await readF32(device, gy), f.y, { atol: 1e-5, rtol: 1e-5, name: `${name} y` });
  const er = assertClose(await readF32(device, grstd), f.rstd, { atol: 0, rtol: 1e-5, name: `${name} rstd` });
  const ex = assertClose(await readF32(device, gdx), b.dx, { atol: 1e-5, rtol: 1e-4, name: `${name} dx` });
  const ew = assertClose(await readF32(device, gdw), b.dw, {
    atol: 1e-5 * Math.sqrt(rows),
    rtol: 1e-4,
    name: `${name} dw`,
  });
  console.log(
    `${name}: max|err| y ${ey.maxAbs.toExponential(2)} rstd ${er.maxAbs.toExponential(2)} ` +
      `dx ${ex.maxAbs.toExponential(2)} dw ${ew.maxAbs.toExponential(2)}`,
  );
  for (const buf of [gx, gw, gdy, gy, grstd, gdx, gdw]) buf.destroy();
}

Deno.test("rmsnorm: forward, dx and dw against the float64 reference, odd sizes", async () => {
  let seed = 100;
  for (const [rows, C] of [[1, 1], [7, 33], [5, 257], [3, 1000], [130, 96], [1001, 130]]) {
    await check({ rows, C, eps: 1e-6 }, seed++, false, "rmsnorm");
  }
});

Deno.test("rmsnorm: accumulating dx and dw add to what the buffers held", async () => {
  await check({ rows: 9, C: 75, eps: 1e-5 }, 7, true, "rmsnorm");
  await check({ rows: 777, C: 65, eps: 1e-5 }, 10, true, "rmsnorm (dw in 4 row slices)");
});

Deno.test("rmsnorm: per-head q/k norm, rows = N*H and C = D, one (D) weight", async () => {
  const [N, H, D] = [101, 3, 64]; // 303 rows: dw in two row slices
  await check({ rows: N * H, C: D, eps: 1e-6 }, 8, false, `per-head N=${N} H=${H} D=${D}`);
});

Deno.test("rmsnorm: more rows than one dispatch dimension holds (grid folded into y)", async () => {
  await check({ rows: 65537, C: 3, eps: 1e-6 }, 9, false, "rmsnorm");
});

// Both row reductions where the device has subgroups (Dawn: SwiftShader's subgroups of 4), the
// workgroup-memory one alone where it has not (Deno's wgpu on lavapipe).
Deno.test("rmsnorm: forward and dx with the subgroup reduction and with the workgroup-memory one", async () => {
  const kinds = rmsnormSubgroups(gpu.device, true) ? [true, false] : [false];
  if (kinds.length === 1) console.log(`no subgroups on this device: the workgroup-memory reduction only`);
  else console.log(`subgroups of ${gpu.info.subgroupMinSize}..${gpu.info.subgroupMaxSize}: both reductions`);
  let seed = 400;
  for (const subgroups of kinds) {
    // WG 32 (C <= 32), 64 (per-head D), 128, 256 (C = 896, C = 1000 with a ragged stride).
    for (const [rows, C] of [[5, 1], [33, 20], [303, 64], [17, 100], [9, 896], [7, 1000]]) {
      await check({ rows, C, eps: 1e-6, subgroups }, seed++, false, `rmsnorm ${subgroups ? "subgroups" : "workgroup"}`);
      await check({ rows, C, eps: 1e-5, subgroups }, seed++, true, `rmsnorm ${subgroups ? "subgroups" : "workgroup"}`);
    }
  }
});
