import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeAdd, encodeAddInto } from "./add.ts";
import { addRef } from "./add.ref.ts";

const gpu = await requestGpu();

Deno.test("add: out = alpha*a + beta*b against the float64 reference, odd sizes", async () => {
  const { device } = gpu;
  let seed = 90;
  for (const [n, alpha, beta] of [[1, 1, 1], [1000, 1, 1], [70001, 0.5, -2]]) {
    const rng = new Rng(seed++);
    const a = rng.uniformArray(n);
    const b = rng.uniformArray(n);
    const [ga, gb, go] = [storageBuffer(device, "a", a), storageBuffer(device, "b", b), storageBuffer(device, "out", n * 4)];
    poison(device, go);
    const enc = device.createCommandEncoder({ label: "add-test" });
    await encodeAdd(device, enc, ga, gb, go, n, alpha, beta);
    device.queue.submit([enc.finish()]);
    const e = assertClose(await readF32(device, go), addRef(a, b, alpha, beta), { atol: 1e-7, rtol: 1e-6, name: `add n=${n}` });
    console.log(`add n=${n} alpha=${alpha} beta=${beta}: max|err| ${e.maxAbs.toExponential(2)}`);
    for (const g of [ga, gb, go]) g.destroy();
  }
});

Deno.test("add_into: y = alpha*x + beta*y in place against the float64 reference", async () => {
  const { device } = gpu;
  let seed = 95;
  for (const [n, alpha, beta] of [[1, 1, 1], [513, -0.25, 1], [65536 * 256 + 3, 2, 0.5]]) {
    const rng = new Rng(seed++);
    const x = rng.uniformArray(n);
    const y = rng.uniformArray(n);
    const [gx, gy] = [storageBuffer(device, "x", x), storageBuffer(device, "y", y)];
    const enc = device.createCommandEncoder({ label: "add_into-test" });
    await encodeAddInto(device, enc, gx, gy, n, alpha, beta);
    device.queue.submit([enc.finish()]);
    const e = assertClose(await readF32(device, gy), addRef(x, y, alpha, beta), { atol: 1e-7, rtol: 1e-6, name: `add_into n=${n}` });
    console.log(`add_into n=${n} alpha=${alpha} beta=${beta}: max|err| ${e.maxAbs.toExponential(2)}`);
    for (const g of [gx, gy]) g.destroy();
  }
});
