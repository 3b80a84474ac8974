// Benchmark (not a test): throughput of the WebGPU trainer on a random model of a given shape —
// teacher-forced forward (logprobs), and full GRPO steps (forward + loss + backward + AdamW) with
// LoRA on all seven targets, stored activations and recomputation; optionally the sweep of step
// time over sequence length and batch, in the same process.
// Usage: deno run -A bench/train.bench.ts [preset=tiny|small|qwen2.5-0.5b] [B=4] [T=256] [r=16] [q4=0|1] [iters=3]
//          [modes=forward,step,recompute] [sweep=0|1] [budget=SECONDS] [out=FILE.json] [sweepIters=2]
// The first six are positional as before; the rest are key=value. The configuration:
//   qwen2.5-0.5b 8 768 16 1 2 step sweep=1 budget=150 out=train.json
// sweep=1 adds GRPO steps (stored activations) at T in 256,512,1024,2048 with B=8 and B in 1,4,8,16 with
// T=512, cheapest first, timed without a further warm-up (kernel pipelines are keyed by flags, not sizes,
// and the main run compiled them). budget: a configuration whose estimated time (tokens x the last
// seconds per token x runs x T / longest T so far) no longer fits the seconds left is skipped and listed as skipped.
// Results go to out= after every configuration, so a run stopped by a time limit keeps what it measured.
// GPU memory is not visible from WebGPU: bench/h200.sh samples nvidia-smi around the run.
import { Rng } from "../src/core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { makeTinyModel } from "../src/model/tiny.ts";
import { requestGpu } from "../src/gpu/device.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../src/gpu/model/state.ts";
import { batchLogprobs } from "../src/gpu/trainer/logprobs.ts";
import { type GrpoSample, grpoStep, grpoTrainer } from "../src/gpu/trainer/grpo-step.ts";

const PRESETS = {
  tiny: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, vocabSize: 280 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
  // Qwen2.5-0.5B's shape (494M parameters, tied embeddings), random weights.
  "qwen2.5-0.5b": { hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocabSize: 151936 },
} as const;
type Preset = keyof typeof PRESETS;

const positional = Deno.args.filter((a) => !a.includes("="));
const named = new Map(Deno.args.filter((a) => a.includes("=")).map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
for (const k of named.keys()) if (!["sweep", "budget", "out", "sweepIters"].includes(k)) throw new Error(`unknown option ${k}=`);
const [presetArg = "tiny", bArg = "4", tArg = "256", rArg = "16", q4Arg = "0", itersArg = "3", modesArg = "forward,step,recompute"] = positional;
const modes = new Set(modesArg.split(","));
if (!(presetArg in PRESETS)) throw new Error(`unknown preset ${presetArg}; one of ${Object.keys(PRESETS).join(", ")}`);
const preset = PRESETS[presetArg as Preset];
const B = Number(bArg), T = Number(tArg), r = Number(rArg), q4 = q4Arg === "1", iters = Number(itersArg);
const sweep = named.get("sweep") === "1";
const budgetS = Number(named.get("budget") ?? "Infinity");
const sweepIters = Number(named.get("sweepIters") ?? "2");
const outFile = named.get("out");
const tStart = performance.now();
const elapsed = () => (performance.now() - tStart) / 1000;

const gpu = await requestGpu();
const adapterName = `${gpu.info.vendor} ${gpu.info.description || gpu.info.device}`;
console.log(`adapter: ${adapterName}; maxStorageBufferBindingSize ${(gpu.info.limits.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)} MiB`);
let t0 = performance.now();
const tiny = makeTinyModel("qwen2", { seed: 1, ...preset, tieWordEmbeddings: true });
let params = 0;
for (const t of tiny.weights.values()) params += t.data.length;
console.log(`model: ${presetArg} (${(params / 1e6).toFixed(1)}M parameters) generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
t0 = performance.now();
const model = uploadModel(gpu.device, tiny.config, tiny.weights, { q4 });
await gpu.device.queue.onSubmittedWorkDone();
console.log(`upload${q4 ? " (q4 projections)" : ""}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const adapter = randomAdapter(tiny.config, { r, alpha: 2 * r, targets: LORA_TARGETS, seed: 2 });
const rng = new Rng(3);

function batchOf(b: number, t: number): { seqs: number[][]; samples: GrpoSample[] } {
  const seqs = Array.from({ length: b }, () => Array.from({ length: t }, () => rng.int(tiny.config.vocabSize)));
  return { seqs, samples: seqs.map((ids, i) => ({ ids, promptLen: Math.floor(t / 2), advantage: i % 2 ? 1 : -1 })) };
}

async function time(label: string, tokens: number, n: number, warm: boolean, fn: () => Promise<unknown>): Promise<{ bestMs: number; medianMs: number; allMs: number[]; tokensPerSecond: number }> {
  if (warm) await fn(); // warm-up: pipeline compilation
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await fn();
    await gpu.device.queue.onSubmittedWorkDone();
    ms.push(performance.now() - s);
  }
  const best = Math.min(...ms);
  const median = [...ms].sort((a, b) => a - b)[Math.floor(ms.length / 2)];
  console.log(`${label}: best ${best.toFixed(1)} ms, median ${median.toFixed(1)} ms of ${n} (${(tokens / (best / 1000)).toFixed(0)} tokens/s at best)`);
  return { bestMs: best, medianMs: median, allMs: ms, tokensPerSecond: tokens / (best / 1000) };
}

const lora = uploadAdapter(gpu.device, tiny.config, adapter);
const results: Record<string, unknown> = { preset: presetArg, adapter: adapterName, params, B, T, r, targets: LORA_TARGETS, q4, iters };
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
  const res = await time(`GRPO step${recompute ? " (recompute)" : ""}, B=${B} T=${T}, LoRA r=${r} x 7 targets`, B * T, iters, true, () => grpoStep(tr, main.samples));
  results[recompute ? "grpoStepRecompute" : "grpoStep"] = res;
  if (!recompute) secPerToken = res.bestMs / 1000 / (B * T);
  await save();
}

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
      const res = await time(`sweep GRPO step B=${b} T=${t}`, b * t, sweepIters, !warmed, () => grpoStep(tr, samples));
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
  console.log("\n| B | T | best step ms | tokens/s |");
  const main = results.grpoStep as { bestMs: number; tokensPerSecond: number } | undefined;
  if (main) console.log(`| ${B} | ${T} | ${main.bestMs.toFixed(1)} | ${main.tokensPerSecond.toFixed(0)} |`);
  for (const row of rows as { B: number; T: number; bestMs?: number; tokensPerSecond?: number; skipped?: string; error?: string }[]) {
    console.log(`| ${row.B} | ${row.T} | ${row.bestMs?.toFixed(1) ?? (row.skipped ? "skipped" : "failed")} | ${row.tokensPerSecond?.toFixed(0) ?? ""} |`);
  }
}
console.log(JSON.stringify(results));
destroyAdapter(lora);
destroyModel(model);
