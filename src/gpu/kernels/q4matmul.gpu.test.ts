import { assert, assertClose, assertRejects, assertSameBits } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import {
  encodeQ4Matmul,
  encodeQ4MatmulTransposed,
  pickQ4,
  Q4_VARIANTS,
  q4TailFuses,
  type Q4Variant,
  uploadQ4,
} from "./q4matmul.ts";
import {
  dequantQ4Ref,
  q4Geometry,
  q4MatmulRef,
  q4MatmulTransposedRef,
  type Q4Weight,
} from "../../../tests/gpu-ref/q4matmul.ref.ts";

const gpu = await requestGpu();

function randomWeight(rng: Rng, Nout: number, K: number, withZp: boolean): Q4Weight {
  const { nb, zpBytes } = q4Geometry(K);
  const packed = new Uint8Array(Nout * nb * 16);
  for (let i = 0; i < packed.length; i++) packed[i] = rng.int(256);
  const scales = rng.uniformArray(Nout * nb, 0.01, 0.2);
  const zeroPoints = withZp ? new Uint8Array(Nout * zpBytes).map(() => rng.int(256)) : undefined;
  return { Nout, K, packed, scales, zeroPoints };
}

async function check(
  N: number,
  K: number,
  Nout: number,
  withZp: boolean,
  seed: number,
  variant?: Q4Variant,
  step?: 8 | 16,
): Promise<{ y: Float32Array; dx: Float32Array }> {
  const { device } = gpu;
  const rng = new Rng(seed);
  const w = randomWeight(rng, Nout, K, withZp);
  const x = rng.uniformArray(N * K);
  const dy = rng.uniformArray(N * Nout);
  const wg = uploadQ4(device, "w", w);
  const gx = storageBuffer(device, "x", x);
  const gdy = storageBuffer(device, "dy", dy);
  const gy = storageBuffer(device, "y", N * Nout * 4);
  const gdx = storageBuffer(device, "dx", N * K * 4);
  poison(device, gy);
  poison(device, gdx);
  const enc = device.createCommandEncoder({ label: "q4-test" });
  await encodeQ4Matmul(device, enc, gx, wg, gy, N, { variant, step });
  await encodeQ4MatmulTransposed(device, enc, gdy, wg, gdx, N, { variant, step });
  device.queue.submit([enc.finish()]);
  const tag = `${variant ?? "auto"} N ${N} K ${K} Nout ${Nout} zp ${withZp}`;
  // Dequantized values reach |(15 - 0) * 0.2| = 3, so products are O(sqrt(K)) in size.
  const y = await readF32(device, gy), dx = await readF32(device, gdx);
  const ey = assertClose(y, q4MatmulRef(x, w, N), { atol: 2e-5 * K, rtol: 1e-4, name: `q4matmul ${tag}` });
  const edx = assertClose(dx, q4MatmulTransposedRef(dy, w, N), {
    atol: 2e-5 * Nout,
    rtol: 1e-4,
    name: `q4matmul_t ${tag}`,
  });
  console.log(`${tag}: y max |err| ${ey.maxAbs.toExponential(2)}, dx max |err| ${edx.maxAbs.toExponential(2)}`);
  for (const b of [gx, gdy, gy, gdx, wg.packed, wg.scales]) b.destroy();
  wg.zeroPoints?.destroy();
  return { y, dx };
}

/** y (N, Nout) += x W^T + bias and dx (N, K) += dy W into random existing outputs, against float64 (zero points on). */
async function checkAccumulate(
  N: number,
  K: number,
  Nout: number,
  seed: number,
  variant: Q4Variant,
  tag: string,
  step?: 8 | 16,
) {
  const { device } = gpu;
  const rng = new Rng(seed);
  const w = randomWeight(rng, Nout, K, true);
  const x = rng.uniformArray(N * K);
  const dy = rng.uniformArray(N * Nout);
  const y0 = rng.uniformArray(N * Nout);
  const dx0 = rng.uniformArray(N * K);
  const bias = rng.uniformArray(Nout);
  const gb = storageBuffer(device, "bias", bias);
  const wg = uploadQ4(device, "w", w);
  const [gx, gdy, gy, gdx] = [
    storageBuffer(device, "x", x),
    storageBuffer(device, "dy", dy),
    storageBuffer(device, "y", y0),
    storageBuffer(device, "dx", dx0),
  ];
  const enc = device.createCommandEncoder({ label: `q4-${tag.replaceAll(" ", "-")}-test` });
  await encodeQ4Matmul(device, enc, gx, wg, gy, N, { accumulate: true, bias: gb, variant, step });
  await encodeQ4MatmulTransposed(device, enc, gdy, wg, gdx, N, { accumulate: true, variant, step });
  device.queue.submit([enc.finish()]);
  const wantY = q4MatmulRef(x, w, N).map((v, i) => v + bias[i % Nout] + y0[i]);
  const wantDx = q4MatmulTransposedRef(dy, w, N).map((v, i) => v + dx0[i]);
  assertClose(await readF32(device, gy), wantY, { atol: 2e-5 * K, rtol: 1e-4, name: `q4matmul ${tag}` });
  assertClose(await readF32(device, gdx), wantDx, { atol: 2e-5 * Nout, rtol: 1e-4, name: `q4matmul_t ${tag}` });
  for (const b of [gx, gdy, gy, gdx, gb, wg.packed, wg.scales]) b.destroy();
  wg.zeroPoints?.destroy();
}

Deno.test("q4 dequantizer: the layout's nibble order, by hand", () => {
  // Block 0 of row 0: byte 0 = 0x21 holds element 0 = 1 (low) and element 1 = 2 (high).
  // Zero points byte 0 = 0x53: block 0 -> 3 (low), block 1 -> 5 (high).
  const packed = new Uint8Array(2 * 16);
  packed[0] = 0x21;
  packed[16 + 15] = 0xf0; // block 1, element 31 (K index 63) = 15, element 30 = 0
  const w: Q4Weight = {
    Nout: 1,
    K: 64,
    packed,
    scales: new Float32Array([0.5, 2]),
    zeroPoints: new Uint8Array([0x53]),
  };
  const d = dequantQ4Ref(w);
  assert(d[0] === (1 - 3) * 0.5 && d[1] === (2 - 3) * 0.5 && d[2] === -1.5, `block 0: ${d.slice(0, 3)}`);
  assert(d[62] === (0 - 5) * 2 && d[63] === (15 - 5) * 2, `block 1: ${d.slice(62)}`);
  const noZp = dequantQ4Ref({ ...w, zeroPoints: undefined });
  assert(noZp[0] === (1 - 8) * 0.5 && noZp[63] === (15 - 8) * 2, "default zero point 8");
});

Deno.test("q4matmul and its transpose: odd sizes, with and without zero points, against float64", async () => {
  let seed = 100;
  for (const [N, K, Nout] of [[1, 32, 1], [7, 45, 13], [65, 96, 70], [33, 161, 129], [130, 200, 31]]) {
    for (const zp of [false, true]) await check(N, K, Nout, zp, seed++);
  }
});

// Both kernels on every case, tiles ragged on every side: K not a multiple of 8 or 32 (a partial
// last block), Nout and N past one 128-wide tile, K past one tile of the transposed product.
for (const variant of Q4_VARIANTS) {
  Deno.test(`q4matmul and its transpose, ${variant}: ragged tiles, with and without zero points, against float64`, async () => {
    let seed = 300;
    for (
      const [N, K, Nout] of [[1, 32, 1], [7, 45, 13], [130, 200, 31], [129, 161, 257], [257, 300, 131], [140, 96, 128]]
    ) {
      for (const zp of [false, true]) await check(N, K, Nout, zp, seed++, variant);
    }
  });
}

Deno.test("q4matmul and its transpose, tile128 split along K (switch wideSplit): uneven slices, a partial last block, accumulate and bias, against float64", async () => {
  const { wideSplitSlices } = await import("./matmul.ts");
  const { perfSwitches, setPerfSwitches } = await import("../switches.ts");
  const prev = setPerfSwitches({ wideSplit: 3 });
  try {
    // Contracted 810 (forward, 26 blocks, the last partial) and 790 (transposed) in 3 slices of 288, 288 and the rest.
    if (wideSplitSlices(14, 810, 130 * 790) !== 3 || wideSplitSlices(14, 790, 130 * 810) !== 3) {
      throw new Error("expected 3 slices");
    }
    let seed = 700;
    for (const zp of [false, true]) await check(130, 810, 790, zp, seed++, "tile128");
    // Accumulate into y and dx, with a bias (added once, by slice 0).
    await checkAccumulate(70, 600, 530, seed, "tile128", "split accumulate");
    // The 0.5B step's 896-wide outputs (336 tiles at 6,144 rows) split; the 4,864-wide ones (1,824 tiles) do not; wideSplit=1 never.
    if (wideSplitSlices(336, 4864, 6144 * 896) !== 3 || wideSplitSlices(1824, 896, 6144 * 4864) !== 1) {
      throw new Error("0.5B slices");
    }
    setPerfSwitches({ wideSplit: 1 });
    if (wideSplitSlices(336, 4864, 6144 * 896) !== 1) throw new Error("wideSplit=1 splits nothing");
    // 4 is held to 3 there by the 64 MiB scratch; 5-8 may use 192 MiB (8 slices of 6144 x 896), and not under 256 long each.
    setPerfSwitches({ wideSplit: 4 });
    if (wideSplitSlices(336, 4864, 6144 * 896) !== 3) throw new Error("wideSplit=4 at 6144 x 896: 3 slices (64 MiB)");
    setPerfSwitches({ wideSplit: 7 });
    if (wideSplitSlices(336, 4864, 6144 * 896) !== 7 || wideSplitSlices(336, 1024, 6144 * 896) !== 4) {
      throw new Error("wideSplit=7: 7 slices, 4 at K = 1024");
    }
    if (wideSplitSlices(336, 4864, 12288 * 896) !== 4) throw new Error("wideSplit=7: 192 MiB of scratch at most");
    // Uneven slices of 7 through the kernels, against float64.
    await check(130, 1800, 790, true, seed++, "tile128");
  } finally {
    setPerfSwitches(prev);
  }
  if (perfSwitches().wideSplit !== prev.wideSplit) throw new Error("switch restored");
});

Deno.test("q4 kernel choice: tile128 where both output sides fill 128-wide tiles and the grid is not small", () => {
  assert(pickQ4(6144, 896) === "tile128" && pickQ4(6144, 4864) === "tile128", "0.5B shapes");
  assert(pickQ4(6144, 128) === "tile64", "k/v forward: 48 workgroups of 128x128, 192 of 64x64");
  assert(pickQ4(100, 896) === "tile64" && pickQ4(6144, 64) === "tile64", "narrow sides");
  assert(pickQ4(6144, 896, "tile64") === "tile64", "forced");
  // A contracted length <= 128 (the k/v dx: dy (6144, 128) into 896 columns) runs tile64 unless a LoRA tail would run inside tile128.
  assert(
    pickQ4(6144, 896, undefined, 128) === "tile64" && pickQ4(6144, 896, undefined, 129) === "tile128",
    "k/v dx, K = 128",
  );
  assert(
    pickQ4(6144, 896, undefined, 128, true) === "tile128" && q4TailFuses(6144, 896, undefined, 128),
    "k/v dx with its LoRA tail inside",
  );
  assert(pickQ4(6144, 896, "tile128", 128) === "tile128", "forced, short K");
});

for (const variant of Q4_VARIANTS) {
  Deno.test(`q4matmul and its transpose, ${variant}: accumulate adds into the existing output (forward with a bias)`, async () => {
    await checkAccumulate(139, 70, 145, 200, variant, "accumulate");
  });
}

Deno.test("q4matmul: an output smaller than (N, Nout) is rejected", async () => {
  const { device } = gpu;
  const w = uploadQ4(device, "w", randomWeight(new Rng(1), 8, 40, false));
  const x = storageBuffer(device, "x", 3 * 40 * 4);
  const y = storageBuffer(device, "y-short", 3 * 7 * 4);
  const enc = device.createCommandEncoder({ label: "q4-size-check" });
  await assertRejects(
    () => encodeQ4Matmul(device, enc, x, w, y, 3),
    /q4matmul: output \(y-short\) has 84 bytes, needs 96/,
  );
  for (const b of [x, y, w.packed, w.scales]) b.destroy();
});

Deno.test("q4matmul and its transpose, tile128 with contracted steps of 8 and 16: ragged tiles, partial blocks and steps, split, accumulate and bias, against float64", async () => {
  const { t128Step } = await import("./matmul.ts");
  const { setPerfSwitches } = await import("../switches.ts");
  const prev = setPerfSwitches({});
  try {
    for (const step of [8, 16] as const) {
      if (t128Step(gpu.device) < step) {
        console.log(
          `q4tk=${step}: skipped, the device's workgroup memory (${gpu.device.limits.maxComputeWorkgroupStorageSize} bytes) is short of 16,896`,
        );
        continue;
      }
      let seed = 800;
      // K and Nout not multiples of 16 or 32 (a partial last step and block), past one tile on every side.
      for (const [N, K, Nout] of [[1, 32, 1], [7, 45, 13], [130, 200, 31], [129, 161, 257], [257, 300, 131]]) {
        for (const zp of [false, true]) await check(N, K, Nout, zp, seed++, "tile128", step);
      }
      setPerfSwitches({ ...prev, wideSplit: 3 });
      await check(130, 810, 790, true, seed++, "tile128", step); // 3 slices each way
      await checkAccumulate(139, 70, 145, seed, "tile128", `k${step} accumulate`, step);
    }
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("q4matmul and its transpose with the LoRA tail: inside the 128-tile kernels, split and unsplit, with bias and accumulate; the separate product on tile64; against float64", async () => {
  const { device } = gpu;
  const { setPerfSwitches } = await import("../switches.ts");
  const { matmulRef } = await import("../../../tests/gpu-ref/matmul.ref.ts");
  const prev = setPerfSwitches({});
  try {
    let seed = 700;
    // [N, K, Nout, r, variant]: 300 x 256 x 200 unsplit; 1000 x 1024 x 160 has few tiles and a long K, so wideSplit splits the forward (and 1000 x 160 x 1024 the transpose).
    {
      for (
        const [N, K, Nout, r, variant] of [[300, 256, 200, 16, "tile128"], [1000, 1024, 160, 5, "tile128"], [
          1000,
          160,
          1024,
          5,
          "tile128",
        ], [70, 96, 66, 16, "tile64"]] as const
      ) {
        const rng = new Rng(seed++);
        const w = randomWeight(rng, Nout, K, true);
        const [x, dy, y0, dx0, bias] = [
          rng.uniformArray(N * K),
          rng.uniformArray(N * Nout),
          rng.uniformArray(N * Nout),
          rng.uniformArray(N * K),
          rng.uniformArray(Nout),
        ];
        // Forward tail: xa (N, r) times B (Nout, r)^T; transposed: dyB (N, r) times A (r, K).
        const [xa, B, dyB, A] = [
          rng.uniformArray(N * r),
          rng.uniformArray(Nout * r),
          rng.uniformArray(N * r),
          rng.uniformArray(r * K),
        ];
        const s = 1.75;
        const { q4TailFuses } = await import("./q4matmul.ts");
        assert(
          q4TailFuses(N, Nout, variant) === (variant === "tile128") &&
            q4TailFuses(N, K, variant) === (variant === "tile128"),
          "fused where expected",
        );
        const wg = uploadQ4(device, "w", w);
        const bufs = [x, dy, y0, dx0, bias, xa, B, dyB, A].map((d, i) => storageBuffer(device, `b${i}`, d));
        const [gx, gdy, gy, gdx, gb, gxa, gB, gdyB, gA] = bufs;
        const enc = device.createCommandEncoder();
        await encodeQ4Matmul(device, enc, gx, wg, gy, N, {
          accumulate: true,
          bias: gb,
          variant,
          tail: { a: gxa, b: gB, r, scale: s },
        });
        await encodeQ4MatmulTransposed(device, enc, gdy, wg, gdx, N, {
          accumulate: true,
          variant,
          tail: { a: gdyB, b: gA, r, scale: s },
        });
        device.queue.submit([enc.finish()]);
        const ty = matmulRef(xa, B, { M: N, N: Nout, K: r, transB: true }),
          tdx = matmulRef(dyB, A, { M: N, N: K, K: r });
        const wantY = q4MatmulRef(x, w, N).map((v, i) => v + bias[i % Nout] + y0[i] + s * ty[i]);
        const wantDx = q4MatmulTransposedRef(dy, w, N).map((v, i) => v + dx0[i] + s * tdx[i]);
        const tag = `${variant} N ${N} K ${K} Nout ${Nout} r ${r}`;
        assertClose(await readF32(device, gy), wantY, { atol: 2e-5 * K, rtol: 1e-4, name: `q4matmul ${tag}` });
        assertClose(await readF32(device, gdx), wantDx, { atol: 2e-5 * Nout, rtol: 1e-4, name: `q4matmul_t ${tag}` });
        for (const b of [...bufs, wg.packed, wg.scales]) b.destroy();
        wg.zeroPoints?.destroy();
      }
    }
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("q4 dequant kernel (switch q4deq): W (Nout, K) and W^T (K, Nout) bitwise (q - zp) * scale in f32, with and without zero points, a partial last block", async () => {
  const { device } = gpu;
  const { encodeQ4Dequant } = await import("./q4matmul.ts");
  let seed = 1100;
  // K = 52: two blocks, the second partial (its padding codes are not written); K = 36: one vec4 of the last word only.
  for (const [Nout, K] of [[12, 52], [8, 36], [20, 96]] as const) {
    for (const withZp of [false, true]) {
      const w = randomWeight(new Rng(seed++), Nout, K, withZp);
      const want = Float32Array.from(dequantQ4Ref(w)); // (q - zp) * scale is exact in float64: fround is the f32 product
      const wg = uploadQ4(device, "w", w);
      for (const transposed of [false, true]) {
        const out = storageBuffer(device, "wd", Nout * K * 4 + 64);
        poison(device, out);
        const enc = device.createCommandEncoder();
        await encodeQ4Dequant(device, enc, wg, out, transposed);
        device.queue.submit([enc.finish()]);
        const got = await readF32(device, out, Nout * K + 16);
        const layout = transposed
          ? Float32Array.from({ length: Nout * K }, (_, i) => want[(i % Nout) * K + Math.floor(i / Nout)])
          : want;
        const tag = `Nout ${Nout} K ${K} zp ${withZp} transposed ${transposed}`;
        assertSameBits(got.subarray(0, Nout * K), layout, `q4 dequant ${tag}`, "fround((q - zp) * scale)");
        assert(
          got.subarray(Nout * K).every((v) => Number.isNaN(v)),
          `q4 dequant ${tag}: nothing written past the matrix`,
        );
        out.destroy();
      }
      for (const b of [wg.packed, wg.scales]) b.destroy();
      wg.zeroPoints?.destroy();
    }
  }
  // W^T of 6 rows: its rows (of Nout = 6) are not whole vec4.
  const w = uploadQ4(device, "w", randomWeight(new Rng(1), 6, 36, false));
  const o = storageBuffer(device, "o", 6 * 36 * 4);
  await assertRejects(
    async () => await encodeQ4Dequant(device, device.createCommandEncoder(), w, o, true),
    /Nout 6 is not a multiple of 4/,
  );
  for (const b of [w.packed, w.scales, o]) b.destroy();
});

Deno.test("q4matmul and its transpose under q4deq (W dequantised into the call scratch, then the f32 kernels): against float64 with bias, accumulate and the LoRA tail, split and unsplit; the q4 kernels below Q4_DEQUANT_MIN_ROWS at q4deq=1, where the dequantised side is not a multiple of 4, with a forced kernel, and at q4deq=0", async () => {
  const { device } = gpu;
  const { setPerfSwitches } = await import("../switches.ts");
  const { matmulRef } = await import("../../../tests/gpu-ref/matmul.ref.ts");
  const { watchPassLabels } = await import("../../../tests/pass-labels.ts");
  const { q4Dequantises, Q4_DEQUANT_MIN_ROWS } = await import("./q4matmul.ts");
  const prev = setPerfSwitches({});
  const watch = watchPassLabels(device);
  try {
    let seed = 1200;
    // [N, K, Nout, r, q4deq, dequantised forward, dequantised transpose]: 1000 x 1024 x 160 splits the f32 dx along K;
    // Nout = 202 leaves the forward on q4 (W^T's rows of 202), K = 250 the transpose (W's rows of 250).
    for (
      const [N, K, Nout, r, q4deq, fwd, bwd] of [
        [300, 256, 200, 16, 2, true, true],
        [1000, 1024, 160, 8, 2, true, true],
        [1000, 160, 1024, 8, 2, true, true],
        [300, 256, 202, 16, 2, false, true],
        [260, 250, 200, 16, 2, true, false],
        [300, 256, 200, 16, 1, false, false],
        [70, 96, 64, 4, 0, false, false],
      ] as const
    ) {
      setPerfSwitches({ ...prev, q4deq });
      assert(
        q4Dequantises(device, N, { Nout, K }, false) === fwd && q4Dequantises(device, N, { Nout, K }, true) === bwd,
        `q4Dequantises N ${N} K ${K} Nout ${Nout} q4deq ${q4deq}`,
      );
      assert(
        !q4Dequantises(device, N, { Nout, K }, false, "tile128") &&
          (q4deq !== 1 || q4Dequantises(device, Q4_DEQUANT_MIN_ROWS, { Nout: 200, K: 256 }, false)),
        "a forced kernel never dequantises; q4deq=1 from Q4_DEQUANT_MIN_ROWS rows",
      );
      const rng = new Rng(seed++);
      const w = randomWeight(rng, Nout, K, true);
      const [x, dy, y0, dx0, bias, xa, B, dyB, A] = [
        N * K,
        N * Nout,
        N * Nout,
        N * K,
        Nout,
        N * r,
        Nout * r,
        N * r,
        r * K,
      ].map((n) => rng.uniformArray(n));
      const wg = uploadQ4(device, "w", w);
      for (const accumulate of [false, true]) {
        const bufs = [x, dy, y0, dx0, bias, xa, B, dyB, A].map((d, i) => storageBuffer(device, `b${i}`, d));
        const [gx, gdy, gy, gdx, gb, gxa, gB, gdyB, gA] = bufs;
        if (!accumulate) (poison(device, gy), poison(device, gdx));
        watch.labels.length = 0;
        const s = 1.75;
        const enc = device.createCommandEncoder();
        await encodeQ4Matmul(device, enc, gx, wg, gy, N, {
          accumulate,
          bias: gb,
          tail: accumulate ? { a: gxa, b: gB, r, scale: s } : undefined,
        });
        const fwdLabels = [...watch.labels];
        await encodeQ4MatmulTransposed(device, enc, gdy, wg, gdx, N, {
          accumulate,
          tail: accumulate ? { a: gdyB, b: gA, r, scale: s } : undefined,
        });
        const bwdLabels = watch.labels.slice(fwdLabels.length);
        device.queue.submit([enc.finish()]);
        const tag = `q4deq=${q4deq} N ${N} K ${K} Nout ${Nout} accumulate ${accumulate}`;
        assert(
          (!fwd || fwdLabels[0] === "q4-dequant-t") && fwdLabels.some((l) => l.startsWith("q4matmul")) === !fwd,
          `forward kernels (${tag}): ${fwdLabels.join(", ")}`,
        );
        assert(
          (!bwd || bwdLabels[0] === "q4-dequant") && bwdLabels.some((l) => l.startsWith("q4matmul")) === !bwd,
          `transposed kernels (${tag}): ${bwdLabels.join(", ")}`,
        );
        const ty = matmulRef(xa, B, { M: N, N: Nout, K: r, transB: true }),
          tdx = matmulRef(dyB, A, { M: N, N: K, K: r });
        const wantY = q4MatmulRef(x, w, N).map((v, i) => v + bias[i % Nout] + (accumulate ? y0[i] + s * ty[i] : 0));
        const wantDx = q4MatmulTransposedRef(dy, w, N).map((v, i) => v + (accumulate ? dx0[i] + s * tdx[i] : 0));
        assertClose(await readF32(device, gy), wantY, { atol: 2e-5 * K, rtol: 1e-4, name: `q4matmul ${tag}` });
        assertClose(await readF32(device, gdx), wantDx, { atol: 2e-5 * Nout, rtol: 1e-4, name: `q4matmul_t ${tag}` });
        for (const b of bufs) b.destroy();
      }
      for (const b of [wg.packed, wg.scales]) b.destroy();
      wg.zeroPoints?.destroy();
    }
  } finally {
    watch.stop();
    setPerfSwitches(prev);
  }
});
