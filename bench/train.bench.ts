// Benchmark (not a test): throughput of the WebGPU trainer on a random model of a given shape —
// teacher-forced forward (logprobs), and full GRPO steps (forward + loss + backward + AdamW) with
// LoRA on all seven targets, stored activations and recomputation; optionally the sweep of step
// time over sequence length and batch, in the same process.
// Usage: deno run -A bench/train.bench.ts [preset=tiny|small|demo|qwen2.5-0.5b|qwen2.5-1.5b] [B=4] [T=256] [r=16] [q4=0|1] [iters=3]
//          [modes=forward,step,recompute] [sweep=0|1] [budget=SECONDS] [out=FILE.json] [sweepIters=2]
//          [f16=0|1] [kernels=auto|tile64|prefetch|auto,tile64,...] [micro=N] [perf=SWITCHES] [variants=SWITCHES;SWITCHES...]
// The first six are positional as before; the rest are key=value. The issue's configuration:
//   qwen2.5-0.5b 8 768 16 1 2 step sweep=1 budget=150 out=train.json
// f16=1: frozen projections stored as f16 (where the device has shader-f16; ignored with q4=1).
// kernels: the matmul policy of the main runs (setMatmulKernel); a second entry re-times the main
// GRPO step under that policy after the first (one warm-up step, then `iters`), budget permitting.
// micro=N: grpoStep's micro-batch (sequences per forward/backward; activations scale with it).
// perf=: the speed switches of the main runs (src/gpu/switches.ts: "old", "new", or name=value,...;
// default RLVR_PERF or the current defaults). variants=: ';'-separated switch sets (each on top of
// perf=), under each of which the main GRPO step is timed again after the main runs (one warm-up,
// then `iters`), budget permitting, e.g. variants=old;passes=split;arena=0;q4=tile64 for the earlier
// way as a whole and each change alone.
// sweep=1 adds GRPO steps (stored activations) at T in 256,512,1024,2048 with B=8 and B in 1,4,8,16 with
// T=512, cheapest first, timed without a further warm-up (kernel pipelines are keyed by flags, not sizes,
// and the main run compiled them). budget: a configuration whose estimated time (tokens x the last
// seconds per token x runs x T / longest T so far) no longer fits the seconds left is skipped and listed as skipped.
// Results go to out= after every configuration, so a run stopped by a time limit keeps what it measured.
// GPU memory is not visible from WebGPU: the figures here are the trainer's own accounting of its
// buffers (src/gpu/census.ts): bytes live after upload, and per configuration the peak (high-water
// mark) of a GRPO step; for the main step, what the peak is made of (weights, LoRA state, activations
// kept for backward, vocabulary head, backward scratch, uniform pool, batch) from its warm-up step.
// bench/h200.sh also samples nvidia-smi around the run (the driver's figure, Vulkan's own overheads included).
// Model FLOPs (an estimate, printed as TFLOP/s): per token 4 x (layer projection parameters + V x H)
// (forward and the input gradient; the frozen weights get no weight gradient) + the LoRA products
// (about 3 x 2 x r x (in + out) per target) + causal attention 6 x T x heads x headDim x layers
// (forward QK and PV over T/2 keys on average, backward twice that). The vocabulary head counts on every
// row, though the GRPO step runs it on the completion rows only (switch headRows): a fixed yardstick.
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { makeTinyModel } from "../src/model/tiny.ts";
import { requestGpu } from "../src/gpu/device.ts";
import { trimArena } from "../src/gpu/arena.ts";
import { GpuCensus } from "../src/gpu/census.ts";
import { type MatmulPolicy, setMatmulKernel } from "../src/gpu/kernels/matmul.ts";
import { formatPerfSwitches, parsePerfSwitches, perfSwitches, setPerfSwitches } from "../src/gpu/switches.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../src/gpu/model/state.ts";
import { batchLogprobs } from "../src/gpu/trainer/logprobs.ts";
import { type GrpoSample, grpoStep, grpoTrainer } from "../src/gpu/trainer/grpo-step.ts";

const PRESETS = {
  tiny: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, vocabSize: 280 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
  // Qwen2.5-0.5B's shape (494M parameters, tied embeddings), random weights.
  // The demo model's shape (src/runtime/pretrain/model.ts DEFAULT_DEMO_ARCH, vocabulary 8192).
  demo: { hidden: 384, layers: 8, heads: 6, kvHeads: 2, headDim: 64, intermediate: 1024, vocabSize: 8192 },
  "qwen2.5-0.5b": { hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocabSize: 151936 },
  // Qwen2.5-1.5B's shape (1.54B parameters, tied embeddings).
  "qwen2.5-1.5b": { hidden: 1536, layers: 28, heads: 12, kvHeads: 2, headDim: 128, intermediate: 8960, vocabSize: 151936 },
} as const;
type Preset = keyof typeof PRESETS;

const positional = benchArgs.filter((a) => !a.includes("="));
const named = new Map(benchArgs.filter((a) => a.includes("=")).map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
for (const k of named.keys()) if (!["sweep", "budget", "out", "sweepIters", "f16", "kernels", "micro", "perf", "variants"].includes(k)) throw new Error(`unknown option ${k}=`);
const [presetArg = "tiny", bArg = "4", tArg = "256", rArg = "16", q4Arg = "0", itersArg = "3", modesArg = "forward,step,recompute"] = positional;
const modes = new Set(modesArg.split(","));
if (!(presetArg in PRESETS)) throw new Error(`unknown preset ${presetArg}; one of ${Object.keys(PRESETS).join(", ")}`);
const preset = PRESETS[presetArg as Preset];
const B = Number(bArg), T = Number(tArg), r = Number(rArg), q4 = q4Arg === "1", iters = Number(itersArg);
const sweep = named.get("sweep") === "1";
const budgetS = Number(named.get("budget") ?? "Infinity");
const sweepIters = Number(named.get("sweepIters") ?? "2");
const outFile = named.get("out");
const f16 = named.get("f16") === "1";
const kernels = (named.get("kernels") ?? "auto").split(",").map((k): MatmulPolicy => {
  if (k !== "auto" && k !== "tile64" && k !== "prefetch") throw new Error(`kernels: auto, tile64 or prefetch, got ${k}`);
  return k;
});
const micro = named.has("micro") ? Number(named.get("micro")) : undefined;
setMatmulKernel(kernels[0]);
if (named.has("perf")) setPerfSwitches(parsePerfSwitches(named.get("perf") ?? ""));
const mainSwitches = { ...perfSwitches() };
const perfVariants = (named.get("variants") ?? "").split(";").map((v) => v.trim()).filter(Boolean);
// Parsed before anything runs, so a typo fails at once.
for (const v of perfVariants) parsePerfSwitches(v, mainSwitches);
const tStart = performance.now();
const elapsed = () => (performance.now() - tStart) / 1000;

const gpu = await requestGpu();
const census = new GpuCensus(gpu.device, { buffersOnly: true }).install();
const MiB = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;
const adapterName = `${gpu.info.vendor} ${gpu.info.description || gpu.info.device}`;
console.log(`adapter: ${adapterName}; maxStorageBufferBindingSize ${(gpu.info.limits.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)} MiB`);
let t0 = performance.now();
const tiny = makeTinyModel("qwen2", { seed: 1, ...preset, tieWordEmbeddings: true });
let params = 0;
for (const t of tiny.weights.values()) params += t.data.length;
console.log(`model: ${presetArg} (${(params / 1e6).toFixed(1)}M parameters) generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
t0 = performance.now();
const model = uploadModel(gpu.device, tiny.config, tiny.weights, { q4, f16, transposedBase: !q4 && !f16 && perfSwitches().wT === 1 });
await gpu.device.queue.onSubmittedWorkDone();
const projections = q4 ? "q4" : model.half.size > 0 ? "f16" : "f32";
if (f16 && projections !== "f16") console.log(`f16=1 ignored: ${q4 ? "q4 projections" : "no shader-f16 on this device"}`);
console.log(`upload (${projections} projections): ${((performance.now() - t0) / 1000).toFixed(1)} s; ${MiB(census.liveBufferBytes)} of buffers`);
const adapter = randomAdapter(tiny.config, { r, alpha: 2 * r, targets: LORA_TARGETS, seed: 2 });
const cfg = tiny.config;
/** Model FLOPs per token of a GRPO step at length t (the estimate of the header comment). */
function flopsPerToken(t: number): number {
  const H = cfg.hiddenSize, I = cfg.intermediateSize, qd = cfg.numHeads * cfg.headDim, kvd = cfg.numKvHeads * cfg.headDim;
  const proj = H * qd + 2 * H * kvd + qd * H + 3 * H * I;
  const loraPerLayer = [[H, qd], [H, kvd], [H, kvd], [qd, H], [H, I], [H, I], [I, H]].reduce((a, [i, o]) => a + r * (i + o), 0);
  return 4 * (proj * cfg.numLayers + cfg.vocabSize * H) + 6 * loraPerLayer * cfg.numLayers + 6 * t * qd * cfg.numLayers;
}

/** What a buffer label is for (the peak's breakdown). */
function category(label: string): string {
  if (/^uniform:/.test(label)) return "uniform pool";
  if (/-readback$/.test(label)) return "read-back staging";
  if (/-q4$|-scales$|-zp$|:f16$|^model\.|^lm_head\.|^rope-inv-freq$|^q4-unused-binding$|^lmhead-unused$/.test(label)) return "frozen weights";
  if (/^(matmul-splitk-scratch|gradnorm-partials|rmsnorm_dw-partials)$/.test(label)) return "kernel scratch (split-K, norm partials)";
  if (/^(grad|adam-m|adam-v):/.test(label)) return "LoRA grads + AdamW moments";
  if (/lora_[AB]/.test(label)) return "LoRA parameters";
  if (/^(lmhead|logp$|lm-lse$|entropy$)/.test(label)) return "vocabulary head (logp, lse, partials, dz)";
  if (/^(L\d+|Lscratch|x\d+$|rstdF$|hF$)/.test(label)) return "activations kept for backward";
  if (/^(d-|attn-delta$|dL-)/.test(label)) return "backward scratch";
  if (/^batch-|^grpo|^(mask|adv|agg-weight|logp-old|logp-ref)$/.test(label)) return "batch and per-sample inputs";
  return `other (${label})`;
}
/** A buffer's category from its label and usage (uniform buffers are the per-dispatch parameter pool). */
const classify = (label: string, usage: number) => category(usage & 0x40 ? `uniform:${label}` : label);
const sortedDesc = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort((a, b) => b[1] - a[1]));
const rng = new Rng(3);

function batchOf(b: number, t: number): { seqs: number[][]; samples: GrpoSample[] } {
  const seqs = Array.from({ length: b }, () => Array.from({ length: t }, () => rng.int(tiny.config.vocabSize)));
  return { seqs, samples: seqs.map((ids, i) => ({ ids, promptLen: Math.floor(t / 2), advantage: i % 2 ? 1 : -1 })) };
}

interface Timing {
  bestMs: number;
  medianMs: number;
  allMs: number[];
  tokensPerSecond: number;
  /** Model TFLOP/s at best (the header's estimate), for steps. */
  modelTflops?: number;
  /** The trainer's buffer bytes: peak during the timed runs (warm-up included), and live after them. */
  peakBytes: number;
  liveBytesAfter: number;
  peakBreakdown?: Record<string, number>;
}

/** Times `fn` (after a warm-up when `warm`); the peak covers the warm-up and the runs; `explain` records what the warm-up's peak is made of. */
async function time(label: string, tokens: number, n: number, warm: boolean, fn: () => Promise<unknown>, o: { t?: number; explain?: boolean } = {}): Promise<Timing> {
  // Each configuration's own peak: the buffers an earlier one left in the arena (src/gpu/arena.ts,
  // kept from step to step) go first, as the recipe trims them before sampling.
  await gpu.device.queue.onSubmittedWorkDone();
  trimArena(gpu.device);
  census.resetPeak();
  let peakBreakdown: Record<string, number> | undefined;
  if (warm) {
    if (o.explain) census.recordPeakBreakdown(classify);
    await fn(); // warm-up: pipeline compilation
    await gpu.device.queue.onSubmittedWorkDone();
    if (o.explain) {
      peakBreakdown = sortedDesc(census.peakBreakdown() ?? {});
      census.recordPeakBreakdown(false);
    }
  }
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await fn();
    await gpu.device.queue.onSubmittedWorkDone();
    ms.push(performance.now() - s);
  }
  const best = Math.min(...ms);
  const median = [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)];
  const tps = tokens / (best / 1000);
  const modelTflops = o.t ? (tps * flopsPerToken(o.t)) / 1e12 : undefined;
  const peakBytes = census.peakBufferBytes, liveBytesAfter = census.liveBufferBytes;
  console.log(`${label}: best ${best.toFixed(1)} ms, median ${median.toFixed(1)} ms of ${n} (${tps.toFixed(0)} tokens/s at best${modelTflops !== undefined ? `, ~${modelTflops.toFixed(2)} model TFLOP/s` : ""}); peak ${MiB(peakBytes)} of buffers, ${MiB(liveBytesAfter)} live after`);
  if (peakBreakdown) for (const [c, b] of Object.entries(peakBreakdown)) console.log(`  peak: ${c.padEnd(44)} ${MiB(b).padStart(12)}`);
  return { bestMs: best, medianMs: median, allMs: ms, tokensPerSecond: tps, ...(modelTflops !== undefined ? { modelTflops } : {}), peakBytes, liveBytesAfter, ...(peakBreakdown ? { peakBreakdown } : {}) };
}

const lora = uploadAdapter(gpu.device, tiny.config, adapter);
const results: Record<string, unknown> = {
  webgpu, preset: presetArg, adapter: adapterName, params, B, T, r, targets: LORA_TARGETS, q4, projections, iters, kernel: kernels[0], microBatch: micro ?? B,
  perf: formatPerfSwitches(mainSwitches),
  uploadBytes: census.liveBufferBytes,
};
const save = async () => {
  if (outFile) await Deno.writeTextFile(outFile, JSON.stringify(results, null, 1));
};
const main = batchOf(B, T);
const lr = { base: 1e-5, warmupSteps: 0, totalSteps: 100, decay: "constant" } as const;
if (modes.has("forward")) results.forward = await time(`forward (logprobs), B=${B} T=${T}`, B * T, iters, true, () => batchLogprobs(model, main.seqs, lora));
await save();
let secPerToken = 0;
for (const recompute of [false, true]) {
  if (!modes.has(recompute ? "recompute" : "step")) continue;
  const tr = grpoTrainer(model, lora, { recompute, lr });
  const res = await time(`GRPO step${recompute ? " (recompute)" : ""}, B=${B} T=${T}, LoRA r=${r} x 7 targets`, B * T, iters, true, () => grpoStep(tr, main.samples, { microBatch: micro }), { t: T, explain: true });
  results[recompute ? "grpoStepRecompute" : "grpoStep"] = res;
  if (!recompute) secPerToken = res.bestMs / 1000 / (B * T);
  await save();
}

// The main GRPO step again under the other matmul policies (kernels=auto,tile64): one warm-up (the
// other kernels' pipelines) and `iters` runs, if twice that still fits a third of what is left.
const variants: Record<string, unknown> = {};
for (const k of kernels.slice(1)) {
  const estimate = secPerToken * B * T * (iters + 1) * 2; // the other kernel may be slower: x2
  const left = budgetS - elapsed();
  if (!(secPerToken > 0) || estimate > left / 3) {
    console.log(`GRPO step with kernel=${k}: skipped (${secPerToken > 0 ? `estimated ${estimate.toFixed(0)} s, ${left.toFixed(0)} s of the budget left` : "no main step timed"})`);
    variants[k] = { skipped: secPerToken > 0 ? `estimated ${estimate.toFixed(0)} s > a third of ${left.toFixed(0)} s left` : "no main step" };
    continue;
  }
  setMatmulKernel(k);
  const tr = grpoTrainer(model, lora, { recompute: false, lr });
  variants[k] = await time(`GRPO step, kernel=${k}, B=${B} T=${T}`, B * T, iters, true, () => grpoStep(tr, main.samples, { microBatch: micro }), { t: T });
  setMatmulKernel(kernels[0]);
  results.kernelVariants = variants;
  await save();
}
results.kernelVariants = variants;

// The main GRPO step again under each speed-switch set of variants= (on top of the main switches).
const switchRuns: Record<string, unknown> = {};
for (const spec of perfVariants) {
  const estimate = secPerToken * B * T * (iters + 1) * 3; // the earlier paths may be 3x slower
  const left = budgetS - elapsed();
  if (!(secPerToken > 0) || estimate > left / 2) {
    console.log(`GRPO step with perf=${spec}: skipped (${secPerToken > 0 ? `estimated ${estimate.toFixed(0)} s, ${left.toFixed(0)} s of the budget left` : "no main step timed"})`);
    switchRuns[spec] = { skipped: secPerToken > 0 ? `estimated ${estimate.toFixed(0)} s > half of ${left.toFixed(0)} s left` : "no main step" };
    continue;
  }
  setPerfSwitches(parsePerfSwitches(spec, mainSwitches));
  const tr = grpoTrainer(model, lora, { recompute: false, lr });
  switchRuns[spec] = { switches: formatPerfSwitches(perfSwitches()), ...await time(`GRPO step, perf=${spec}, B=${B} T=${T}`, B * T, iters, true, () => grpoStep(tr, main.samples, { microBatch: micro }), { t: T }) };
  setPerfSwitches(mainSwitches);
  results.perfVariants = switchRuns;
  await save();
}
results.perfVariants = switchRuns;

if (sweep) {
  const configs = [[8, 256], [8, 512], [8, 1024], [8, 2048], [1, 512], [4, 512], [16, 512]]
    .filter(([b, t]) => !(b === B && t === T && modes.has("step")))
    .sort((x, y) => x[0] * x[1] - y[0] * y[1]);
  const rows: unknown[] = [];
  results.sweep = rows;
  const tr = grpoTrainer(model, lora, { recompute: false, lr });
  let warmed = modes.has("step");
  let longestT = modes.has("step") ? T : 1;
  for (const [b, t] of configs) {
    const runs = sweepIters + (warmed ? 0 : 1);
    // Attention grows with T squared: scale by T over the longest T measured so far (conservative).
    const estimate = secPerToken > 0 ? secPerToken * b * t * runs * Math.max(1, t / longestT) : 0;
    const left = budgetS - elapsed();
    if (estimate > left) {
      console.log(`sweep B=${b} T=${t}: skipped (estimated ${estimate.toFixed(0)} s, ${left.toFixed(0)} s of the budget left)`);
      rows.push({ B: b, T: t, skipped: `estimated ${estimate.toFixed(0)} s > ${left.toFixed(0)} s left` });
      await save();
      continue;
    }
    try {
      const { samples } = batchOf(b, t);
      const res = await time(`sweep GRPO step B=${b} T=${t}`, b * t, sweepIters, !warmed, () => grpoStep(tr, samples, { microBatch: micro }), { t });
      warmed = true;
      secPerToken = Math.max(secPerToken, res.bestMs / 1000 / (b * t));
      longestT = Math.max(longestT, t);
      rows.push({ B: b, T: t, ...res });
    } catch (e) {
      console.log(`sweep B=${b} T=${t}: failed: ${e instanceof Error ? e.message : String(e)}`);
      rows.push({ B: b, T: t, error: e instanceof Error ? e.message : String(e) });
    }
    await save();
  }
}

// The summary table: every GRPO step configuration measured (or skipped), its time, speed and peak bytes.
{
  type Row = { B: number; T: number; kernel: string; bestMs?: number; tokensPerSecond?: number; modelTflops?: number; peakBytes?: number; skipped?: string; error?: string };
  const rows: Row[] = [];
  const mainStep = results.grpoStep as Timing | undefined;
  if (mainStep) rows.push({ B, T, kernel: kernels[0], ...mainStep });
  const recomputed = results.grpoStepRecompute as Timing | undefined;
  if (recomputed) rows.push({ B, T, kernel: `${kernels[0]}, recompute`, ...recomputed });
  for (const [k, v] of Object.entries(variants)) rows.push({ B, T, kernel: k, ...(v as Partial<Row>) });
  for (const [k, v] of Object.entries(switchRuns)) rows.push({ B, T, kernel: `perf=${k}`, ...(v as Partial<Row>) });
  for (const row of (results.sweep as Row[] | undefined) ?? []) rows.push({ ...row, kernel: kernels[0] });
  console.log(`\nGRPO steps, ${presetArg}, ${projections} projections, LoRA r=${r} x 7 targets, micro-batch ${micro ?? "whole batch"}; upload ${MiB(results.uploadBytes as number)}; switches ${formatPerfSwitches(mainSwitches)}`);
  console.log("| B | T | kernel | best step ms | tokens/s | ~model TFLOP/s | peak buffers |");
  console.log("|---|---|---|---|---|---|---|");
  for (const row of rows) {
    const ms = row.bestMs?.toFixed(1) ?? (row.skipped ? "skipped" : "failed");
    console.log(`| ${row.B} | ${row.T} | ${row.kernel} | ${ms} | ${row.tokensPerSecond?.toFixed(0) ?? ""} | ${row.modelTflops?.toFixed(2) ?? ""} | ${row.peakBytes !== undefined ? MiB(row.peakBytes) : ""} |`);
  }
}
console.log(JSON.stringify(results));
destroyAdapter(lora);
destroyModel(model);
census.uninstall();
