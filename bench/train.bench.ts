// Benchmark (not a test): throughput of the WebGPU trainer on a random model of a given shape —
// teacher-forced forward (logprobs), and full GRPO steps (forward + loss + backward + AdamW) with
// LoRA on all seven targets, stored activations and recomputation.
// Usage: deno run -A bench/train.bench.ts [preset=tiny|small|qwen2.5-0.5b] [B=4] [T=256] [r=16] [q4=0|1] [iters=3] [modes=forward,step,recompute]
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

const [presetArg = "tiny", bArg = "4", tArg = "256", rArg = "16", q4Arg = "0", itersArg = "3", modesArg = "forward,step,recompute"] = Deno.args;
const modes = new Set(modesArg.split(","));
if (!(presetArg in PRESETS)) throw new Error(`unknown preset ${presetArg}; one of ${Object.keys(PRESETS).join(", ")}`);
const preset = PRESETS[presetArg as Preset];
const B = Number(bArg), T = Number(tArg), r = Number(rArg), q4 = q4Arg === "1", iters = Number(itersArg);

const gpu = await requestGpu();
console.log(`adapter: ${gpu.info.vendor} ${gpu.info.description || gpu.info.device}; maxStorageBufferBindingSize ${(gpu.info.limits.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)} MiB`);
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
const seqs = Array.from({ length: B }, () => Array.from({ length: T }, () => rng.int(tiny.config.vocabSize)));
const samples: GrpoSample[] = seqs.map((ids, i) => ({ ids, promptLen: Math.floor(T / 2), advantage: i % 2 ? 1 : -1 }));
const tokens = B * T;

async function time(label: string, fn: () => Promise<unknown>): Promise<Record<string, number>> {
  await fn(); // warm-up: pipeline compilation
  const ms: number[] = [];
  for (let i = 0; i < iters; i++) {
    const s = performance.now();
    await fn();
    await gpu.device.queue.onSubmittedWorkDone();
    ms.push(performance.now() - s);
  }
  const best = Math.min(...ms);
  console.log(`${label}: best ${best.toFixed(1)} ms of ${iters} (${(tokens / (best / 1000)).toFixed(0)} tokens/s)`);
  return { bestMs: best, tokensPerSecond: tokens / (best / 1000) };
}

const lora = uploadAdapter(gpu.device, tiny.config, adapter);
const results: Record<string, unknown> = { preset: presetArg, params, B, T, r, q4 };
if (modes.has("forward")) results.forward = await time(`forward (logprobs), B=${B} T=${T}`, () => batchLogprobs(model, seqs, lora));
for (const recompute of [false, true]) {
  if (!modes.has(recompute ? "recompute" : "step")) continue;
  const tr = grpoTrainer(model, lora, { recompute, lr: { base: 1e-5, warmupSteps: 0, totalSteps: 100, decay: "constant" } });
  results[recompute ? "grpoStepRecompute" : "grpoStep"] = await time(`GRPO step${recompute ? " (recompute)" : ""}, LoRA r=${r} x 7 targets`, () => grpoStep(tr, samples));
}
console.log(JSON.stringify(results));
destroyAdapter(lora);
destroyModel(model);
