// Benchmark (not a test): where the trainer's GPU time goes, kernel by kernel (timestamp queries
// around every compute pass, src/gpu/profile.ts), for one pretraining step of the demo model and
// one GRPO step of a LoRA model; plus the matmul kernel alone at a few sizes, and (what=shapes) on
// the 0.5B trainer's own product shapes, every kernel the shape can use (the rank kernel, matmul_rank.wgsl, on the
// products with a side <= 32 only: elsewhere it would read its wide operand once per 16 columns).
// Usage: deno run -A bench/profile.bench.ts [what=pretrain,grpo,matmul,shapes,cmp] [B=16] [T=1024] [micro=4] [grpoPreset=small|qwen2.5-0.5b] [grpoB=8] [grpoT=768] [f16=0|1] [kernel=auto|tile64|prefetch] [tokens=6144] [q4=0|1] [perf=SWITCHES] [iters=20] [only=rank] [warm=2]
// Named options (name=value, anywhere): f16=1 uploads the GRPO model's projections as f16 (where
// shader-f16 exists; also adds f16-B columns to the shapes); kernel=tile64 keeps every product on
// the earlier 64x64 kernel, kernel=prefetch runs tile128's products on tile128p (A/B timing); tokens sets M of the shapes section (default 8 x 768);
// only=rank keeps the shapes section to the f32 products with a side <= 32 (the LoRA rank products); warm=S runs its
// first product S seconds untimed before timing (default 2);
// what=cmp times the big products under each switch set of sw=SET;SET;... (rounds=3 interleaved rounds, the best kept);
// q4=1 uploads the GRPO model's projections as q4; perf= sets the speed switches (src/gpu/switches.ts,
// e.g. perf=old, perf=passes=split,q4=tile64; default RLVR_PERF or the current ones). The wall times
// are taken with the switches as set; the per-kernel profile runs with a pass per dispatch (the
// profiler's mode), so its "profiled run" wall time is not the step's.
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { benchmarkMatmul } from "../src/gpu/bench.ts";
import { requestGpu, storageBuffer } from "../src/gpu/device.ts";
import { encodeMatmul, type EncodeMatmulOpts, MATMUL_VARIANTS, matmulPolicyOf, type MatmulVariant, pickMatmul, setMatmulKernel, splitKSlices } from "../src/gpu/kernels/matmul.ts";
import { encodeQ4Matmul, encodeQ4MatmulTransposed, pickQ4, Q4_VARIANTS, q4Dequantises, uploadQ4 } from "../src/gpu/kernels/q4matmul.ts";
import { formatPerfSwitches, parsePerfSwitches, perfSwitches, setPerfSwitches } from "../src/gpu/switches.ts";
import { quantizeQ4 } from "../src/model/quant.ts";
import { timeRun } from "./gpu-time.ts";
import { formatProfile, PassProfiler } from "../src/gpu/profile.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../src/gpu/model/state.ts";
import { type GrpoSample, grpoStep, grpoTrainer } from "../src/gpu/trainer/grpo-step.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { makeTinyModel } from "../src/model/tiny.ts";
import { DEFAULT_DEMO_ARCH, demoConfig, initWeights, parameterCount } from "../src/runtime/pretrain/model.ts";
import { createPretrainer, destroyPretrainer, pretrainStep } from "../src/runtime/pretrain/step.ts";

const named = new Map(benchArgs.filter((a) => /^[a-zA-Z][a-zA-Z0-9]*=/.test(a)).map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const positional = benchArgs.filter((a) => !/^[a-zA-Z][a-zA-Z0-9]*=/.test(a));
const [whatArg = "pretrain,grpo,matmul", bArg = "16", tArg = "1024", microArg = "4", grpoPreset = "small", grpoB = "8", grpoT = "768"] = positional;
const what = new Set(whatArg.split(","));
const useF16 = named.get("f16") === "1";
const kernel = matmulPolicyOf(named.get("kernel"));
setMatmulKernel(kernel);
if (named.has("perf")) setPerfSwitches(parsePerfSwitches(named.get("perf") ?? ""));
const useQ4 = named.get("q4") === "1";
const gpu = await requestGpu();
const device = gpu.device;
console.log(`adapter: ${gpu.info.vendor} ${gpu.info.description || gpu.info.device}; f16 ${gpu.info.features["shader-f16"]}; subgroups ${gpu.info.features.subgroups}; matmul kernel policy ${kernel}; f16 projections ${useF16 && gpu.f16}; perf switches ${formatPerfSwitches(perfSwitches())}`);
const summary: Record<string, unknown> = { webgpu, perf: formatPerfSwitches(perfSwitches()) };

async function profiled(label: string, tokens: number, fn: () => Promise<unknown>, iters = 2): Promise<void> {
  await fn(); // compile pipelines
  await device.queue.onSubmittedWorkDone();
  const walls: number[] = [];
  for (let i = 0; i < iters; i++) {
    const t0 = performance.now();
    await fn();
    await device.queue.onSubmittedWorkDone();
    walls.push(performance.now() - t0);
  }
  const prof = new PassProfiler(device);
  prof.install();
  const t0 = performance.now();
  await fn();
  await device.queue.onSubmittedWorkDone();
  const profWall = performance.now() - t0;
  const p = await prof.read();
  prof.byGrid = true;
  await fn();
  await device.queue.onSubmittedWorkDone();
  const pg = await prof.read();
  prof.destroy();
  const wall = Math.min(...walls);
  console.log(`\n== ${label}: wall ${wall.toFixed(1)} ms (best of ${iters}), ${(tokens / (wall / 1000)).toFixed(0)} tokens/s; profiled run ${profWall.toFixed(1)} ms`);
  console.log(formatProfile(p, 30));
  console.log("by dispatch grid:\n" + formatProfile(pg, 30));
  summary[label] = { wallMs: wall, tokensPerSec: tokens / (wall / 1000), busyMs: p.busyMs, spanMs: p.spanMs, passes: p.passes, top: p.byLabel.slice(0, 12) };
}

/**
 * What runs a q4 product of (M, Nout, K) in direction `dir` at the current switches: the q4 kernel, or under q4deq the
 * dequantisation and the f32 kernel (with its split) that reads the dequantised weight.
 */
function q4Kernel(M: number, Nout: number, K: number, dir: "fwd" | "bwd", tail?: { a: GPUBuffer; b: GPUBuffer; r: number; scale: number }): string {
  if (q4Dequantises(device, M, { Nout, K }, dir === "bwd")) {
    // As q4matmul.ts runs it: W^T row-fastest for the forward (the tail's B transposed), W for dx.
    const o: EncodeMatmulOpts = dir === "fwd" ? { M, N: Nout, K, tail: tail && { ...tail, transB: true } } : { M, N: K, K: Nout, tail };
    const S = splitKSlices(o);
    return `dequant + ${pickMatmul(o).variant}${S > 1 ? ` split ${S}` : ""}`;
  }
  return dir === "fwd" ? pickQ4(M, Nout, undefined, K, !!tail) : pickQ4(M, K, undefined, Nout, !!tail);
}

/**
 * The products of one layer of the 0.5B GRPO step at M tokens (LoRA r = 16), forward and backward: the f32 ones (with the
 * fused q/k/v and gate/up products a fusion would run, and the rank products), and the q4 projections as [name, Nout,
 * K, forward y = x W^T or backward dx = dy W, with the LoRA tail].
 */
function layerProducts(M: number): { f32: [string, EncodeMatmulOpts][]; q4: [string, number, number, "fwd" | "bwd", boolean?][] } {
  const H = 896, I = 4864, KV = 128, r = 16, QKV = H + 2 * KV, CH = 8192;
  const shapes: [string, EncodeMatmulOpts][] = [
    ["q/o x W^T", { M, N: H, K: H, transB: true }],
    ["k/v x W^T", { M, N: KV, K: H, transB: true }],
    ["gate/up x W^T", { M, N: I, K: H, transB: true }],
    ["down x W^T", { M, N: H, K: I, transB: true }],
    ["q+k+v fused x W^T", { M, N: QKV, K: H, transB: true }],
    ["gate+up fused x W^T", { M, N: 2 * I, K: H, transB: true }],
    ["dx = dy W (q/o)", { M, N: H, K: H }],
    ["dx = dy W (k/v)", { M, N: H, K: KV }],
    ["dx = dy W (gate/up)", { M, N: H, K: I }],
    ["dx = dy W (down)", { M, N: I, K: H }],
    ["lm head dh = dz W_chunk", { M, N: H, K: CH }],
    ["x A^T (N = r)", { M, N: r, K: H, transB: true }],
    ["x A^T, down (N = r)", { M, N: r, K: I, transB: true }],
    ["(xA) B^T (K = r)", { M, N: I, K: r, transB: true, accumulate: true }],
    ["dy B (N = r)", { M, N: r, K: I }],
    ["dy B, q/o (N = r)", { M, N: r, K: H }],
    ["dA = (dyB)^T x (M = r)", { M: r, N: H, K: M, transA: true, accumulate: true }],
    ["dB = dy^T xa (N = r)", { M: I, N: r, K: M, transA: true, accumulate: true }],
    // The rest of a layer's rank products (issue 16's rank=stream): dA of down (over the 4864-wide h), dB of q/o/down and
    // of k/v, dy B of k/v.
    ["dA = (dyB)^T h, down (M = r)", { M: r, N: I, K: M, transA: true, accumulate: true }],
    ["dB = dy^T xa, q/o (N = r)", { M: H, N: r, K: M, transA: true, accumulate: true }],
    ["dB = dy^T xa, k/v (N = r)", { M: KV, N: r, K: M, transA: true, accumulate: true }],
    ["dy B, k/v (N = r)", { M, N: r, K: KV }],
  ];
  const q4: [string, number, number, "fwd" | "bwd", boolean?][] = [
    ["q4 q/o x W^T", H, H, "fwd"], ["q4 k/v x W^T", KV, H, "fwd"], ["q4 gate/up x W^T", I, H, "fwd"], ["q4 down x W^T", H, I, "fwd"],
    ["q4 q+k+v fused x W^T", QKV, H, "fwd"], ["q4 gate+up fused x W^T", 2 * I, H, "fwd"],
    ["q4 dx = dy W (q/o)", H, H, "bwd"], ["q4 dx = dy W (k/v)", KV, H, "bwd"], ["q4 dx = dy W (gate/up)", I, H, "bwd"], ["q4 dx = dy W (down)", H, I, "bwd"],
    ["q4 dx = dy W (k/v) + LoRA tail", KV, H, "bwd", true],
  ];
  return { f32: shapes, q4 };
}

/** Operand buffers for every product of layerProducts(M): A and B filled from Rng(9) (which the caller goes on drawing from), C. */
function productBuffers(M: number, label: string): { rng: Rng; bufA: GPUBuffer; bufB: GPUBuffer; bufC: GPUBuffer } {
  const rng = new Rng(9);
  const biggest = M * 2 * 4864;
  const bufA = storageBuffer(device, `${label}-a`, rng.uniformArray(biggest));
  const bufB = storageBuffer(device, `${label}-b`, rng.uniformArray(Math.max(biggest, 8192 * 896)));
  const bufC = storageBuffer(device, `${label}-c`, biggest * 4);
  return { rng, bufA, bufB, bufC };
}

if (what.has("matmul")) {
  for (const size of [1024, 2048, 4096]) {
    const r = await benchmarkMatmul(device, { size, minSeconds: 2 });
    console.log(`matmul ${size}^3: ${(r.gflops / 1000).toFixed(2)} TFLOP/s (${r.iterations} runs, check ${r.checkMaxAbsErr.toExponential(1)})`);
    summary[`matmul${size}`] = r.gflops / 1000;
  }
}

if (what.has("shapes")) {
  // The products of one layer of the 0.5B GRPO step (LoRA r = 16), forward and backward, f32 and q4,
  // every kernel each can use, timed on the GPU's clock (bench/gpu-time.ts: `iters` dispatches in one
  // timestamped pass), plus the fused q/k/v and gate/up products a fusion would run.
  const M = Number(named.get("tokens") ?? 6144), r = 16;
  const { f32: shapes, q4: q4Shapes } = layerProducts(M);
  const { rng, bufA, bufB, bufC } = productBuffers(M, "shape");

  // The k/v dx with its LoRA tail (dx += s (dy B) A): inside tile128 (switch loraTail) or, on tile64, its own product after
  // (matmul.ts SHORT_K: tile64 is chosen at K <= 128 only where no tail would run inside tile128).
  const kvDx = shapes.find(([name]) => name === "dx = dy W (k/v)")![1];
  shapes.push(["dx = dy W (k/v) + LoRA tail", { ...kvDx, tail: { a: bufA, b: bufB, r, scale: 2 } }]);
  const onlyRank = named.get("only") === "rank";
  const timed = (o: EncodeMatmulOpts) => !onlyRank || Math.min(o.M, o.N) <= 32;
  const iters = Number(named.get("iters") ?? 20);
  // Warm-up: the twelfth session's H100 call read every kernel of its first shapes run 2-3x slower than the later runs
  // (the GPU's clocks still rising), so the first shape's default product runs for warm= seconds (default 2) untimed.
  const warmS = Number(named.get("warm") ?? 2);
  const [, first] = shapes.find(([, o]) => timed(o))!;
  for (const t0 = performance.now(); performance.now() - t0 < warmS * 1000;) await timeRun(device, iters, (enc) => encodeMatmul(device, enc, bufA, bufB, bufC, first));
  const rows: string[] = [];
  const cell = (ms: number, flops: number) => `${ms.toFixed(3)} ms ${(flops / (ms / 1000) / 1e12).toPrecision(3)} TF/s`;
  let timedBy = "gpu";
  for (const [name, o] of shapes) {
    if (!timed(o)) continue;
    const isWeight = name.includes("W");
    const flops = 2 * o.M * o.N * (o.K + (o.tail?.r ?? 0));
    const line: string[] = [];
    for (const f16 of isWeight && gpu.f16 && useF16 ? [false, true] : [false]) {
      for (const variant of [undefined, ...MATMUL_VARIANTS] as (MatmulVariant | undefined)[]) {
        if (variant === "rank" && Math.min(o.M, o.N) > 32) continue;
        const opts = { ...o, variant, bF16: f16 };
        const t = await timeRun(device, iters, (enc) => encodeMatmul(device, enc, bufA, bufB, bufC, opts));
        if (t.timed === "wall") timedBy = "wall";
        const label = `${variant ?? `auto(${pickMatmul(opts).variant}${splitKSlices(opts) > 1 ? ` split ${splitKSlices(opts)}` : ""})`}${f16 ? "+f16B" : ""}`;
        line.push(`${label} ${cell(t.ms, flops)}`);
        summary[`shape ${name} ${label}`] = { ms: t.ms, tflops: flops / (t.ms / 1000) / 1e12, timed: t.timed };
      }
    }
    // A product the general split-K rule splits and the earlier one did not: the auto choice unsplit too.
    const splitNow = splitKSlices(o) > 1;
    const prev = setPerfSwitches({ splitK: "transA" });
    if (prev.splitK === "general" && splitNow && splitKSlices(o) === 1) {
      const t = await timeRun(device, iters, (enc) => encodeMatmul(device, enc, bufA, bufB, bufC, o));
      line.push(`auto unsplit (splitK=transA) ${cell(t.ms, flops)}`);
      summary[`shape ${name} auto unsplit`] = { ms: t.ms, tflops: flops / (t.ms / 1000) / 1e12, timed: t.timed };
    }
    setPerfSwitches(prev);
    const row = `| ${name} | ${o.M}x${o.N}x${o.K} | ${(flops / 1e9).toFixed(2)} | ${line.join(" | ")} |`;
    rows.push(row);
    console.log(row);
  }
  // q4 projections: forward y = x W^T and backward dx = dy W through the frozen q4 weight (layerProducts' q4 list).
  // Every weight quantised first (seconds on the CPU for the big ones), then the GPU warmed again before the q4 rows: on an
  // H100 (2026-12-05) the first four q4 rows read 1.3-2.7x slow in every kernel when each was quantised between rows.
  const q4Weights = (onlyRank ? [] : q4Shapes).map(([name, Nout, K]) => {
    const q = quantizeQ4({ shape: [Nout, K], data: rng.uniformArray(Nout * K) });
    return uploadQ4(device, name, { Nout: q.N, K: q.K, packed: q.packed, scales: q.scales, zeroPoints: q.zeroPoints ?? undefined });
  });
  if (q4Weights.length) {
    for (const t0 = performance.now(); performance.now() - t0 < warmS * 1000;) await timeRun(device, iters, (enc) => encodeQ4Matmul(device, enc, bufA, q4Weights[0], bufC, M));
  }
  for (const [i, [name, Nout, K, dir, withTail = false]] of (onlyRank ? [] : q4Shapes).entries()) {
    const w = q4Weights[i];
    // The LoRA tail s a (M, r) op(b) (forward b = B (Nout, r), transposed b = A (r, K)): inside the 128-tile kernel or its own product.
    const tail = withTail ? { a: bufA, b: bufB, r, scale: 2 } : undefined;
    const flops = 2 * M * Nout * K + (tail ? 2 * M * (dir === "fwd" ? Nout : K) * r : 0);
    const line: string[] = [];
    for (const variant of [undefined, ...Q4_VARIANTS]) {
      const t = await timeRun(device, iters, (enc) =>
        dir === "fwd" ? encodeQ4Matmul(device, enc, bufA, w, bufC, M, { variant, tail }) : encodeQ4MatmulTransposed(device, enc, bufA, w, bufC, M, { variant, tail }));
      if (t.timed === "wall") timedBy = "wall";
      const label = variant ?? `auto(${q4Kernel(M, Nout, K, dir, tail)})`;
      line.push(`${label} ${cell(t.ms, flops)}`);
      summary[`shape ${name} ${label}`] = { ms: t.ms, tflops: flops / (t.ms / 1000) / 1e12, timed: t.timed };
    }
    const row = `| ${name} | ${dir === "fwd" ? `${M}x${Nout}x${K}` : `${M}x${K}x${Nout}`} | ${(flops / 1e9).toFixed(2)} | ${line.join(" | ")} |`;
    rows.push(row);
    console.log(row);
    for (const b of [w.packed, w.scales, w.zeroPoints]) b?.destroy();
  }
  console.log(`\nper-shape table (M = ${M} tokens, ${iters} dispatches per timed pass, timed by ${timedBy === "gpu" ? "timestamp queries" : "the wall clock (no timestamp-query)"}; perf switches ${formatPerfSwitches(perfSwitches())}):`);
  console.log("| product | M x N x K | GFLOP | kernels (ms per product, TFLOP/s) |\n|---|---|---|---|");
  for (const row of rows) console.log(row);
  for (const b of [bufA, bufB, bufC]) b.destroy();
}

if (what.has("cmp")) {
  // The big products of the 0.5B step (f32 and q4, as the defaults pick their kernels) under each perf-switch set of
  // sw= (sets separated by ';', each parsed over the current switches), interleaved over rounds= rounds so that drift
  // hits every set alike; per product and set the best of the rounds (each `iters` dispatches in one timed pass).
  const M = Number(named.get("tokens") ?? 6144);
  const base = perfSwitches();
  const sets = (named.get("sw") ?? "").split(";").map((x) => x.trim());
  const rounds = Number(named.get("rounds") ?? 3);
  const iters = Number(named.get("iters") ?? 20);
  // The big ones of layerProducts: a layer's f32 and q4 products with both sides >= 896 and K >= 896. (With the transposed
  // f32 base, the forward's x W runs dx's shapes and layouts: gate/up's is dx of down's, down's dx of gate/up's.)
  const all = layerProducts(M);
  const f32 = all.f32.filter(([name]) => ["gate/up x W^T", "down x W^T", "gate+up fused x W^T", "dx = dy W (gate/up)", "dx = dy W (down)", "lm head dh = dz W_chunk"].includes(name));
  const q4 = all.q4.filter(([name]) => ["q4 gate/up x W^T", "q4 down x W^T", "q4 gate+up fused x W^T", "q4 dx = dy W (gate/up)", "q4 dx = dy W (down)"].includes(name));
  const { rng, bufA, bufB, bufC } = productBuffers(M, "cmp");
  const weights = q4.map(([name, Nout, K]) => {
    const q = quantizeQ4({ shape: [Nout, K], data: rng.uniformArray(Nout * K) });
    return uploadQ4(device, name, { Nout: q.N, K: q.K, packed: q.packed, scales: q.scales, zeroPoints: q.zeroPoints ?? undefined });
  });
  const best = new Map<string, number>();
  const products: { name: string; flops: number; kernel: () => string; run: (enc: GPUCommandEncoder) => Promise<void> }[] = [
    ...f32.map(([name, o]) => ({
      name, flops: 2 * o.M * o.N * o.K,
      kernel: () => `${pickMatmul(o).variant}${splitKSlices(o) > 1 ? ` split ${splitKSlices(o)}` : ""}`,
      run: (enc: GPUCommandEncoder) => encodeMatmul(device, enc, bufA, bufB, bufC, o),
    })),
    ...q4.map(([name, Nout, K, dir], i) => ({
      name, flops: 2 * M * Nout * K,
      kernel: () => q4Kernel(M, Nout, K, dir),
      run: (enc: GPUCommandEncoder) => dir === "fwd" ? encodeQ4Matmul(device, enc, bufA, weights[i], bufC, M) : encodeQ4MatmulTransposed(device, enc, bufA, weights[i], bufC, M),
    })),
  ];
  const kernels = new Map<string, string>();
  for (let round = 0; round < rounds; round++) {
    for (const p of products) {
      for (const sw of sets) {
        setPerfSwitches(parsePerfSwitches(sw, base));
        const t = await timeRun(device, iters, p.run);
        const key = `${p.name}\u0000${sw}`;
        best.set(key, Math.min(best.get(key) ?? Infinity, t.ms));
        // The kernel column names the first set's choice (the last set's, before 2026-12-05: a t96 set read as tile96h).
        if (sw === sets[0]) kernels.set(p.name, p.kernel());
        setPerfSwitches(base);
      }
    }
  }
  // The workgroup memory decides some switched kernels' layout (ws: padded tiles from 33,792 bytes, else unpadded).
  summary.workgroupStorageBytes = device.limits.maxComputeWorkgroupStorageSize;
  console.log(`\ncmp: TFLOP/s, best of ${rounds} interleaved rounds of ${iters} dispatches (M = ${M}; workgroup memory ${device.limits.maxComputeWorkgroupStorageSize} bytes; base switches ${formatPerfSwitches(base)})`);
  console.log(`| product | M x N x K | kernel (${sets[0] || "base"}) | ${sets.map((x) => x || "(base)").join(" | ")} |\n|---|---|---|${sets.map(() => "---").join("|")}|`);
  for (const [i, p] of products.entries()) {
    const shape = i < f32.length ? `${f32[i][1].M}x${f32[i][1].N}x${f32[i][1].K}` : (() => { const [, Nout, K, dir] = q4[i - f32.length]; return dir === "fwd" ? `${M}x${Nout}x${K}` : `${M}x${K}x${Nout}`; })();
    const cells = sets.map((sw) => {
      const ms = best.get(`${p.name}\u0000${sw}`) ?? NaN;
      const tf = p.flops / (ms / 1000) / 1e12;
      summary[`cmp ${p.name} ${sw || "(base)"}`] = { ms, tflops: tf };
      return tf.toFixed(1);
    });
    console.log(`| ${p.name} | ${shape} | ${kernels.get(p.name)} | ${cells.join(" | ")} |`);
  }
  for (const w of weights) for (const b of [w.packed, w.scales, w.zeroPoints]) b?.destroy();
  for (const b of [bufA, bufB, bufC]) b.destroy();
}

if (what.has("pretrain")) {
  const B = Number(bArg), T = Number(tArg), micro = Number(microArg);
  const cfg = demoConfig({ ...DEFAULT_DEMO_ARCH, vocabSize: 8192, seqLen: T }, [1, 2]);
  const tr = createPretrainer(device, cfg, initWeights(cfg, 1), { microBatch: micro, seqLen: T });
  const rng = new Rng(5);
  const rows = Array.from({ length: B }, () => Array.from({ length: T }, () => rng.int(cfg.vocabSize)));
  console.log(`pretrain: ${parameterCount(cfg)} parameters, ${B} x ${T}, micro-batch ${micro}`);
  await profiled(`pretrain step ${B}x${T} micro ${micro}`, B * (T - 1), () => pretrainStep(tr, rows), 1);
  destroyPretrainer(tr);
}

if (what.has("grpo")) {
  const PRESETS = {
    small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
    "qwen2.5-0.5b": { hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocabSize: 151936 },
  } as const;
  const preset = PRESETS[grpoPreset as keyof typeof PRESETS];
  if (!preset) throw new Error(`unknown preset ${grpoPreset}`);
  const B = Number(grpoB), T = Number(grpoT);
  const tiny = makeTinyModel("qwen2", { seed: 1, ...preset, tieWordEmbeddings: true });
  const model = uploadModel(device, tiny.config, tiny.weights, { f16: useF16, q4: useQ4, transposedBase: !useQ4 && !useF16 && perfSwitches().wT === 1 });
  const lora = uploadAdapter(device, tiny.config, randomAdapter(tiny.config, { r: 16, alpha: 32, targets: LORA_TARGETS, seed: 2 }));
  const rng = new Rng(3);
  const samples: GrpoSample[] = Array.from({ length: B }, (_, i) => ({
    ids: Array.from({ length: T }, () => rng.int(tiny.config.vocabSize)),
    promptLen: Math.floor(T / 2),
    advantage: i % 2 ? 1 : -1,
  }));
  const tr = grpoTrainer(model, lora, { lr: { base: 1e-5, warmupSteps: 0, totalSteps: 100, decay: "constant" } });
  await profiled(`grpo step ${grpoPreset} ${B}x${T} r16${model.half.size ? " f16" : ""}${useQ4 ? " q4" : ""} ${kernel}`, B * T, () => grpoStep(tr, samples), 1);
  destroyAdapter(lora);
  destroyModel(model);
}

console.log(JSON.stringify(summary));
