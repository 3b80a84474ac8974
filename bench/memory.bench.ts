// Benchmark (not a test): peak GPU buffer bytes of one GRPO step by the trainer's own accounting
// (src/gpu/census.ts; WebGPU has no memory query), and what the peak is made of, for a list of
// batch shapes, micro-batch sizes and stored vs recomputed activations. One untimed step per
// configuration, so it also runs on lavapipe at small shapes; with `project=BxT` it fits
// peak = fixed + per-token x tokens through the two smallest-token configurations of each
// (micro, recompute) pair (activations, the vocabulary head's rows and the backward scratch are
// all proportional to the tokens of a micro-batch) and prints the projected peak at B x T.
// Usage: deno run -A bench/memory.bench.ts [preset=tiny|small|qwen2.5-0.5b] [q4=1] [f16=0] [r=16]
//          [configs=1x32:1:0,2x32:2:0,...  (B x T : micro-batch : recompute 0|1)] [project=8x768] [out=FILE.json]
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { makeTinyModel } from "../src/model/tiny.ts";
import { requestGpu } from "../src/gpu/device.ts";
import { trimArena } from "../src/gpu/arena.ts";
import { GpuCensus } from "../src/gpu/census.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../src/gpu/model/state.ts";
import { grpoStep, grpoTrainer } from "../src/gpu/trainer/grpo-step.ts";

const PRESETS = {
  tiny: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, vocabSize: 280 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
  "qwen2.5-0.5b": { hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocabSize: 151936 },
} as const;

const named = new Map(benchArgs.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
for (const k of named.keys()) if (!["preset", "q4", "f16", "r", "configs", "project", "out"].includes(k)) throw new Error(`unknown option ${k}=`);
const presetName = named.get("preset") ?? "tiny";
if (!(presetName in PRESETS)) throw new Error(`unknown preset ${presetName}`);
const preset = PRESETS[presetName as keyof typeof PRESETS];
const q4 = (named.get("q4") ?? "1") === "1", f16 = named.get("f16") === "1", r = Number(named.get("r") ?? "16");
const configs = (named.get("configs") ?? "1x32:1:0,2x32:2:0,1x32:1:1,2x32:2:1").split(",").map((c) => {
  const m = /^(\d+)x(\d+):(\d+):([01])$/.exec(c);
  if (!m) throw new Error(`config ${c}: BxT:micro:recompute`);
  return { B: Number(m[1]), T: Number(m[2]), micro: Number(m[3]), recompute: m[4] === "1" };
});
const project = named.get("project")?.split("x").map(Number);
const MiB = (b: number) => `${(b / 2 ** 20).toFixed(1)} MiB`;

function category(label: string, usage: number): string {
  if (usage & 0x40) return "uniform pool";
  if (/-readback$/.test(label)) return "read-back staging";
  if (/-q4$|-scales$|-zp$|:f16$|^model\.|^lm_head\.|^rope-inv-freq$|^q4-unused-binding$|^lmhead-unused$/.test(label)) return "frozen weights";
  if (/^(matmul-splitk-scratch|gradnorm-partials|rmsnorm_dw-partials)$/.test(label)) return "kernel scratch (split-K, norm partials)";
  if (/^(grad|adam-m|adam-v):/.test(label)) return "LoRA grads + AdamW moments";
  if (/lora_[AB]/.test(label)) return "LoRA parameters";
  if (/^(lmhead|logp$|lm-lse$|entropy$)/.test(label)) return "vocabulary head";
  if (/^(L\d+|x\d+$|rstdF$|hF$)/.test(label)) return "activations kept for backward";
  if (/^Lscratch/.test(label)) return "recompute scratch (one layer)";
  if (/^(d-|attn-delta$|dL-)/.test(label)) return "backward scratch";
  if (/^batch-|^grpo|^(mask|adv|agg-weight|logp-old|logp-ref)$/.test(label)) return "batch and per-sample inputs";
  return `other (${label})`;
}

const gpu = await requestGpu();
const census = new GpuCensus(gpu.device, { buffersOnly: true }).install();
const tiny = makeTinyModel("qwen2", { seed: 1, ...preset, tieWordEmbeddings: true });
const model = uploadModel(gpu.device, tiny.config, tiny.weights, { q4, f16 });
const projections = q4 ? "q4" : model.half.size > 0 ? "f16" : "f32";
const lora = uploadAdapter(gpu.device, tiny.config, randomAdapter(tiny.config, { r, alpha: 2 * r, targets: LORA_TARGETS, seed: 2 }));
await gpu.device.queue.onSubmittedWorkDone();
const uploadBytes = census.liveBufferBytes;
console.log(`${gpu.info.vendor} ${gpu.info.description}; ${presetName}, ${projections} projections, LoRA r=${r} x 7 targets: ${MiB(uploadBytes)} after upload (weights + adapter state)`);
const rng = new Rng(3);
const lr = { base: 1e-5, warmupSteps: 0, totalSteps: 100, decay: "constant" } as const;
const rows: { B: number; T: number; micro: number; recompute: boolean; peakBytes: number; breakdown: Record<string, number> }[] = [];
for (const c of configs) {
  const samples = Array.from({ length: c.B }, (_, i) => ({ ids: Array.from({ length: c.T }, () => rng.int(tiny.config.vocabSize)), promptLen: Math.floor(c.T / 2), advantage: i % 2 ? 1 : -1 }));
  const tr = grpoTrainer(model, lora, { recompute: c.recompute, lr });
  // Each configuration's own peak: what the previous one left in the arena (kept across steps) goes first.
  trimArena(gpu.device);
  census.recordPeakBreakdown(category);
  const t0 = performance.now();
  await grpoStep(tr, samples, { microBatch: c.micro });
  await gpu.device.queue.onSubmittedWorkDone();
  const breakdown = Object.fromEntries(Object.entries(census.peakBreakdown() ?? {}).sort((a, b) => b[1] - a[1]));
  const peakBytes = census.peakBufferBytes;
  census.recordPeakBreakdown(false);
  const sum = Object.values(breakdown).reduce((a, b) => a + b, 0);
  if (sum !== peakBytes) throw new Error(`breakdown sums to ${sum}, peak ${peakBytes}`);
  rows.push({ ...c, peakBytes, breakdown });
  console.log(`B=${c.B} T=${c.T} micro-batch ${c.micro}${c.recompute ? " recompute" : ""}: peak ${MiB(peakBytes)} (step ${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  for (const [k, b] of Object.entries(breakdown)) console.log(`  ${k.padEnd(36)} ${MiB(b).padStart(12)}`);
}

const projected: unknown[] = [];
if (project) {
  const [PB, PT] = project;
  console.log(`\nprojected to B=${PB} T=${PT} (linear in the tokens of a micro-batch through two measured configurations of the same kind; an extrapolation, not a measurement):`);
  console.log("| micro-batch (sequences) | activations | peak, projected | of which grows with tokens |");
  console.log("|---|---|---|---|");
  const kinds = new Map<string, typeof rows>();
  for (const row of rows) {
    const key = String(row.recompute);
    kinds.set(key, [...(kinds.get(key) ?? []), row]);
  }
  for (const [key, rs] of kinds) {
    const byTokens = [...rs].sort((a, b) => a.micro * a.T - b.micro * b.T);
    const [a, b] = [byTokens[0], byTokens.at(-1)!];
    const na = a.micro * a.T, nb = b.micro * b.T;
    if (na === nb) continue;
    const perToken = (b.peakBytes - a.peakBytes) / (nb - na);
    const fixed = a.peakBytes - perToken * na;
    for (const micro of [PB, 4, 2, 1].filter((m, i, arr) => m <= PB && arr.indexOf(m) === i)) {
      const peak = fixed + perToken * micro * PT;
      projected.push({ recompute: key === "true", micro, tokens: micro * PT, fixedBytes: fixed, perTokenBytes: perToken, peakBytes: peak });
      console.log(`| ${micro} | ${key === "true" ? "recomputed" : "stored"} | ${(peak / 2 ** 30).toFixed(2)} GiB | ${(perToken / 1024).toFixed(1)} KiB/token x ${micro * PT} tokens (fixed ${MiB(fixed)}) |`);
    }
  }
}
if (named.get("out")) await Deno.writeTextFile(named.get("out")!, JSON.stringify({ webgpu, preset: presetName, projections, r, uploadBytes, rows, projected }, null, 1));
destroyAdapter(lora);
destroyModel(model);
census.uninstall();
