import { assertClose, assertSameBits } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { fromF16, toF16 } from "../../model/half.ts";
import { encodeMatmul, type EncodeMatmulOpts, MATMUL_VARIANTS, type MatmulVariant, pickMatmul, tileKernel } from "./matmul.ts";
import { matmulRef } from "./matmul.ref.ts";
import type { PerfSwitches } from "../switches.ts";

const gpu = await requestGpu();

/**
 * Runs `body` with `prev`, the switches on entry (restored after it), and `labels`, the labels of the compute passes it
 * dispatches (tests/pass-labels.ts): the tests of experimental switches check by them that the switched kernel ran.
 */
async function withLabels(body: (prev: Readonly<PerfSwitches>, labels: string[]) => Promise<void>): Promise<void> {
  const { setPerfSwitches } = await import("../switches.ts");
  const { watchPassLabels } = await import("../../../tests/pass-labels.ts");
  const prev = setPerfSwitches({});
  const watch = watchPassLabels(gpu.device);
  try {
    await body(prev, watch.labels);
  } finally {
    watch.stop();
    setPerfSwitches(prev);
  }
}

/**
 * Runs `o` on the GPU and compares with the float64 reference; f16 operands are rounded to f16 for both; `withBias`
 * adds an (N) bias to every row (EncodeMatmulOpts.bias). Returns the GPU's C.
 */
async function check(o: Omit<EncodeMatmulOpts, "bias" | "tail">, seed: number, withBias = false, tail?: { r: number; scale: number }): Promise<Float32Array> {
  const { device } = gpu;
  const rng = new Rng(seed);
  const batch = o.batch ?? 1;
  let a = rng.uniformArray((o.broadcastA ? 1 : batch) * o.M * o.K);
  let b = rng.uniformArray((o.broadcastB ? 1 : batch) * o.K * o.N);
  const c0 = rng.uniformArray(batch * o.M * o.N);
  const ha = o.aF16 ? toF16(a) : undefined, hb = o.bF16 ? toF16(b) : undefined;
  if (ha) a = fromF16(ha);
  if (hb) b = fromF16(hb);
  const ga = storageBuffer(device, "a", ha ?? a);
  const gb = storageBuffer(device, "b", hb ?? b);
  const gc = storageBuffer(device, "c", c0);
  const bias = withBias ? rng.uniformArray(o.N) : undefined;
  const gbias = bias ? storageBuffer(device, "bias", bias) : undefined;
  // The tail's a2 (M, r) and b2 ((N, r) when transB, else (r, N)).
  const a2 = tail ? rng.uniformArray(o.M * tail.r) : undefined, b2 = tail ? rng.uniformArray(o.N * tail.r) : undefined;
  const ga2 = a2 ? storageBuffer(device, "a2", a2) : undefined, gb2 = b2 ? storageBuffer(device, "b2", b2) : undefined;
  if (!o.accumulate) poison(device, gc);
  const enc = device.createCommandEncoder();
  await encodeMatmul(device, enc, ga, gb, gc, { ...o, bias: gbias, ...(tail && ga2 && gb2 ? { tail: { a: ga2, b: gb2, ...tail } } : {}) });
  device.queue.submit([enc.finish()]);
  const got = await readF32(device, gc);
  const want = matmulRef(a, b, o, o.accumulate ? c0 : undefined);
  if (tail && a2 && b2) {
    const t = matmulRef(a2, b2, { M: o.M, N: o.N, K: tail.r, transB: o.transB });
    want.forEach((x, i) => (want[i] = x + tail.scale * t[i]));
  }
  if (bias) want.forEach((x, i) => (want[i] = x + bias[i % o.N]));
  assertClose(got, want, { atol: 1e-4 * Math.sqrt(o.K + (tail?.r ?? 0)), rtol: 1e-4, name: `matmul ${JSON.stringify(o)}${bias ? " + bias" : ""}${tail ? ` + tail r ${tail.r}` : ""}` });
  for (const x of [ga, gb, gc, gbias, ga2, gb2]) x?.destroy();
  return got;
}

for (const variant of MATMUL_VARIANTS) {
  Deno.test(`matmul ${variant}: odd sizes, every transpose combination, against the float64 reference`, async () => {
    let seed = 1;
    // 130 x 257 spans two 128-wide tiles and a ragged third; 20 x 90 runs the narrow kernel transposed.
    for (const [M, N, K] of [[1, 1, 1], [7, 13, 5], [65, 63, 17], [100, 37, 129], [130, 257, 33], [20, 90, 41]]) {
      for (const transA of [false, true]) {
        for (const transB of [false, true]) {
          await check({ M, N, K, transA, transB, alpha: 0.75, variant }, seed++);
        }
      }
    }
  });

  Deno.test(`matmul ${variant}: batched, broadcast operands and accumulation`, async () => {
    await check({ M: 33, N: 70, K: 19, batch: 3, variant }, 11);
    await check({ M: 33, N: 70, K: 19, batch: 3, broadcastB: true, transB: true, variant }, 12);
    await check({ M: 9, N: 66, K: 40, batch: 2, broadcastA: true, variant }, 13);
    await check({ M: 129, N: 65, K: 31, accumulate: true, alpha: -2, variant }, 14);
    await check({ M: 140, N: 150, K: 9, batch: 2, broadcastA: true, transA: true, accumulate: true, alpha: 0.5, variant }, 15);
  });
}

Deno.test("matmul: the kernel chosen per shape (LoRA rank products go to the narrow kernel)", () => {
  const pick = (o: EncodeMatmulOpts): [MatmulVariant, boolean] => {
    const p = pickMatmul(o);
    return [p.variant, p.swap];
  };
  const eq = (got: [MatmulVariant, boolean], want: [MatmulVariant, boolean], what: string) => {
    if (got[0] !== want[0] || got[1] !== want[1]) throw new Error(`${what}: got ${got}, want ${want}`);
  };
  eq(pick({ M: 6144, N: 896, K: 896, transB: true }), [tileKernel(), false], "x W^T");
  eq(pick({ M: 6144, N: 16, K: 896, transB: true }), ["narrow", false], "x A^T (N = r)");
  eq(pick({ M: 16, N: 896, K: 6144, transA: true }), ["narrow", true], "dA = (dy B)^T x (M = r)");
  eq(pick({ M: 100, N: 70, K: 64 }), ["tile64", false], "small f32");
  eq(pick({ M: 100, N: 70, K: 64, bF16: true }), ["tile64", false], "small with f16 B");
  // K <= 128 with both sides >= 128 (the k/v dx, a LoRA tail's own product): tile64, measured faster on the H200, unless
  // a LoRA tail would run inside tile128 (switch loraTail).
  const t = { a: {} as GPUBuffer, b: {} as GPUBuffer, r: 16, scale: 2 };
  eq(pick({ M: 6144, N: 896, K: 128 }), ["tile64", false], "k/v dx (K = 128)");
  eq(pick({ M: 6144, N: 4864, K: 16, transB: true, accumulate: true }), ["tile64", false], "(x A^T) B^T (K = r)");
  eq(pick({ M: 6144, N: 896, K: 129 }), [tileKernel(), false], "K = 129");
  eq(pick({ M: 6144, N: 896, K: 128, tail: t }), [tileKernel(), false], "k/v dx with its LoRA tail inside");
  eq(pick({ M: 6144, N: 896, K: 128, tail: t, alpha: 0.5 }), ["tile64", false], "a tail that cannot run inside (alpha != 1)");
});

Deno.test("matmul: f16 operands (shader-f16 devices) accumulate in f32, on every kernel", async () => {
  if (!gpu.f16) {
    console.log("shader-f16 not available on this adapter: skipped");
    return;
  }
  let seed = 60;
  for (const variant of MATMUL_VARIANTS) {
    for (const [M, N, K] of [[7, 13, 5], [130, 37, 129], [20, 90, 41]]) {
      for (const transB of [false, true]) {
        await check({ M, N, K, transB, bF16: true, alpha: 0.75, variant }, seed++);
        await check({ M, N, K, transA: true, transB, aF16: true, accumulate: true, variant }, seed++);
      }
    }
  }
  console.log(`shader-f16: ${seed - 60} f16 products checked against float64 on f16-rounded inputs`);
  // Auto choice with an f16 weight: the forward's x W^T and the backward's dy W; a narrow side transposed.
  await check({ M: 300, N: 200, K: 96, transB: true, bF16: true }, seed++);
  await check({ M: 300, N: 96, K: 200, bF16: true }, seed++);
  await check({ M: 12, N: 96, K: 200, bF16: true }, seed++);
  await check({ M: 12, N: 96, K: 1200, transA: true, bF16: true }, seed++);
});

Deno.test("matmul: split-K (long contracted dimension, few output tiles) matches the reference", async () => {
  const { splitKSlices } = await import("./matmul.ts");
  // The weight-gradient shapes: dW (out, in) = dY^T X with K = tokens; uneven last slice included.
  const shapes: EncodeMatmulOpts[] = [
    { M: 16, N: 70, K: 1000, transA: true },
    { M: 70, N: 16, K: 777, transA: true, alpha: 0.5, accumulate: true },
    { M: 1, N: 33, K: 2049, transA: true },
    { M: 200, N: 150, K: 1500, transA: true, variant: "tile128" },
    { M: 200, N: 150, K: 1500, transA: true, variant: "tile64", accumulate: true },
    { M: 40, N: 50, K: 900, transA: true, variant: "narrow" },
  ];
  for (const [i, o] of shapes.entries()) {
    const slices = splitKSlices(o);
    if (slices < 2) throw new Error(`expected ${JSON.stringify(o)} to be split, got ${slices}`);
    await check(o, 40 + i);
  }
});

Deno.test("matmul: a bias added to every row, in the split-K reduce and after an unsplit product, every kernel, with accumulate and alpha", async () => {
  const { splitKSlices } = await import("./matmul.ts");
  // The 0.5B q and k/v forward shapes, scaled: split on tile128 (as there), then unsplit, narrow and tile64.
  const shapes: EncodeMatmulOpts[] = [
    { M: 1000, N: 200, K: 1024, transB: true, variant: "tile128" },
    { M: 1000, N: 24, K: 1024, transB: true, alpha: 0.5, accumulate: true },
    { M: 300, N: 257, K: 40, transB: true, variant: "tile128", accumulate: true },
    { M: 65, N: 70, K: 33, variant: "tile64", alpha: -1.5 },
    { M: 20, N: 9, K: 17, transB: true, variant: "narrow" },
    { M: 6, N: 90, K: 41, variant: "narrow" },
  ];
  for (const [i, o] of shapes.entries()) {
    if (i < 2 && splitKSlices(o) < 2) throw new Error(`expected ${JSON.stringify(o)} to be split`);
    if (i >= 2 && splitKSlices(o) !== 1) throw new Error(`expected ${JSON.stringify(o)} unsplit`);
    await check(o, 70 + i, true);
  }
});

Deno.test("matmul: the LoRA tail (switch loraTail) inside tile128, split and unsplit, either B layout, with accumulate and bias; the separate product elsewhere and with the switch off; against float64", async () => {
  const { tailFused } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  const prev = setPerfSwitches({});
  try {
    const cases: [Omit<EncodeMatmulOpts, "bias" | "tail">, { r: number; scale: number }, boolean, boolean][] = [
      [{ M: 300, N: 257, K: 40, transB: true, variant: "tile128" }, { r: 16, scale: 2 }, false, true], // forward: x W^T + s xa B^T
      [{ M: 300, N: 257, K: 40, variant: "tile128", accumulate: true }, { r: 16, scale: -0.5 }, false, true], // backward: dy W + s dyB A
      [{ M: 1000, N: 200, K: 1024, transB: true, variant: "tile128" }, { r: 8, scale: 1.5 }, true, true], // split-K: slice 0 carries it
      [{ M: 1000, N: 200, K: 1024, variant: "tile128", accumulate: true }, { r: 20, scale: 0.25 }, false, true], // r not a multiple of the step
      [{ M: 140, N: 150, K: 33, transB: true, variant: "tile128" }, { r: 3, scale: 1 }, true, true],
      [{ M: 65, N: 70, K: 33, transB: true, variant: "tile64" }, { r: 16, scale: 2 }, true, false], // separate product
      [{ M: 300, N: 257, K: 40, transB: true, alpha: 0.5, variant: "tile128" }, { r: 16, scale: 2 }, false, false], // alpha != 1: separate
      [{ M: 1000, N: 200, K: 1024, transB: true, alpha: 0.5, variant: "tile128" }, { r: 16, scale: 2 }, true, false], // split, separate, after the bias
    ];
    let seed = 1500;
    for (const on of [1, 0] as const) {
      setPerfSwitches({ loraTail: on });
      for (const [o, t, withBias, fuses] of cases) {
        const want = on === 1 && fuses;
        if (tailFused({ ...o, tail: { a: {} as GPUBuffer, b: {} as GPUBuffer, ...t } }) !== want) throw new Error(`loraTail=${on} ${JSON.stringify(o)}: fused should be ${want}`);
        await check(o, seed++, withBias, t);
      }
    }
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul: split-K of every transpose combination (switch splitK general), the 0.5B rank products and k/v split, f16 B", async () => {
  const { splitKSlices } = await import("./matmul.ts");
  const { perfSwitches, setPerfSwitches } = await import("../switches.ts");
  if (perfSwitches().splitK !== "general") throw new Error("run with the default switches");
  let seed = 500;
  // k-fastest A (plain) and B (transposed) slices start Kc columns along rows of the whole K.
  for (const variant of MATMUL_VARIANTS) {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        const o: EncodeMatmulOpts = { M: 70, N: 40, K: 1100, transA, transB, alpha: 0.5, accumulate: transA !== transB, variant };
        // The rank kernel splits its cols form (A transposed) only; its rows form has a workgroup per 16 rows.
        if (variant === "rank" && !transA) {
          if (splitKSlices(o) !== 1) throw new Error(`expected ${JSON.stringify(o)} unsplit`);
        } else if (splitKSlices(o) < 2) throw new Error(`expected ${JSON.stringify(o)} to be split`);
        await check(o, seed++);
      }
    }
  }
  // Auto choice: x A^T (N = r, transposed B) and dy B (N = r, plain): narrow and split; a (k/v)-like
  // product on tile128 with a small grid, with an f16 B where the device has it.
  for (const o of [{ M: 300, N: 16, K: 900, transB: true }, { M: 300, N: 16, K: 1300 }, { M: 260, N: 128, K: 1024, transB: true, bF16: gpu.f16 }] as EncodeMatmulOpts[]) {
    if (splitKSlices(o) < 2) throw new Error(`expected ${JSON.stringify(o)} to be split`);
    await check(o, seed++);
  }
  // The 0.5B step: x A^T 6144x16x896 and dy B 6144x16x4864 (96 narrow tiles; 7 and 11 slices under the narrow kernel's
  // defaults narrowWg=1024, narrowMinK=128) and k/v x W^T 6144x128x896 (48 tiles) split; of the projections, the
  // 896-wide outputs (336 128-tiles) with K >= 768 split in 3 (switch wideSplit), the 4,864-wide ones
  // (1,824 tiles) and K = 128 do not.
  const sl = (o: EncodeMatmulOpts) => splitKSlices(o);
  const prev = setPerfSwitches({ wideSplit: 3 });
  try {
    const want: [EncodeMatmulOpts, number][] = [
      [{ M: 6144, N: 16, K: 896, transB: true }, 7], [{ M: 6144, N: 16, K: 4864 }, 11], [{ M: 6144, N: 128, K: 896, transB: true }, 3],
      [{ M: 6144, N: 896, K: 896, transB: true }, 3], [{ M: 6144, N: 896, K: 4864 }, 3], [{ M: 6144, N: 4864, K: 896, transB: true }, 1],
      [{ M: 6144, N: 896, K: 128 }, 1], [{ M: 16, N: 896, K: 6144, transA: true }, 48],
    ];
    for (const [o, n] of want) if (sl(o) !== n) throw new Error(`${JSON.stringify(o)}: ${sl(o)} slices, want ${n}`);
    setPerfSwitches({ splitK: "transA", wideSplit: 1 });
    if (sl({ M: 6144, N: 16, K: 896, transB: true }) !== 1 || sl({ M: 16, N: 896, K: 6144, transA: true }) !== 48) throw new Error("splitK transA: only transposed-A products split");
    if (sl({ M: 6144, N: 896, K: 4864 }) !== 1) throw new Error("wideSplit=1: no 128-tile product splits");
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul: the narrow kernel's split under the switches narrowWg / narrowMinK (the LoRA rank products): slice counts at the 0.5B shapes, every transpose and uneven slices against float64; other kernels' splits unchanged", async () => {
  const { splitKSlices } = await import("./matmul.ts");
  await withLabels(async (prev, labels) => {
    const { setPerfSwitches } = await import("../switches.ts");
    const sl = (o: EncodeMatmulOpts) => splitKSlices(o);
    // [product, slices at the defaults (narrowWg=1024, narrowMinK=128 since 2026-12-05), at the earlier 256 / 256, at
    // narrowWg=1024,narrowMinK=256, at narrowWg=2048,narrowMinK=64]: x A^T (96 tiles), x A^T of down, dB = dy^T xa (76
    // tiles), dA = (dyB)^T x (run transposed: 14 tiles); and two products of other kernels.
    const shapes: [EncodeMatmulOpts, number, number, number, number][] = [
      [{ M: 6144, N: 16, K: 896, transB: true }, 7, 3, 3, 14],
      [{ M: 6144, N: 16, K: 4864, transB: true }, 11, 3, 11, 22],
      [{ M: 4864, N: 16, K: 6144, transA: true }, 14, 4, 14, 27],
      [{ M: 16, N: 896, K: 6144, transA: true }, 48, 19, 24, 96],
      [{ M: 6144, N: 896, K: 4864 }, 3, 3, 3, 3],
      [{ M: 6144, N: 128, K: 896, transB: true }, 3, 3, 3, 3],
    ];
    const sets: Partial<PerfSwitches>[] = [{}, { narrowWg: 256, narrowMinK: 256 }, { narrowWg: 1024, narrowMinK: 256 }, { narrowWg: 2048, narrowMinK: 64 }];
    for (const [i, set] of sets.entries()) {
      setPerfSwitches({ ...prev, wideSplit: 3, ...set });
      for (const [o, ...want] of shapes) if (sl(o) !== want[i]) throw new Error(`${JSON.stringify(set)} ${JSON.stringify(o)}: ${sl(o)} slices, want ${want[i]}`);
    }
    // Scaled-down rank products on the narrow kernel, every transpose (with a bias where B is transposed): K = 1300 asks
    // for 20 slices (1300 / 64), dispatched as 17 of 80 (the slice rounded up to the step of 16), the last 20 long.
    setPerfSwitches({ ...prev, narrowWg: 2048, narrowMinK: 64 });
    let seed = 560;
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        const o: EncodeMatmulOpts = { M: 300, N: 16, K: 1300, transA, transB, accumulate: transA, alpha: transB ? 0.5 : 1 };
        if (pickMatmul(o).variant !== "narrow" || sl(o) !== 20) throw new Error(`${JSON.stringify(o)}: ${pickMatmul(o).variant}, ${sl(o)} slices`);
        labels.length = 0;
        await check(o, seed++, transB);
        if (!labels.some((l) => l.includes("narrow")) || !labels.some((l) => l.includes("splitk"))) throw new Error(`passes ${labels.join(", ")}`);
      }
    }
  });
});

Deno.test("matmul: split-K scratch growing between two products recorded in one encoder keeps the first valid", async () => {
  const { device } = gpu;
  const rng = new Rng(77);
  const shapes = [{ M: 8, N: 16, K: 600, transA: true }, { M: 40, N: 60, K: 900, transA: true }];
  const enc = device.createCommandEncoder();
  const runs = [];
  for (const o of shapes) {
    const a = rng.uniformArray(o.M * o.K), b = rng.uniformArray(o.K * o.N);
    const ga = storageBuffer(device, "a", a), gb = storageBuffer(device, "b", b), gc = storageBuffer(device, "c", o.M * o.N * 4);
    poison(device, gc);
    await encodeMatmul(device, enc, ga, gb, gc, o);
    runs.push({ o, a, b, gc });
  }
  device.queue.submit([enc.finish()]);
  for (const r of runs) assertClose(await readF32(device, r.gc), matmulRef(r.a, r.b, r.o), { atol: 1e-4 * Math.sqrt(r.o.K), rtol: 1e-4, name: `split ${JSON.stringify(r.o)}` });
  const { releaseTransients } = await import("../device.ts");
  releaseTransients(device);
});

Deno.test("matmul tile128 with contracted steps of 8, 16 and 32 (switch tk; the other tests run the default): odd sizes, every transpose, batched, split-K, f16 B, against float64", async () => {
  const { t128Step } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  const prev = setPerfSwitches({});
  try {
    for (const step of [8, 16, 32] as const) {
      setPerfSwitches({ tk: step });
      if (t128Step(gpu.device) !== step) {
        console.log(`tk=${step}: skipped, the device's workgroup memory (${gpu.device.limits.maxComputeWorkgroupStorageSize} bytes) is short of ${step === 32 ? "32,768" : "16,896"}; a smaller step runs instead`);
        continue;
      }
      let seed = 900;
      // K not a multiple of the step (a partial last step), ragged tiles on every side, every transpose.
      for (const [M, N, K] of [[1, 1, 1], [65, 63, 17], [130, 257, 33], [129, 140, 100]]) {
        for (const transA of [false, true]) {
          for (const transB of [false, true]) await check({ M, N, K, transA, transB, alpha: 0.75, variant: "tile128" }, seed++);
        }
      }
      await check({ M: 140, N: 150, K: 9, batch: 2, broadcastA: true, transA: true, accumulate: true, alpha: 0.5, variant: "tile128" }, seed++);
      await check({ M: 200, N: 150, K: 1500, transA: true, variant: "tile128" }, seed++); // split-K slices
      await check({ M: 260, N: 128, K: 1024, transB: true, bF16: gpu.f16, variant: "tile128" }, seed++);
    }
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul tile128 with vec4 loads (switch vload), steps 8, 16 and 32: ragged tiles, every transpose, split-K, accumulate, the scalar fallback, f16 B; against float64 and bitwise the scalar loads", async () => {
  const { t128Step, vecLoads, vecOperands, splitKSlices } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  const prev = setPerfSwitches({ vload: 0 });
  try {
    const v = (o: EncodeMatmulOpts) => {
      const x = vecLoads(o);
      return `${x.a ? "A" : "-"}${x.b ? "B" : "-"}`;
    };
    // The choice (pure): off under vload=0; per operand under vload=1.
    if (v({ M: 132, N: 136, K: 36, variant: "tile128" }) !== "--") throw new Error("vload=0: no vec4 loads");
    setPerfSwitches({ vload: 1 });
    const k = (o: EncodeMatmulOpts, want: string) => {
      if (v(o) !== want) throw new Error(`vecLoads ${JSON.stringify(o)}: ${v(o)}, want ${want}`);
    };
    k({ M: 132, N: 136, K: 36, variant: "tile128" }, "AB");
    k({ M: 132, N: 136, K: 37, variant: "tile128" }, "-B"); // odd K: k-fastest A refused, B (K, N) n-fastest keeps it
    k({ M: 132, N: 136, K: 37, transA: true, transB: true, variant: "tile128" }, "A-");
    k({ M: 130, N: 136, K: 36, transA: true, variant: "tile128" }, "-B"); // M not a multiple of 4 for m-fastest A
    k({ M: 132, N: 131, K: 36, variant: "tile128" }, "A-");
    k({ M: 130, N: 257, K: 33, variant: "tile128" }, "--");
    k({ M: 132, N: 136, K: 36, transB: true, bF16: true, variant: "tile128" }, "A-"); // f16 B keeps scalar loads
    k({ M: 132, N: 136, K: 36, variant: "tile64" }, "--"); // only tile128
    k({ M: 132, N: 136, K: 36, variant: "tile128p" }, "--");
    k({ M: 200, N: 152, K: 1500, transA: true, variant: "tile128" }, "AB"); // split, slices 304 long, the last 284
    k({ M: 200, N: 152, K: 1501, transA: true, variant: "tile128" }, "AB"); // split, last slice 285 long: k-major operands only
    k({ M: 200, N: 152, K: 1501, transA: true, transB: true, variant: "tile128" }, "A-"); // k-fastest B^T refused: a slice ends mid-vec4
    k({ M: 200, N: 152, K: 1502, variant: "tile128" }, "-B");
    if (vecLoads({ M: 132, N: 136, K: 36, variant: "tile128" }, 4, 0).a || !vecLoads({ M: 132, N: 136, K: 36, variant: "tile128" }, 256, 4).a) throw new Error("binding offsets");
    if (vecLoads({ M: 132, N: 136, K: 36, variant: "tile128" }, 0, 8).b) throw new Error("binding offset of B");
    const lay = { M: 8, N: 8, K: 16, kTotal: 0, strideA: 128, strideB: 128, transA: false, transB: true, aF16: false, bF16: false, offsetA: 0, offsetB: 0 };
    if (!vecOperands(lay).a || !vecOperands(lay).b) throw new Error("vecOperands aligned");
    if (vecOperands({ ...lay, strideA: 130 }).a || vecOperands({ ...lay, kTotal: 30 }).b || vecOperands({ ...lay, kTotal: 30 }).a) throw new Error("vecOperands strides / kTotal");
    let seed = 1200, ran = 0;
    for (const tk of [8, 16, 32] as const) {
      setPerfSwitches({ tk });
      if (t128Step(gpu.device) !== tk) {
        console.log(`vload tk=${tk}: skipped, the device's workgroup memory (${gpu.device.limits.maxComputeWorkgroupStorageSize} bytes) is short`);
        continue;
      }
      const run = async (o: EncodeMatmulOpts, want: string, bitwise = false) => {
        k(o, want);
        const got = await check(o, seed);
        if (bitwise) {
          setPerfSwitches({ vload: 0 });
          try {
            if (v(o) !== "--") throw new Error("vload=0 chose vec4 loads");
            const ref = await check(o, seed);
            assertSameBits(got, ref, `vload tk=${tk} ${JSON.stringify(o)}`, "scalar");
          } finally {
            setPerfSwitches({ vload: 1 });
          }
        }
        seed++;
        ran++;
      };
      // Ragged M and N (multiples of 4), K not a multiple of the step: every transpose on vec4 loads of both operands.
      for (const [M, N, K] of [[4, 8, 4], [132, 260, 36], [252, 136, 100]]) {
        for (const transA of [false, true]) {
          for (const transB of [false, true]) await run({ M, N, K, transA, transB, alpha: 0.75, variant: "tile128" }, "AB", M === 132);
        }
      }
      // One operand vectorised, the other scalar (odd K, odd N, M not a multiple of 4); neither.
      await run({ M: 132, N: 136, K: 37, variant: "tile128" }, "-B", true);
      await run({ M: 132, N: 136, K: 37, transA: true, transB: true, variant: "tile128" }, "A-", true);
      await run({ M: 132, N: 131, K: 36, variant: "tile128" }, "A-");
      await run({ M: 130, N: 136, K: 36, transA: true, variant: "tile128" }, "-B");
      await run({ M: 130, N: 257, K: 33, variant: "tile128" }, "--");
      // Accumulate with alpha; batched with a broadcast A.
      await run({ M: 132, N: 136, K: 44, transB: true, accumulate: true, alpha: -1.5, variant: "tile128" }, "AB", true);
      await run({ M: 140, N: 152, K: 12, batch: 2, broadcastA: true, transA: true, accumulate: true, alpha: 0.5, variant: "tile128" }, "AB");
      await run({ M: 140, N: 152, K: 12, batch: 3, broadcastB: true, transB: true, variant: "tile128" }, "AB");
      // Split-K with an uneven last slice (284 long), one whose last slice is 285 long (k-major operands), every transpose.
      for (const transA of [false, true]) {
        for (const transB of [false, true]) {
          const o: EncodeMatmulOpts = { M: 200, N: 152, K: 1500, transA, transB, alpha: 0.5, accumulate: transA === transB, variant: "tile128" };
          if (splitKSlices(o) < 2) throw new Error(`expected ${JSON.stringify(o)} to be split`);
          await run(o, "AB", transA && !transB);
        }
      }
      await run({ M: 200, N: 152, K: 1501, transA: true, variant: "tile128" }, "AB", true);
      await run({ M: 200, N: 152, K: 1501, transA: true, transB: true, accumulate: true, alpha: 2, variant: "tile128" }, "A-");
      if (gpu.f16) await run({ M: 260, N: 128, K: 1024, transB: true, bF16: true, variant: "tile128" }, "A-");
    }
    console.log(`vload: ${ran} products checked against float64`);
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul tile256 and tile128h (switches t256, t128h): steps 8, 16 and 32 (tile128h), vec4 and scalar loads, every transpose, ragged tiles, batched, split-K, the LoRA tail; against float64 and bitwise tile128; the choice per shape", async () => {
  const { t128Step, t256Step, tailFused, T256_MIN_TILES } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  // tile128h itself: t96=1 (the default since 2026-12-05) would send its products to tile96h (tested below).
  const prev = setPerfSwitches({ t96: 0 });
  try {
    // The choice: off by default; under t256=1 the f32 products tile128 would run with enough 256x128 tiles.
    const pick = (o: EncodeMatmulOpts) => pickMatmul(o).variant;
    setPerfSwitches({ t128h: 0 });
    if (pick({ M: 6144, N: 4864, K: 896, transB: true }) !== "tile128") throw new Error("t256=0 must keep tile128");
    setPerfSwitches({ t256: 1 });
    if (pick({ M: 6144, N: 4864, K: 896, transB: true }) !== "tile256") throw new Error("t256=1: gate/up should run on tile256");
    if (pick({ M: 6144, N: 896, K: 4864 }) !== "tile128") throw new Error(`t256=1: 168 tiles (< ${T256_MIN_TILES}) stay on tile128`);
    if (pick({ M: 6144, N: 896, K: 128, tail: { a: {} as GPUBuffer, b: {} as GPUBuffer, r: 16, scale: 1 } }) !== "tile128") throw new Error("t256=1: a small grid stays on tile128");
    if (pick({ M: 6144, N: 4864, K: 896, batch: 2 }) !== "tile128") throw new Error("t256=1: batched products stay on tile128");
    if (pick({ M: 6144, N: 16, K: 896, transB: true }) !== "narrow") throw new Error("t256=1: rank products stay narrow");
    setPerfSwitches({ t256: 0, t128h: 1 });
    if (pick({ M: 6144, N: 896, K: 4864 }) !== "tile128h" || pick({ M: 6144, N: 4864, K: 896, transB: true }) !== "tile128h") throw new Error("t128h=1: what tile128 ran goes to tile128h");
    setPerfSwitches({ t256: 1, t128h: 1 });
    if (pick({ M: 6144, N: 896, K: 4864 }) !== "tile128h" || pick({ M: 6144, N: 4864, K: 896, transB: true }) !== "tile256") throw new Error("t256=1,t128h=1: wide products on tile256, the rest on tile128h");
    if (pick({ M: 6144, N: 896, K: 128 }) !== "tile64") throw new Error("t128h=1: short K without a tail stays on tile64");
    setPerfSwitches({ t128h: 0 });
    let seed = 2600, ran = 0;
    for (const tk of [8, 16, 32] as const) {
      setPerfSwitches({ tk, t256: 1 });
      if (tk === 32 && t128Step(gpu.device) !== 32) {
        console.log(`tile128h tk=32: skipped, the device's workgroup memory (${gpu.device.limits.maxComputeWorkgroupStorageSize} bytes) is short of 32,768`);
        continue;
      }
      if (tk !== 32 && t256Step(gpu.device) !== tk) {
        console.log(`tile256 tk=${tk}: skipped, the device's workgroup memory (${gpu.device.limits.maxComputeWorkgroupStorageSize} bytes) is short`);
        continue;
      }
      for (const [variant, vload] of [["tile256", 1], ["tile256", 0], ["tile128h", 1], ["tile128h", 0]] as const) {
        if (tk === 32 && (variant === "tile256" || vload === 0)) continue; // tile256 runs 16 at most (t256Step); 32: vec4 loads only (the suite's time)
        setPerfSwitches({ vload });
        // Ragged tiles on every side (M past one and two 256-row tiles), K not a multiple of the step; unsplit, so the
        // sums run in tile128's k order: the same bits.
        for (const [M, N, K] of vload === 1 ? [[4, 8, 4], [260, 136, 36], [300, 257, 33], [516, 132, 100]] : [[260, 136, 36], [300, 257, 33]]) {
          for (const transA of [false, true]) {
            for (const transB of [false, true]) {
              const o = { M, N, K, transA, transB, alpha: 0.75 };
              const got = await check({ ...o, variant }, seed);
              const ref = await check({ ...o, variant: "tile128" }, seed);
              assertSameBits(got, ref, `${variant} tk=${tk} vload=${vload} ${JSON.stringify(o)}`, "tile128");
              seed++;
              ran++;
            }
          }
        }
        if (vload === 0) continue; // the scalar loads: the ragged products above (batches, splits and tails load alike)
        await check({ M: 300, N: 150, K: 9, batch: 2, broadcastA: true, transA: true, accumulate: true, alpha: 0.5, variant }, seed++);
        await check({ M: 300, N: 152, K: 1500, transA: true, variant }, seed++); // split-K slices
        await check({ M: 300, N: 152, K: 1500, transB: true, variant }, seed++);
        // The LoRA tail inside the kernel: forward (B^T, with a bias) and backward (accumulate, r not a multiple of the step, split).
        const tails: [Omit<EncodeMatmulOpts, "bias" | "tail">, { r: number; scale: number }, boolean][] = [
          [{ M: 300, N: 257, K: 40, transB: true, variant }, { r: 16, scale: 2 }, true],
          [{ M: 520, N: 200, K: 1024, variant, accumulate: true }, { r: 20, scale: 0.25 }, false],
          [{ M: 260, N: 150, K: 33, transB: true, variant }, { r: 3, scale: 1 }, false],
        ];
        for (const [o, t, withBias] of tails) {
          if (!tailFused({ ...o, tail: { a: {} as GPUBuffer, b: {} as GPUBuffer, ...t } })) throw new Error(`${variant} ${JSON.stringify(o)}: the tail should run inside`);
          await check(o, seed++, withBias, t);
        }
      }
    }
    if (ran === 0) throw new Error("tile256: no step ran");
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul tile96h (switch t96: 96-row tiles, a 12 x 8 block a thread): what tile128h runs goes there; bitwise tile128h at steps 8 and 16, every transpose, vec4 and scalar loads, the LoRA tail; split-K against float64", async () => {
  const { setPerfSwitches } = await import("../switches.ts");
  await withLabels(async (prev, labels) => {
    setPerfSwitches({ ...prev, t96: 1 });
    if (pickMatmul({ M: 6144, N: 896, K: 4864 }).variant !== "tile96h" || tileKernel() !== "tile96h") throw new Error("t96=1: what tile128h ran goes to tile96h");
    setPerfSwitches({ ...prev, t96: 1, t128h: 0 });
    if (pickMatmul({ M: 6144, N: 896, K: 4864 }).variant !== "tile128") throw new Error("t96=1, t128h=0: tile128 stays");
    // wideSplit counts tile96h's grid in 128x128 tiles' area: demo pretraining's 16384 x 384 products (513 96-row tiles)
    // split as on tile128h (384 tiles < WIDE_SPLIT_TILES; 2 slices: the 64 MiB scratch).
    const { splitKSlices } = await import("./matmul.ts");
    const pre = { M: 16384, N: 384, K: 1024 };
    setPerfSwitches({ ...prev });
    const on128h = splitKSlices(pre);
    setPerfSwitches({ ...prev, t96: 1 });
    if (on128h < 2 || splitKSlices(pre) !== on128h) throw new Error(`t96=1: 16384 x 384 x 1024 in ${splitKSlices(pre)} slices, tile128h ${on128h}`);
    let seed = 3600;
    for (const tk of [16, 8] as const) {
      for (const vload of tk === 16 ? [1, 0] as const : [1] as const) {
        setPerfSwitches({ ...prev, tk, vload });
        // Ragged rows on both sides of 96 (one, two and six tiles), columns over 128; K short: no split-K, so the two kernels' sums are the same fmas.
        for (const [M, N, K] of tk === 16 && vload === 1 ? [[4, 8, 4], [97, 136, 36], [300, 257, 33], [516, 132, 100]] : [[97, 136, 36], [300, 257, 33]]) {
          for (const transA of [false, true]) {
            for (const transB of [false, true]) {
              const o = { M, N, K, transA, transB, alpha: 0.75 };
              const want = await check({ ...o, variant: "tile128h" }, seed);
              labels.length = 0;
              const got = await check({ ...o, variant: "tile96h" }, seed++);
              if (labels.length !== 1 || !labels[0].startsWith("matmul_t96h")) throw new Error(`tile96h ${JSON.stringify(o)} ran ${labels.join(", ")}`);
              assertSameBits(got, want, `tile96h tk=${tk} vload=${vload} ${JSON.stringify(o)}`, "tile128h");
            }
          }
        }
        for (const transB of [false, true]) {
          const o = { M: 300, N: 257, K: 40, transB };
          const want = await check({ ...o, variant: "tile128h" }, seed, true, { r: 20, scale: 2 });
          labels.length = 0;
          const got = await check({ ...o, variant: "tile96h" }, seed++, true, { r: 20, scale: 2 });
          if (!labels.some((l) => l.startsWith("matmul_t96h") && l.includes("_tail"))) throw new Error(`tile96h with a tail ran ${labels.join(", ")}`);
          assertSameBits(got, want, `tile96h tail tk=${tk} ${JSON.stringify(o)}`, "tile128h");
        }
      }
      setPerfSwitches({ ...prev, tk });
      await check({ M: 300, N: 152, K: 1500, transA: true, variant: "tile96h" }, seed++); // split-K slices
      await check({ M: 300, N: 152, K: 1500, transB: true, variant: "tile96h" }, seed++);
      await check({ M: 260, N: 200, K: 300, variant: "tile96h", accumulate: true }, seed++, false, { r: 20, scale: 0.25 });
      await check({ M: 130, N: 140, K: 7, variant: "tile96h" }, seed++); // one partial step
    }
  });
});

Deno.test("matmul: the LoRA tail of tile128h, tile96h and tile256 as quad loads (switch tq): bitwise the scalar tail at steps 8 and 16, both b2 layouts, ragged rows and columns; the scalar tail where r or N is not a multiple of 4", async () => {
  const { setPerfSwitches } = await import("../switches.ts");
  await withLabels(async (prev, labels) => {
    let seed = 3700;
    for (const [variant, tk] of [["tile128h", 16], ["tile128h", 8], ["tile96h", 16], ["tile96h", 8], ["tile256", 16]] as const) {
      // [M, N, K, r, b2 (N, r)]; the last two: r = 6, and b2 (r, N) with N = 258: the scalar tail.
      for (const [M, N, K, r, tB, quads] of [[300, 260, 40, 16, true, true], [300, 260, 40, 20, false, true], [97, 132, 36, 8, true, true], [300, 260, 40, 6, true, false], [130, 258, 24, 16, false, false]] as const) {
        const o = { M, N, K, transB: tB, variant };
        setPerfSwitches({ ...prev, tk, tq: 0 });
        const want = await check(o, seed, true, { r, scale: 1.5 });
        setPerfSwitches({ ...prev, tk, tq: 1 });
        labels.length = 0;
        const got = await check(o, seed++, true, { r, scale: 1.5 });
        if (labels.filter((l) => l.includes("_tail_tq")).length !== (quads ? 1 : 0)) throw new Error(`tq=1 ${variant} tk=${tk} ${JSON.stringify({ M, N, K, r, tB })} ran ${labels.join(", ")}`);
        assertSameBits(got, want, `tq=1 ${variant} tk=${tk} ${JSON.stringify({ M, N, K, r, tB })}`, "tq=0");
      }
    }
  });
});

Deno.test("matmul tile128h and tile256 under the experimental switch ka (A's tile k-fastest in workgroup memory): bitwise the default on ragged tiles, both B layouts; ka=2 only where B is transposed; split-K and the LoRA tail against float64", async () => {
  const { kFastABytes } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  const room = gpu.device.limits.maxComputeWorkgroupStorageSize;
  // The kernels dispatched, by label: the switch must have changed the kernel, not been skipped.
  await withLabels(async (prev, labels) => {
    let seed = 3400, ran = 0;
    const cases: [("tile128h" | "tile256"), number, 8 | 16, 0 | 1, number[][]][] = [
      ["tile128h", 128, 16, 1, [[4, 8, 4], [260, 136, 36], [516, 132, 100]]],
      ["tile128h", 128, 16, 0, [[300, 257, 33]]],
      ["tile128h", 128, 8, 1, [[260, 136, 36]]],
      ["tile256", 256, 16, 1, [[520, 257, 40]]],
    ];
    for (const [variant, tm, tk, vload, shapes] of cases) {
      if (kFastABytes(tm, tk) > room) {
        console.log(`ka: ${variant} at a step of ${tk} skipped, the device's workgroup memory (${room} bytes) is short of ${kFastABytes(tm, tk)}`);
        continue;
      }
      const stem = variant === "tile256" ? "matmul_t256_" : "matmul_t128h_";
      for (const [M, N, K] of shapes) {
        for (const transB of [false, true]) {
          const o = { M, N, K, transB, alpha: 0.75, variant };
          setPerfSwitches({ ...prev, tk, vload, ka: 0 });
          const want = await check(o, seed);
          setPerfSwitches({ ...prev, tk, vload, ka: 1 });
          labels.length = 0;
          const got = await check(o, seed++);
          if (!labels[0]?.startsWith(stem) || !labels[0].includes("_ka")) throw new Error(`ka=1 ${JSON.stringify(o)} ran ${labels.join(", ")}`);
          assertSameBits(got, want, `ka=1 tk=${tk} vload=${vload} ${JSON.stringify(o)}`, "ka=0");
        }
      }
      setPerfSwitches({ ...prev, tk, ka: 1 });
      await check({ M: 300, N: 152, K: 1500, transB: true, variant }, seed++); // split-K slices
      await check({ M: 300, N: 257, K: 40, transB: true, variant }, seed++, true, { r: 16, scale: 2 });
      await check({ M: 520, N: 200, K: 1024, variant, accumulate: true }, seed++, false, { r: 20, scale: 0.25 });
      labels.length = 0;
      await check({ M: 260, N: 136, K: 36, transA: true, variant }, seed++); // A transposed: the default kernel
      if (labels.length !== 1 || labels[0].includes("_ka")) throw new Error(`ka: A transposed ran ${labels.join(", ")}`);
      // ka=2: only where B is transposed too.
      setPerfSwitches({ ...prev, tk, ka: 2 });
      for (const transB of [false, true]) {
        labels.length = 0;
        await check({ M: 260, N: 136, K: 36, transB, variant }, seed++);
        if (labels.length !== 1 || labels[0].includes("_ka") !== transB) throw new Error(`ka=2 transB=${transB} ran ${labels.join(", ")}`);
      }
      ran++;
    }
    if (ran === 0) throw new Error("ka: no step ran");
  });
});

Deno.test("matmul: the tile kernels' epilogue as vec4 stores (switch st4): bitwise the scalar stores on tile128, tile128h, tile96h and tile256, ragged tiles, every transpose, alpha, accumulate, bias, batched, split-K, the LoRA tail; scalar stores where N is not a multiple of 4 or C's binding is not on 16 bytes", async () => {
  const { storesVec4 } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  await withLabels(async (prev, labels) => {
    let seed = 4100;
    for (const variant of ["tile128", "tile128h", "tile96h", "tile256"] as const) {
      // [o, with a bias, LoRA tail r]: N = 258 and 130 are not multiples of 4 (the scalar stores run under st4 too).
      const cases: [Omit<EncodeMatmulOpts, "bias" | "tail">, boolean, number][] = [
        [{ M: 300, N: 260, K: 40, variant }, false, 0],
        [{ M: 97, N: 132, K: 36, transA: true, transB: true, alpha: 0.75, variant }, true, 0],
        [{ M: 300, N: 260, K: 40, transB: true, accumulate: true, variant }, true, 16],
        [{ M: 130, N: 136, K: 60, batch: 3, transA: true, accumulate: true, alpha: 1.5, variant }, false, 0],
        [{ M: 300, N: 152, K: 1500, transB: true, variant }, true, 8], // split-K: the slices' partials in the scratch
        [{ M: 300, N: 258, K: 40, variant }, true, 0],
        [{ M: 130, N: 130, K: 1500, accumulate: true, variant }, false, 16],
      ];
      for (const [o, bias, r] of cases) {
        const tail = r ? { r, scale: 1.25 } : undefined;
        setPerfSwitches({ ...prev, st4: 0 });
        const want = await check(o, seed, bias, tail);
        setPerfSwitches({ ...prev, st4: 1 });
        labels.length = 0;
        const got = await check(o, seed++, bias, tail);
        const vec = o.N % 4 === 0;
        if (storesVec4({ ...o }) !== vec || labels.some((l) => l.endsWith("_c4")) !== vec || !labels[0]?.startsWith("matmul_t")) {
          throw new Error(`st4=1 ${JSON.stringify(o)}: storesVec4 ${storesVec4({ ...o })}, ran ${labels.join(", ")}`);
        }
        assertSameBits(got, want, `st4=1 ${JSON.stringify(o)}${bias ? " + bias" : ""}${r ? ` + tail r ${r}` : ""}`, "st4=0");
      }
    }
    // C's binding off 16 bytes (a window of a larger buffer): scalar stores; on 16 bytes: vec4. Other kernels never.
    setPerfSwitches({ ...prev, st4: 1 });
    const o = { M: 300, N: 260, K: 40, variant: "tile128h" as const };
    if (storesVec4(o, 4) || !storesVec4(o, 32) || storesVec4({ ...o, variant: "tile64" }) || storesVec4({ M: 6144, N: 16, K: 896 })) throw new Error("st4: vec4 stores where they should not be, or none where they should");
    setPerfSwitches({ ...prev, st4: 0 });
    if (storesVec4(o)) throw new Error("st4=0: scalar stores");
  });
});

Deno.test("a wide split's partials (over 64 MiB, wideSplit 5-8) in the call scratch where it already holds them: bitwise the split scratch's product; never where the product reads that scratch, nor a split within 64 MiB", async () => {
  const { device } = gpu;
  const { CALL_SCRATCH, sharedScratch } = await import("../device.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  const { splitKSlices, splitPartials } = await import("./matmul.ts");
  const prev = setPerfSwitches({ wideSplit: 8 });
  try {
    // 2304 x 1024 output (144 tiles, under WIDE_SPLIT_TILES) over K = 2048: 8 slices of 9 MiB, 72 MiB of partials.
    const o: EncodeMatmulOpts = { M: 2304, N: 1024, K: 2048, transB: true };
    const S = splitKSlices(o), bytes = 4 * S * o.M * o.N;
    if (S !== 8 || bytes <= 64 * 2 ** 20) throw new Error(`the product should split 8 ways over 64 MiB: ${S} slices, ${bytes} bytes`);
    const rng = new Rng(31);
    const a = rng.uniformArray(o.M * o.K), b = rng.uniformArray(o.N * o.K);
    const [ga, gb] = [storageBuffer(device, "a", a), storageBuffer(device, "b", b)];
    const run = async () => {
      const gc = storageBuffer(device, "c", o.M * o.N * 4);
      poison(device, gc);
      const enc = device.createCommandEncoder();
      await encodeMatmul(device, enc, ga, gb, gc, o);
      device.queue.submit([enc.finish()]);
      const c = await readF32(device, gc);
      gc.destroy();
      return c;
    };
    // This test file's process has no call scratch of this size yet: a small one, then one that holds the partials.
    const small = sharedScratch(device, CALL_SCRATCH, 16);
    if (small.size >= bytes) throw new Error("a call scratch this large already exists: the test can't place the split scratch first");
    if (splitPartials(device, bytes, []).buffer === small) throw new Error("too small a call scratch was used");
    const inSplit = await run();
    const call = sharedScratch(device, CALL_SCRATCH, bytes);
    const p = splitPartials(device, bytes, []);
    if (p.buffer !== call || p.size !== bytes) throw new Error("the wide partials should go to the call scratch");
    if (splitPartials(device, bytes, [call]).buffer === call) throw new Error("a product reading the call scratch must not write its partials there");
    if (splitPartials(device, 64 * 2 ** 20, []).buffer === call) throw new Error("a split within 64 MiB stays in the split scratch");
    const inCall = await run();
    assertSameBits(inCall, inSplit, "partials in the call scratch", "in the split scratch");
    assertClose(inCall, matmulRef(a, b, o), { atol: 1e-3, rtol: 1e-4, name: "wide split" });
    ga.destroy();
    gb.destroy();
  } finally {
    setPerfSwitches(prev);
  }
});
