import { assertClose, assertSameBits } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { fromF16, toF16 } from "../../model/half.ts";
import { encodeMatmul, type EncodeMatmulOpts, MATMUL_VARIANTS, type MatmulVariant, pickMatmul } from "./matmul.ts";
import { matmulRef } from "../../../tests/gpu-ref/matmul.ref.ts";
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
async function check(
  o: Omit<EncodeMatmulOpts, "bias" | "tail">,
  seed: number,
  withBias = false,
  tail?: { r: number; scale: number },
): Promise<Float32Array> {
  const { device } = gpu;
  const rng = new Rng(seed);
  let a = rng.uniformArray(o.M * o.K);
  let b = rng.uniformArray(o.K * o.N);
  const c0 = rng.uniformArray(o.M * o.N);
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
  await encodeMatmul(device, enc, ga, gb, gc, {
    ...o,
    bias: gbias,
    ...(tail && ga2 && gb2 ? { tail: { a: ga2, b: gb2, ...tail } } : {}),
  });
  device.queue.submit([enc.finish()]);
  const got = await readF32(device, gc);
  const want = matmulRef(a, b, o, o.accumulate ? c0 : undefined);
  if (tail && a2 && b2) {
    const t = matmulRef(a2, b2, { M: o.M, N: o.N, K: tail.r, transB: o.transB });
    want.forEach((x, i) => (want[i] = x + tail.scale * t[i]));
  }
  if (bias) want.forEach((x, i) => (want[i] = x + bias[i % o.N]));
  assertClose(got, want, {
    atol: 1e-4 * Math.sqrt(o.K + (tail?.r ?? 0)),
    rtol: 1e-4,
    name: `matmul ${JSON.stringify(o)}${bias ? " + bias" : ""}${tail ? ` + tail r ${tail.r}` : ""}`,
  });
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

  Deno.test(`matmul ${variant}: accumulation`, async () => {
    await check({ M: 129, N: 65, K: 31, accumulate: true, alpha: -2, variant }, 14);
    await check({ M: 140, N: 150, K: 9, transA: true, accumulate: true, alpha: 0.5, variant }, 15);
  });
}

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
    { M: 200, N: 150, K: 1500, transA: true, variant: "tile96h" },
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
  // The 0.5B q and k/v forward shapes, scaled: split on tile96h (as there), then unsplit, narrow and tile64.
  const shapes: EncodeMatmulOpts[] = [
    { M: 1000, N: 200, K: 1024, transB: true, variant: "tile96h" },
    { M: 1000, N: 24, K: 1024, transB: true, alpha: 0.5, accumulate: true },
    { M: 300, N: 257, K: 40, transB: true, variant: "tile96h", accumulate: true },
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

Deno.test("matmul: the LoRA tail inside tile96h, split and unsplit, either B layout, with accumulate and bias; the separate product elsewhere; against float64", async () => {
  const { tailFused } = await import("./matmul.ts");
  const cases: [Omit<EncodeMatmulOpts, "bias" | "tail">, { r: number; scale: number }, boolean, boolean][] = [
    [{ M: 300, N: 257, K: 40, transB: true, variant: "tile96h" }, { r: 16, scale: 2 }, false, true], // forward: x W^T + s xa B^T
    [{ M: 300, N: 257, K: 40, variant: "tile96h", accumulate: true }, { r: 16, scale: -0.5 }, false, true], // backward: dy W + s dyB A
    [{ M: 1000, N: 200, K: 1024, transB: true, variant: "tile96h" }, { r: 8, scale: 1.5 }, true, true], // split-K: slice 0 carries it
    [{ M: 1000, N: 200, K: 1024, variant: "tile96h", accumulate: true }, { r: 20, scale: 0.25 }, false, true], // r not a multiple of the step
    [{ M: 140, N: 150, K: 33, transB: true, variant: "tile96h" }, { r: 3, scale: 1 }, true, true],
    [{ M: 65, N: 70, K: 33, transB: true, variant: "tile64" }, { r: 16, scale: 2 }, true, false], // separate product
    [{ M: 300, N: 257, K: 40, transB: true, alpha: 0.5, variant: "tile96h" }, { r: 16, scale: 2 }, false, false], // alpha != 1: separate
    [{ M: 1000, N: 200, K: 1024, transB: true, alpha: 0.5, variant: "tile96h" }, { r: 16, scale: 2 }, true, false], // split, separate, after the bias
  ];
  let seed = 1500;
  for (const [o, t, withBias, fuses] of cases) {
    if (tailFused({ ...o, tail: { a: {} as GPUBuffer, b: {} as GPUBuffer, ...t } }) !== fuses) {
      throw new Error(`${JSON.stringify(o)}: fused should be ${fuses}`);
    }
    await check(o, seed++, withBias, t);
  }
});

Deno.test("matmul: split-K of every transpose combination, the 0.5B rank products and k/v split, f16 B", async () => {
  const { splitKSlices } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  let seed = 500;
  // k-fastest A (plain) and B (transposed) slices start Kc columns along rows of the whole K.
  for (const variant of MATMUL_VARIANTS) {
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        const o: EncodeMatmulOpts = {
          M: 70,
          N: 40,
          K: 1100,
          transA,
          transB,
          alpha: 0.5,
          accumulate: transA !== transB,
          variant,
        };
        if (splitKSlices(o) < 2) throw new Error(`expected ${JSON.stringify(o)} to be split`);
        await check(o, seed++);
      }
    }
  }
  // Auto choice: x A^T (N = r, transposed B) and dy B (N = r, plain): narrow and split; a (k/v)-like
  // product on tile96h with a small grid, with an f16 B where the device has it.
  for (
    const o of [{ M: 300, N: 16, K: 900, transB: true }, { M: 300, N: 16, K: 1300 }, {
      M: 260,
      N: 128,
      K: 1024,
      transB: true,
      bF16: gpu.f16,
    }] as EncodeMatmulOpts[]
  ) {
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
      [{ M: 6144, N: 16, K: 896, transB: true }, 7],
      [{ M: 6144, N: 16, K: 4864 }, 11],
      [{ M: 6144, N: 128, K: 896, transB: true }, 3],
      [{ M: 6144, N: 896, K: 896, transB: true }, 3],
      [{ M: 6144, N: 896, K: 4864 }, 3],
      [{ M: 6144, N: 4864, K: 896, transB: true }, 1],
      [{ M: 6144, N: 896, K: 128 }, 1],
      [{ M: 16, N: 896, K: 6144, transA: true }, 48],
    ];
    for (const [o, n] of want) if (sl(o) !== n) throw new Error(`${JSON.stringify(o)}: ${sl(o)} slices, want ${n}`);
    setPerfSwitches({ wideSplit: 1 });
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
    // [product, slices at the defaults (narrowWg=1024, narrowMinK=128), at 256 / 256, at
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
    const sets: Partial<PerfSwitches>[] = [
      {},
      { narrowWg: 256, narrowMinK: 256 },
      { narrowWg: 1024, narrowMinK: 256 },
      { narrowWg: 2048, narrowMinK: 64 },
    ];
    for (const [i, set] of sets.entries()) {
      setPerfSwitches({ ...prev, wideSplit: 3, ...set });
      for (const [o, ...want] of shapes) {
        if (sl(o) !== want[i]) {
          throw new Error(`${JSON.stringify(set)} ${JSON.stringify(o)}: ${sl(o)} slices, want ${want[i]}`);
        }
      }
    }
    // Scaled-down rank products on the narrow kernel, every transpose (with a bias where B is transposed): K = 1300 asks
    // for 20 slices (1300 / 64), dispatched as 17 of 80 (the slice rounded up to the step of 16), the last 20 long.
    setPerfSwitches({ ...prev, narrowWg: 2048, narrowMinK: 64 });
    let seed = 560;
    for (const transA of [false, true]) {
      for (const transB of [false, true]) {
        const o: EncodeMatmulOpts = {
          M: 300,
          N: 16,
          K: 1300,
          transA,
          transB,
          accumulate: transA,
          alpha: transB ? 0.5 : 1,
        };
        if (pickMatmul(o).variant !== "narrow" || sl(o) !== 20) {
          throw new Error(`${JSON.stringify(o)}: ${pickMatmul(o).variant}, ${sl(o)} slices`);
        }
        labels.length = 0;
        await check(o, seed++, transB);
        if (!labels.some((l) => l.includes("narrow")) || !labels.some((l) => l.includes("splitk"))) {
          throw new Error(`passes ${labels.join(", ")}`);
        }
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
    const ga = storageBuffer(device, "a", a),
      gb = storageBuffer(device, "b", b),
      gc = storageBuffer(device, "c", o.M * o.N * 4);
    poison(device, gc);
    await encodeMatmul(device, enc, ga, gb, gc, o);
    runs.push({ o, a, b, gc });
  }
  device.queue.submit([enc.finish()]);
  for (const r of runs) {
    assertClose(await readF32(device, r.gc), matmulRef(r.a, r.b, r.o), {
      atol: 1e-4 * Math.sqrt(r.o.K),
      rtol: 1e-4,
      name: `split ${JSON.stringify(r.o)}`,
    });
  }
  const { releaseTransients } = await import("../device.ts");
  releaseTransients(device);
});

Deno.test("matmul tile96h at contracted steps 8 and 16: odd sizes, every transpose, vec4 and scalar loads, split-K, f16 B, the LoRA tail as quad and scalar loads, vec4 and scalar stores; against float64, the kernel by its label", async () => {
  const { t128Step, vecLoads, storesVec4, splitKSlices } = await import("./matmul.ts");
  await withLabels(async (_prev, labels) => {
    const v = (o: EncodeMatmulOpts) => {
      const x = vecLoads(o);
      return `${x.a ? "A" : "-"}${x.b ? "B" : "-"}`;
    };
    // The vec4 loads per operand (pure): k-fastest operands need K (and split slices) on quads, m- / n-fastest ones M / N.
    const k = (o: EncodeMatmulOpts, want: string) => {
      if (v(o) !== want) throw new Error(`vecLoads ${JSON.stringify(o)}: ${v(o)}, want ${want}`);
    };
    k({ M: 132, N: 136, K: 36, variant: "tile96h" }, "AB");
    k({ M: 132, N: 136, K: 37, variant: "tile96h" }, "-B");
    k({ M: 132, N: 136, K: 37, transA: true, transB: true, variant: "tile96h" }, "A-");
    k({ M: 130, N: 136, K: 36, transA: true, variant: "tile96h" }, "-B");
    k({ M: 132, N: 131, K: 36, variant: "tile96h" }, "A-");
    k({ M: 130, N: 257, K: 33, variant: "tile96h" }, "--");
    k({ M: 132, N: 136, K: 36, transB: true, bF16: true, variant: "tile96h" }, "A-");
    k({ M: 132, N: 136, K: 36, variant: "tile64" }, "--");
    k({ M: 200, N: 152, K: 1501, transA: true, transB: true, variant: "tile96h" }, "A-"); // a slice ends mid-vec4
    if (
      vecLoads({ M: 132, N: 136, K: 36, variant: "tile96h" }, 4, 0).a ||
      vecLoads({ M: 132, N: 136, K: 36, variant: "tile96h" }, 0, 8).b
    ) throw new Error("binding offsets");
    // vec4 stores where C's rows and binding are on quads; never on other kernels.
    const o = { M: 300, N: 260, K: 40, variant: "tile96h" as const };
    if (
      storesVec4(o, 4) || !storesVec4(o, 32) || storesVec4({ ...o, N: 258 }) ||
      storesVec4({ ...o, variant: "tile64" }) || storesVec4({ M: 6144, N: 16, K: 896 })
    ) throw new Error("vec4 stores where they should not be, or none where they should");
    let seed = 900, ran = 0;
    const run = async (o: EncodeMatmulOpts, bias = false, tail?: { r: number; scale: number }, label?: RegExp) => {
      labels.length = 0;
      await check(o, seed++, bias, tail);
      if (!labels.some((l) => l.startsWith("matmul_t96h") && l.includes("_k16") === (o.step === 16))) {
        throw new Error(`${JSON.stringify(o)} ran ${labels.join(", ")}`);
      }
      if (label && !labels.some((l) => label.test(l))) {
        throw new Error(`${JSON.stringify(o)} ran ${labels.join(", ")}, want ${label}`);
      }
      ran++;
    };
    for (const step of [8, 16] as const) {
      if (t128Step(gpu.device) < step) {
        console.log(
          `step ${step}: skipped, the device's workgroup memory (${gpu.device.limits.maxComputeWorkgroupStorageSize} bytes) is short`,
        );
        continue;
      }
      const t = { variant: "tile96h" as const, step };
      // Ragged tiles on both sides of 96 rows and 128 columns, K not a multiple of the step, every transpose: vec4
      // loads of both operands (multiples of 4), of one, of neither.
      // (Step 8 on fewer shapes: its variants compile again, slowly on lavapipe; the loads and stores are the same code.)
      for (
        const [M, N, K] of step === 16
          ? [[1, 1, 1], [97, 136, 36], [130, 257, 33], [300, 257, 33], [516, 132, 100], [132, 136, 37]]
          : [[97, 136, 36], [132, 136, 37]]
      ) {
        for (const transA of [false, true]) {
          for (const transB of [false, true]) await run({ M, N, K, transA, transB, alpha: 0.75, ...t });
        }
      }
      await run({ M: 140, N: 150, K: 9, transA: true, accumulate: true, alpha: 0.5, ...t });
      await run({ M: 140, N: 152, K: 12, transB: true, ...t });
      for (const transA of [false, true]) {
        for (const transB of step === 16 ? [false, true] : [transA]) {
          const o: EncodeMatmulOpts = {
            M: 200,
            N: 152,
            K: 1500,
            transA,
            transB,
            alpha: 0.5,
            accumulate: transA === transB,
            ...t,
          };
          if (splitKSlices(o) < 2) throw new Error(`expected ${JSON.stringify(o)} to be split`);
          await run(o);
        }
      }
      if (gpu.f16) await run({ M: 260, N: 128, K: 1024, transB: true, bF16: true, ...t });
      // The LoRA tail: quad loads where r (and N for b2 (r, N)) is a multiple of 4, else scalar; vec4 stores where N is.
      for (
        const [M, N, K, r, transB, quads] of [
          [300, 260, 40, 16, true, true],
          [300, 260, 40, 20, false, true],
          [97, 132, 36, 8, true, true],
          [300, 260, 40, 6, true, false],
          [130, 258, 24, 16, false, false],
        ] as const
      ) {
        await run({ M, N, K, transB, ...t }, true, { r, scale: 1.5 }, quads ? /_tail_tq/ : /_tail(?!_tq)/);
      }
      await run({ M: 130, N: 136, K: 60, transA: true, accumulate: true, alpha: 1.5, ...t }, false, undefined, /_c4$/);
      await run({ M: 300, N: 258, K: 40, ...t }, true, undefined, /^matmul_t96h[^c]*$/);
      await run({ M: 130, N: 130, K: 1500, accumulate: true, ...t }, false, { r: 16, scale: 1.25 });
    }
    console.log(`tile96h: ${ran} products checked against float64`);
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
    if (S !== 8 || bytes <= 64 * 2 ** 20) {
      throw new Error(`the product should split 8 ways over 64 MiB: ${S} slices, ${bytes} bytes`);
    }
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
    if (small.size >= bytes) {
      throw new Error("a call scratch this large already exists: the test can't place the split scratch first");
    }
    if (splitPartials(device, bytes, []).buffer === small) throw new Error("too small a call scratch was used");
    const inSplit = await run();
    const call = sharedScratch(device, CALL_SCRATCH, bytes);
    const p = splitPartials(device, bytes, []);
    if (p.buffer !== call || p.size !== bytes) throw new Error("the wide partials should go to the call scratch");
    if (splitPartials(device, bytes, [call]).buffer === call) {
      throw new Error("a product reading the call scratch must not write its partials there");
    }
    if (splitPartials(device, 64 * 2 ** 20, []).buffer === call) {
      throw new Error("a split within 64 MiB stays in the split scratch");
    }
    const inCall = await run();
    assertSameBits(inCall, inSplit, "partials in the call scratch", "in the split scratch");
    assertClose(inCall, matmulRef(a, b, o), { atol: 1e-3, rtol: 1e-4, name: "wide split" });
    ga.destroy();
    gb.destroy();
  } finally {
    setPerfSwitches(prev);
  }
});
