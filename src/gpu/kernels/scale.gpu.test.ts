import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeScale } from "./scale.ts";
import { scaleRef } from "./scale.ref.ts";

const gpu = await requestGpu();

Deno.test("scale: y = alpha*y in place against the float64 reference, odd sizes", async () => {
  const { device } = gpu;
  let seed = 99;
  for (const [n, alpha] of [[1, -1], [777, 0.125], [300007, 1 / 3]]) {
    const y = new Rng(seed++).uniformArray(n);
    const gy = storageBuffer(device, "y", y);
    const enc = device.createCommandEncoder({ label: "scale-test" });
    await encodeScale(device, enc, gy, n, alpha);
    device.queue.submit([enc.finish()]);
    const e = assertClose(await readF32(device, gy), scaleRef(y, Math.fround(alpha)), { atol: 1e-7, rtol: 1e-6, name: `scale n=${n}` });
    console.log(`scale n=${n} alpha=${alpha}: max|err| ${e.maxAbs.toExponential(2)}`);
    gy.destroy();
  }
});
