// Suite products: TFLOP/s of the big matrix products of the 0.5B GRPO step at M tokens (default 8 x 768), f32 and q4
// (the frozen projections), forward y = x W^T and backward dx = dy W, as the defaults pick their kernels; each the best
// of `rounds` interleaved rounds of `iters` dispatches in one pass timed by timestamp queries (the wall clock where the
// device has none). TFLOP/s = 2 M N K / time. No reference system: the figures compare commits and devices.
import { Rng } from "../../src/core/rng.ts";
import { storageBuffer } from "../../src/gpu/device.ts";
import { encodeMatmul } from "../../src/gpu/kernels/matmul.ts";
import { encodeQ4Matmul, encodeQ4MatmulTransposed, uploadQ4 } from "../../src/gpu/kernels/q4matmul.ts";
import { quantizeQ4 } from "../../src/model/quant.ts";
import { timeRun } from "../gpu-time.ts";
import { numArg, round, type Suite, type SuiteContext } from "../suite.ts";

const H = 896, I = 4864, CH = 8192;

async function run(ctx: SuiteContext) {
  const M = numArg(ctx.args, "tokens", 6144),
    iters = numArg(ctx.args, "iters", 20),
    rounds = numArg(ctx.args, "rounds", 3);
  const { device } = await ctx.gpu();
  const rng = new Rng(9);
  const biggest = M * 2 * I;
  const a = storageBuffer(device, "products-a", rng.uniformArray(biggest));
  const b = storageBuffer(device, "products-b", rng.uniformArray(Math.max(biggest, CH * H)));
  const c = storageBuffer(device, "products-c", biggest * 4);
  // [figure name, Nout, K, forward or dx]: a q4 weight (Nout, K).
  const q4Shapes: [string, number, number, boolean][] = [
    ["q4_gate_up_fwd", I, H, true],
    ["q4_down_fwd", H, I, true],
    ["q4_gate_up_dx", I, H, false],
    ["q4_down_dx", H, I, false],
  ];
  const q4 = q4Shapes.map(([name, Nout, K]) => {
    const q = quantizeQ4({ shape: [Nout, K], data: rng.uniformArray(Nout * K) });
    return uploadQ4(device, name, {
      Nout: q.N,
      K: q.K,
      packed: q.packed,
      scales: q.scales,
      zeroPoints: q.zeroPoints ?? undefined,
    });
  });
  const products: { name: string; flops: number; run: (enc: GPUCommandEncoder) => Promise<void> }[] = [
    ...([
      ["gate_up_fwd", { M, N: I, K: H, transB: true }],
      ["down_fwd", { M, N: H, K: I, transB: true }],
      ["gate_up_dx", { M, N: H, K: I }],
      ["down_dx", { M, N: I, K: H }],
      ["lmhead_dh", { M, N: H, K: CH }],
    ] as const).map(([name, o]) => ({
      name,
      flops: 2 * o.M * o.N * o.K,
      run: (enc: GPUCommandEncoder) => encodeMatmul(device, enc, a, b, c, o),
    })),
    ...q4Shapes.map(([name, Nout, K, fwd], i) => ({
      name,
      flops: 2 * M * Nout * K,
      run: (enc: GPUCommandEncoder) =>
        fwd ? encodeQ4Matmul(device, enc, a, q4[i], c, M) : encodeQ4MatmulTransposed(device, enc, a, q4[i], c, M),
    })),
  ];
  // The GPU's clocks rise over the first second of work: warm up on the first product before timing.
  for (const t0 = performance.now(); performance.now() - t0 < 2000;) await timeRun(device, iters, products[0].run);
  const best = new Map<string, number>();
  let timed = "gpu";
  for (let round = 0; round < rounds; round++) {
    for (const p of products) {
      const t = await timeRun(device, iters, p.run);
      if (t.timed === "wall") timed = "wall";
      best.set(p.name, Math.min(best.get(p.name) ?? Infinity, t.ms));
    }
  }
  const figures: Record<string, number> = {};
  console.log(
    `| product | ms | TFLOP/s |  (M = ${M}, best of ${rounds} rounds of ${iters}, timed by ${timed})\n|---|---|---|`,
  );
  for (const p of products) {
    const ms = best.get(p.name)!;
    figures[`tflops_${p.name}`] = round(p.flops / (ms / 1000) / 1e12, 2);
    console.log(`| ${p.name} | ${ms.toFixed(3)} | ${figures[`tflops_${p.name}`]} |`);
  }
  for (const w of q4) for (const buf of [w.packed, w.scales, w.zeroPoints]) buf?.destroy();
  for (const buf of [a, b, c]) buf.destroy();
  return {
    figures,
    reference: {},
    runs: rounds,
    notes: `M ${M}; best of ${rounds} interleaved rounds of ${iters} dispatches, timed by ${timed}`,
  };
}

export const products: Suite = {
  about: "TFLOP/s of the 0.5B step's big f32 and q4 products at the default kernels",
  usage: "[tokens=6144] [iters=20] [rounds=3]",
  run,
};
