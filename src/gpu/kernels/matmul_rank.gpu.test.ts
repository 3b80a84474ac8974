// The rank kernel (matmul_rank.wgsl, switch rank=stream) on the LoRA products' forms as the trainer calls them
// (forward.ts, backward.ts), against the float64 reference; matmul.gpu.test.ts also runs it, forced, on its generic cases
// (every transpose, batched, broadcast, f16).
import { assert, assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { setPerfSwitches } from "../switches.ts";
import { encodeMatmul, encodeMatmulBindings, type EncodeMatmulOpts, pickMatmul, rankShape, rankSubgroups, splitKSlices, tileKernel, vecLoads } from "./matmul.ts";
import { matmulRef } from "./matmul.ref.ts";

const gpu = await requestGpu();

/** Largest |gpu - ref| seen, and the largest as a fraction of the tolerance, per form. */
const worst = new Map<string, { abs: number; ofTol: number }>();

/** Runs `o` (auto choice, or forced) on the GPU, compares with float64; returns C. */
async function run(o: EncodeMatmulOpts, seed: number, form: string, offsets: [number, number] = [0, 0]): Promise<Float32Array> {
  const { device } = gpu;
  const rng = new Rng(seed);
  const a = rng.uniformArray(o.M * o.K), b = rng.uniformArray(o.K * o.N), c0 = rng.uniformArray(o.M * o.N);
  // Operands at byte offsets inside larger buffers (a window, as the vocabulary head binds them).
  const pad = (x: Float32Array, off: number) => {
    const y = rng.uniformArray(x.length + off / 4);
    y.set(x, off / 4);
    return y;
  };
  const ga = storageBuffer(device, "a", pad(a, offsets[0])), gb = storageBuffer(device, "b", pad(b, offsets[1]));
  const gc = storageBuffer(device, "c", c0);
  if (!o.accumulate) poison(device, gc);
  const enc = device.createCommandEncoder();
  if (offsets[0] || offsets[1]) {
    await encodeMatmulBindings(device, enc, { buffer: ga, offset: offsets[0], size: 4 * a.length }, { buffer: gb, offset: offsets[1], size: 4 * b.length }, { buffer: gc }, o);
  } else {
    await encodeMatmul(device, enc, ga, gb, gc, o);
  }
  device.queue.submit([enc.finish()]);
  const got = await readF32(device, gc);
  const want = matmulRef(a, b, o, o.accumulate ? c0 : undefined);
  const atol = 1e-4 * Math.sqrt(o.K), rtol = 1e-4;
  const { maxAbs } = assertClose(got, want, { atol, rtol, name: `rank ${form} ${JSON.stringify(o)}` });
  let ofTol = 0;
  for (let i = 0; i < got.length; i++) ofTol = Math.max(ofTol, Math.abs(got[i] - want[i]) / (atol + rtol * Math.abs(want[i])));
  const w = worst.get(form) ?? { abs: 0, ofTol: 0 };
  worst.set(form, { abs: Math.max(w.abs, maxAbs), ofTol: Math.max(w.ofTol, ofTol) });
  for (const x of [ga, gb, gc]) x.destroy();
  return got;
}

/** The trainer's four rank products (and the full fine-tuning bias gradient) at r columns, as backward.ts / forward.ts call them. */
function forms(tokens: number, inDim: number, outDim: number, r: number, alpha: number): [string, EncodeMatmulOpts][] {
  return [
    ["x A^T", { M: tokens, N: r, K: inDim, transB: true }],
    ["dy B", { M: tokens, N: r, K: outDim }],
    ["dB = dy^T xa", { M: outDim, N: r, K: tokens, transA: true, alpha, accumulate: true }],
    ["dA = (dyB)^T x", { M: r, N: inDim, K: tokens, transA: true, alpha, accumulate: true }],
    ["db = 1^T dy", { M: 1, N: outDim, K: tokens, accumulate: true }],
  ];
}

Deno.test("matmul rank (switch rank=stream): the auto choice, forms, vec4 loads and K slices of the trainer's rank products", () => {
  const prev = setPerfSwitches({ rank: "stream" });
  try {
    const pick = (o: EncodeMatmulOpts) => `${pickMatmul(o).variant}${pickMatmul(o).swap ? " swap" : ""}`;
    const eq = (got: unknown, want: unknown, what: string) => assert(got === want, `${what}: got ${got}, want ${want}`);
    const [xa, dyB, dB, dA, db] = forms(6144, 896, 4864, 16, 2).map(([, o]) => o);
    eq(pick(xa), "rank", "x A^T");
    eq(pick(dyB), "rank", "dy B");
    eq(pick(dB), "rank", "dB");
    eq(pick(dA), "rank swap", "dA");
    eq(pick(db), "rank swap", "db");
    eq(pick({ M: 6144, N: 896, K: 896, transB: true }), tileKernel(), "x W^T");
    // Rows form for x A^T and dy B, never split; cols form for dB and the transposed dA.
    eq(rankShape(xa).form, "rows", "x A^T form");
    eq(rankShape({ N: 16, transA: true }).form, "cols", "dB form");
    eq(`${rankShape({ N: 16 }).nq}/${rankShape({ N: 16 }).rpt}`, "4/4", "r 16");
    eq(`${rankShape({ N: 32 }).nq}/${rankShape({ N: 32 }).rpt}`, "8/2", "r 32 rows");
    eq(`${rankShape({ N: 32, transA: true }).nq}`, "4", "r 32 cols: two column blocks");
    eq(`${rankShape({ N: 1 }).nq}/${rankShape({ N: 1 }).rpt}`, "1/4", "r 1");
    eq(splitKSlices(xa), 1, "x A^T slices");
    eq(splitKSlices({ M: 6144, N: 16, K: 4864 }), 1, "dy B slices");
    eq(splitKSlices(dB), 1, "dB (304 workgroups) slices");
    eq(splitKSlices(dA), 5, "dA (56 column blocks) slices");
    eq(splitKSlices({ M: 128, N: 16, K: 6144, transA: true }), 24, "k/v dB (8 blocks) slices");
    // vec4 loads: the wide operand along its fastest dimension when aligned.
    const v = (o: EncodeMatmulOpts, offA = 0, offB = 0) => {
      const x = vecLoads(o, offA, offB);
      return `${x.a ? "A" : "-"}${x.b ? "B" : "-"}`;
    };
    eq(v(xa), "AB", "x A^T vec");
    eq(v({ M: 6144, N: 16, K: 897, transB: true }), "--", "x A^T odd K");
    eq(v(dyB), "AB", "dy B vec");
    eq(v({ M: 6144, N: 1, K: 896 }), "A-", "dy B r = 1");
    eq(v(dB), "AB", "dB vec");
    eq(v({ M: 4863, N: 16, K: 6144, transA: true }), "-B", "dB odd M");
    eq(v(xa, 4, 0), "-B", "x A^T at a 4-byte offset");
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul rank (switch rank=xa): the rank kernel for x A^T only, narrow for dy B, dB, dA and db", () => {
  const prev = setPerfSwitches({ rank: "xa" });
  try {
    const pick = (o: EncodeMatmulOpts) => `${pickMatmul(o).variant}${pickMatmul(o).swap ? " swap" : ""}`;
    const [xa, dyB, dB, dA, db] = forms(6144, 896, 4864, 16, 2).map(([, o]) => o);
    const got = [xa, dyB, dB, dA, db].map(pick);
    assert(JSON.stringify(got) === JSON.stringify(["rank", "narrow", "narrow", "narrow swap", "narrow swap"]), `x A^T, dy B, dB, dA, db: ${got}`);
    assert(splitKSlices(xa) === 1, "x A^T on the rank kernel is not split");
    assert(pick({ M: 6144, N: 896, K: 896, transB: true }) === tileKernel(), "x W^T stays on the 128-tile kernel");
  } finally {
    setPerfSwitches(prev);
  }
});

Deno.test("matmul rank: x A^T, dy B, dB, dA and db at r = 1, 8, 16, 32, odd sizes, accumulate and alpha, with and without subgroups, against float64 (subgroup and workgroup-memory lane sums bitwise equal)", async () => {
  const kinds = rankSubgroups(gpu.device) ? [true, false] : [false];
  console.log(kinds.length === 2 ? `subgroups of ${gpu.info.subgroupMinSize}..${gpu.info.subgroupMaxSize}: both lane sums` : "no subgroups on this device: the workgroup-memory lane sum only");
  const prev = setPerfSwitches({ rank: "stream" });
  let seed = 3000, n = 0;
  try {
    // (tokens, in, out): tokens odd and even, K not a multiple of 4 on every side once, a cols product split
    // (tokens 1300, few column blocks) with an uneven last slice.
    const sizes: [number, number, number][] = [[77, 40, 23], [333, 130, 97], [1001, 256, 68], [1300, 90, 200]];
    for (const [tokens, inDim, outDim] of sizes) {
      for (const r of [1, 8, 16, 32]) {
        for (const [form, o] of forms(tokens, inDim, outDim, r, -1.5)) {
          // Both accumulate settings on every form (the trainer accumulates dA, dB and db, not x A^T and dy B).
          for (const accumulate of [!!o.accumulate, !o.accumulate]) {
            const oo = { ...o, accumulate };
            assert(pickMatmul(oo).variant === "rank", `${form}: on the rank kernel`);
            let first: Float32Array | undefined;
            for (const subgroups of kinds) {
              setPerfSwitches({ subgroups });
              const got = await run(oo, seed, form);
              n++;
              if (first) {
                for (let i = 0; i < got.length; i++) {
                  if (!Object.is(got[i], first[i])) throw new Error(`${form} ${JSON.stringify(oo)}: element ${i} ${got[i]} with subgroups, ${first[i]} without`);
                }
              }
              first = got;
            }
            setPerfSwitches({ subgroups: prev.subgroups });
            seed++;
          }
        }
      }
    }
    // Column blocks (more than 32 columns, forced), batches with a broadcast operand, bindings at offsets (storage offsets are multiples of 256 bytes).
    const extra: [string, EncodeMatmulOpts, [number, number]?][] = [
      ["rows, 3 column blocks", { M: 50, N: 40, K: 64, transB: true, alpha: 0.5, variant: "rank" }],
      ["cols, 3 column blocks", { M: 50, N: 40, K: 300, transA: true, accumulate: true, variant: "rank" }],
      ["x A^T at offsets 256 / 512", { M: 300, N: 16, K: 128, transB: true }, [256, 512]],
      ["dB at offsets 512 / 256", { M: 96, N: 16, K: 700, transA: true, alpha: 2, accumulate: true }, [512, 256]],
    ];
    for (const [form, o, off] of extra) {
      await run(o, seed++, form, off);
      n++;
    }
    const batched = { M: 37, N: 16, K: 20, batch: 3, broadcastB: true, transB: true, variant: "rank" as const };
    const { device } = gpu;
    const rng = new Rng(seed++);
    const a = rng.uniformArray(3 * 37 * 20), b = rng.uniformArray(16 * 20);
    const ga = storageBuffer(device, "a", a), gb = storageBuffer(device, "b", b), gc = storageBuffer(device, "c", 3 * 37 * 16 * 4);
    poison(device, gc);
    const enc = device.createCommandEncoder();
    await encodeMatmul(device, enc, ga, gb, gc, batched);
    device.queue.submit([enc.finish()]);
    assertClose(await readF32(device, gc), matmulRef(a, b, batched), { atol: 1e-4 * Math.sqrt(20), rtol: 1e-4, name: "rank batched, broadcast B" });
    for (const x of [ga, gb, gc]) x.destroy();
    n++;
  } finally {
    setPerfSwitches(prev);
  }
  console.log(`rank: ${n} products against float64; largest |gpu - ref| per form (and as a fraction of the tolerance 1e-4 sqrt(K) + 1e-4 |ref|):`);
  for (const [form, w] of worst) console.log(`  ${form}: ${w.abs.toExponential(2)} (${w.ofTol.toFixed(3)})`);
});
