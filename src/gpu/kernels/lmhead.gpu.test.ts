import { assert, assertClose, assertRejects, assertSameBits } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import {
  encodeLmheadBackward,
  encodeLmheadForward,
  type LmHeadBackwardOpts,
  lmheadChunk,
  type LmHeadForwardOpts,
  lmheadPartialsBytes,
  lmheadScratchBytes,
  lmheadWindow,
} from "./lmhead.ts";
import { lmheadBackwardRef, type LmHeadDims, lmheadForwardRef } from "../../../tests/gpu-ref/lmhead.ref.ts";

const gpu = await requestGpu();
const IGNORE = 0xffffffff;

interface Case {
  d: LmHeadDims;
  fwd: LmHeadForwardOpts;
  bwd: LmHeadBackwardOpts;
  entropy: boolean;
  fullFinetune: boolean;
  seed: number;
  /** Start dh and dW from random values and add into them (bwd.accumulateDh / accumulateDw). */
  accumulate?: boolean;
}

async function check(c: Case) {
  const { device } = gpu;
  const { d } = c;
  const rng = new Rng(c.seed);
  const h = rng.uniformArray(d.N * d.C);
  const w = rng.uniformArray(d.V * d.C);
  const targets = new Uint32Array(d.N).map((_, n) => (n === 1 ? IGNORE : n === 2 ? d.V - 1 : rng.int(d.V)));
  const g = rng.uniformArray(d.N);
  const gEnt = rng.uniformArray(d.N);
  const dh0 = rng.uniformArray(d.N * d.C);
  const dw0 = rng.uniformArray(d.V * d.C);
  const b = {
    h: storageBuffer(device, "h", h),
    w: storageBuffer(device, "w", w),
    targets: storageBuffer(device, "targets", targets),
    g: storageBuffer(device, "g", g),
    gEnt: storageBuffer(device, "gEnt", gEnt),
    logp: storageBuffer(device, "logp", d.N * 4),
    lse: storageBuffer(device, "lse", d.N * 4),
    entropy: storageBuffer(device, "entropy", d.N * 4),
    partials: storageBuffer(device, "partials", lmheadPartialsBytes(d, c.fwd)),
    scratch: storageBuffer(device, "scratch", lmheadScratchBytes(device, d, c.bwd)),
    dh: storageBuffer(device, "dh", c.accumulate ? dh0 : d.N * d.C * 4),
    dw: storageBuffer(device, "dw", c.accumulate ? dw0 : d.V * d.C * 4),
  };
  for (const x of [b.logp, b.lse, b.entropy, b.partials, b.scratch]) poison(device, x);
  if (!c.accumulate) { for (const x of [b.dh, b.dw]) poison(device, x); }
  const enc = device.createCommandEncoder({ label: "lmhead-test" });
  await encodeLmheadForward(device, enc, b, d, c.fwd);
  await encodeLmheadBackward(
    device,
    enc,
    { ...b, gEnt: c.entropy ? b.gEnt : undefined, dw: c.fullFinetune ? b.dw : undefined },
    d,
    { ...c.bwd, accumulateDh: c.accumulate, accumulateDw: c.accumulate },
  );
  device.queue.submit([enc.finish()]);
  const want = lmheadForwardRef(h, w, targets, d, c.fwd.scale);
  const grad = lmheadBackwardRef(h, w, targets, g, c.entropy ? gEnt : undefined, d, c.bwd.scale);
  if (c.accumulate) {
    grad.dh.forEach((v, i) => (grad.dh[i] = v + dh0[i]));
    grad.dw.forEach((v, i) => (grad.dw[i] = v + dw0[i]));
  }
  const tag = `${JSON.stringify(d)} ${JSON.stringify(c.fwd)} ${JSON.stringify(c.bwd)} entropy ${c.entropy}${
    c.accumulate ? " accumulate" : ""
  }`;
  const tol = { atol: 1e-4, rtol: 1e-4 };
  const e = [
    assertClose(await readF32(device, b.logp), want.logp, { ...tol, name: `logp ${tag}` }),
    assertClose(await readF32(device, b.lse), want.lse, { ...tol, name: `lse ${tag}` }),
    assertClose(await readF32(device, b.entropy), want.entropy, { ...tol, name: `entropy ${tag}` }),
    assertClose(await readF32(device, b.dh), grad.dh, { ...tol, name: `dh ${tag}` }),
  ];
  if (c.fullFinetune) e.push(assertClose(await readF32(device, b.dw), grad.dw, { ...tol, name: `dW ${tag}` }));
  console.log(
    `${tag}: max |err| logp, lse, entropy, dh${c.fullFinetune ? ", dW" : ""}: ${
      e.map((x) => x.maxAbs.toExponential(2)).join(" ")
    }`,
  );
  for (const x of Object.values(b)) x.destroy();
}

Deno.test("lmhead forward and backward: odd C, V not a multiple of the slice or chunk, against float64", async () => {
  await check({
    d: { N: 1, C: 1, V: 3 },
    fwd: { vocabPerGroup: 64 },
    bwd: { chunk: 64 },
    entropy: true,
    fullFinetune: true,
    seed: 1,
  });
  await check({
    d: { N: 37, C: 45, V: 300 },
    fwd: { vocabPerGroup: 64 },
    bwd: { chunk: 64 },
    entropy: false,
    fullFinetune: true,
    seed: 2,
  });
  // Two 64-column tiles per workgroup: pins naga not re-zeroing a loop-local accumulator array.
  await check({
    d: { N: 37, C: 45, V: 300 },
    fwd: { vocabPerGroup: 128 },
    bwd: { chunk: 128 },
    entropy: true,
    fullFinetune: true,
    seed: 3,
  });
  await check({ d: { N: 70, C: 33, V: 1001 }, fwd: {}, bwd: {}, entropy: true, fullFinetune: false, seed: 4 });
  await check({
    d: { N: 5, C: 130, V: 515 },
    fwd: { vocabPerGroup: 192 },
    bwd: { chunk: 192 },
    entropy: true,
    fullFinetune: true,
    seed: 5,
  });
  // Logits at temperature 0.7 (scale 1/0.7), as policy-gradient losses over sampled tokens use.
  await check({
    d: { N: 21, C: 40, V: 333 },
    fwd: { vocabPerGroup: 128, scale: 1 / 0.7 },
    bwd: { chunk: 64, scale: 1 / 0.7 },
    entropy: true,
    fullFinetune: true,
    seed: 7,
  });
  await check({
    d: { N: 9, C: 17, V: 150 },
    fwd: { vocabPerGroup: 64 },
    bwd: { chunk: 64 },
    entropy: false,
    fullFinetune: true,
    seed: 8,
    accumulate: true,
  });
});

Deno.test("lmhead: rows past one and two 128-row tiles (the backward's dz tiles), C not a multiple of the step of 16, V not a multiple of the slice, windows, temperature, against float64", async () => {
  await check({
    d: { N: 1, C: 1, V: 3 },
    fwd: { vocabPerGroup: 128 },
    bwd: { chunk: 64 },
    entropy: true,
    fullFinetune: false,
    seed: 11,
  });
  await check({
    d: { N: 130, C: 45, V: 300 },
    fwd: { vocabPerGroup: 128 },
    bwd: { chunk: 128 },
    entropy: true,
    fullFinetune: true,
    seed: 12,
  });
  await check({
    d: { N: 257, C: 33, V: 1001 },
    fwd: { vocabPerGroup: 256 },
    bwd: {},
    entropy: false,
    fullFinetune: false,
    seed: 13,
  });
  await check({
    d: { N: 70, C: 130, V: 2500 },
    fwd: { scale: 1 / 0.7 },
    bwd: { scale: 1 / 0.7 },
    entropy: true,
    fullFinetune: false,
    seed: 14,
  });
  // W in windows of 4096 rows (the binding capped at 1 MiB): 9000 x 64.
  await check({
    d: { N: 3, C: 64, V: 9000 },
    fwd: { bindingBytes: 1 << 20 },
    bwd: { bindingBytes: 1 << 20 },
    entropy: true,
    fullFinetune: false,
    seed: 15,
  });
});

Deno.test("lmhead: W in several binding windows (the binding capped at 1 MiB), the last one partial, against float64", async () => {
  // 9000 x 64 f32 = 2.3 MB: the forward binds W 4096 rows at a time (4096, 4096, 808) and the
  // backward's chunk is capped from its 8192 default to 4096 rows, on every engine.
  const d: LmHeadDims = { N: 3, C: 64, V: 9000 };
  const cap = { bindingBytes: 1 << 20 };
  const window = lmheadWindow(gpu.device, d, cap);
  assert(
    window === 4096 && lmheadChunk(gpu.device, d, cap) === 4096,
    `window ${window}, chunk ${lmheadChunk(gpu.device, d, cap)}`,
  );
  await check({ d, fwd: cap, bwd: cap, entropy: true, fullFinetune: true, seed: 6 });
});

// 530000 x 64 f32 = 135.7 MB: more than lavapipe's 128 MiB maxStorageBufferBindingSize, so there the
// windows come from the device's own limit. Dawn binds 1 GiB on SwiftShader, where this W fits one
// binding, nothing is windowed and the case repeats the same pipelines as the others at a size
// SwiftShader took 26-56 s over: it runs where the limit is below W (the capped case above covers
// the windows on every engine).
const bigHead: LmHeadDims = { N: 3, C: 64, V: 530000 };
Deno.test({
  name: "lmhead: W larger than the device's storage binding limit is streamed through windows",
  ignore: bigHead.V * bigHead.C * 4 <= gpu.device.limits.maxStorageBufferBindingSize,
  fn: async () => {
    assert(lmheadWindow(gpu.device, bigHead) < bigHead.V, "W fits one binding");
    await check({ d: bigHead, fwd: {}, bwd: {}, entropy: true, fullFinetune: false, seed: 6 });
  },
});

Deno.test("lmhead: a partials buffer sized for another slice width is rejected", async () => {
  const { device } = gpu;
  const d: LmHeadDims = { N: 4, C: 8, V: 200 };
  const mk = (label: string, bytes: number) => storageBuffer(device, label, bytes);
  const b = {
    h: mk("h", 4 * 8 * 4),
    w: mk("w", 200 * 8 * 4),
    targets: mk("targets", 16),
    logp: mk("logp", 16),
    lse: mk("lse", 16),
    entropy: mk("entropy", 16),
    partials: mk("partials-wide", lmheadPartialsBytes(d, { vocabPerGroup: 128 })),
  };
  const enc = device.createCommandEncoder({ label: "lmhead-size-check" });
  await assertRejects(
    () => encodeLmheadForward(device, enc, b, d, { vocabPerGroup: 64 }),
    /lmhead: partials \(partials-wide\) has 128 bytes, needs 256/,
  );
  for (const x of Object.values(b)) x.destroy();
});
