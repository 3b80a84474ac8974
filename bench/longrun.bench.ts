// Benchmark (not a test): per-step wall time over a long run of the trainer, to see whether steps
// slow down as a run goes on, with a census of the GPU objects the device holds (src/gpu/census.ts):
// buffers made / destroyed / still alive, bind groups, encoders and passes made, and how many of
// their JS wrappers the garbage collector reclaimed. Prints the first 10 and last 10 steps' median
// and a least-squares slope of step time per 100 steps.
// Usage: deno run -A [--v8-flags=--expose-gc] bench/longrun.bench.ts [what=pretrain|grpo] [steps=300]
//          [hidden=64] [layers=2] [heads=4] [kvHeads=2] [inter=128] [vocab=512] [T=128] [B=16] [micro=4]
//          [r=8] [census=1] [gc=0] [log=0] [every=25] [out=FILE.json]
// what=pretrain runs pretrainStep (full fine-tuning, random tokens, every row T long); what=grpo runs
// grpoStep with LoRA r on all seven targets over B samples (half prompt, half completion).
// gc=N calls the garbage collector every N steps (needs --v8-flags=--expose-gc): a leak that only
// garbage collection frees shows up as steps that speed up again after each collection.
// log=1 appends a JSON line per step to a temporary file, as rlvr pretrain's train_log.jsonl does.
// census=0 leaves the device's methods alone (no counting overhead).
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { GpuCensus } from "../src/gpu/census.ts";
import { requestGpu } from "../src/gpu/device.ts";
import { uploadAdapter, uploadModel } from "../src/gpu/model/state.ts";
import { type GrpoSample, grpoStep, grpoTrainer } from "../src/gpu/trainer/grpo-step.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { demoConfig, initWeights, parameterCount } from "../src/runtime/pretrain/model.ts";
import { createPretrainer, pretrainStep } from "../src/runtime/pretrain/step.ts";

const named = new Map(benchArgs.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const KNOWN = ["what", "steps", "hidden", "layers", "heads", "kvHeads", "inter", "vocab", "T", "B", "micro", "r", "census", "gc", "log", "every", "out"];
for (const k of named.keys()) if (!KNOWN.includes(k)) throw new Error(`unknown option ${k}= (known: ${KNOWN.join(", ")})`);
const num = (k: string, d: number) => Number(named.get(k) ?? d);
const what = named.get("what") ?? "pretrain";
if (what !== "pretrain" && what !== "grpo") throw new Error(`what=${what}: pretrain or grpo`);
const steps = num("steps", 300), T = num("T", 128), B = num("B", 16), micro = num("micro", 4), r = num("r", 8);
const gcEvery = num("gc", 0), every = num("every", 25);
const gc = (globalThis as { gc?: () => void }).gc;
if (gcEvery > 0 && !gc) throw new Error("gc=N needs --v8-flags=--expose-gc");

const gpu = await requestGpu();
const device = gpu.device;
const census = named.get("census") === "0" ? null : new GpuCensus(device).install();
const cfg = demoConfig({
  arch: "qwen2", vocabSize: num("vocab", 512), hidden: num("hidden", 64), layers: num("layers", 2), heads: num("heads", 4), kvHeads: num("kvHeads", 2),
  intermediate: num("inter", 128), seqLen: T, tieWordEmbeddings: true, ropeTheta: 10000,
}, [0]);
const rng = new Rng(7);
const randomRow = () => Array.from({ length: T }, () => rng.int(cfg.vocabSize));
console.log(`adapter: ${gpu.info.vendor} ${gpu.info.description || gpu.info.device}; ${what}, ${(parameterCount(cfg) / 1e6).toFixed(2)}M parameters (hidden ${cfg.hiddenSize}, ${cfg.numLayers} layers, vocab ${cfg.vocabSize}), ${B} x ${T} tokens per step, micro-batch ${micro}, ${steps} steps; census ${census ? "on" : "off"}; gc every ${gcEvery || "never"}`);

let step: () => Promise<number>;
if (what === "pretrain") {
  const tr = createPretrainer(device, cfg, initWeights(cfg, 1), { microBatch: micro, seqLen: T, lr: { base: 1e-3, warmupSteps: 10, totalSteps: steps, decay: "cosine", minRatio: 0.1 } });
  step = async () => (await pretrainStep(tr, Array.from({ length: B }, randomRow))).tokens;
} else {
  const model = uploadModel(device, cfg, initWeights(cfg, 1));
  const lora = uploadAdapter(device, cfg, randomAdapter(cfg, { r, alpha: 2 * r, targets: LORA_TARGETS, seed: 2 }));
  const tr = grpoTrainer(model, lora, { lr: { base: 1e-4, warmupSteps: 0, totalSteps: steps, decay: "constant" } });
  step = async () => {
    const samples: GrpoSample[] = Array.from({ length: B }, (_, i) => ({ ids: randomRow(), promptLen: T / 2, advantage: i % 2 ? 1 : -1 }));
    await grpoStep(tr, samples, { microBatch: micro });
    return B * (T / 2);
  };
}

const logFile = named.get("log") === "1" ? await Deno.makeTempFile({ prefix: "longrun-log-", suffix: ".jsonl" }) : null;
const logHandle = logFile ? await Deno.open(logFile, { write: true, append: true }) : null;
const enc = new TextEncoder();
interface Row {
  step: number;
  ms: number;
  tokensPerSec: number;
  heapMB: number;
  liveBuffers?: number;
  liveMB?: number;
  bindGroups?: number;
  bindGroupsCollected?: number;
  buffersMade?: number;
  passes?: number;
}
const rows: Row[] = [];
const t0 = performance.now();
for (let s = 1; s <= steps; s++) {
  if (gcEvery > 0 && s % gcEvery === 0) gc!();
  const a = performance.now();
  const tokens = await step();
  await device.queue.onSubmittedWorkDone();
  const ms = performance.now() - a;
  const row: Row = { step: s, ms, tokensPerSec: tokens / (ms / 1000), heapMB: Deno.memoryUsage().heapUsed / 2 ** 20 };
  if (census) {
    const c = census.counts();
    Object.assign(row, {
      liveBuffers: c.liveBuffers, liveMB: c.liveBufferBytes / 2 ** 20, bindGroups: c.made.bindGroup, bindGroupsCollected: c.collected.bindGroup,
      buffersMade: c.made.buffer, passes: c.made.computePass,
    });
  }
  rows.push(row);
  if (logHandle) await logHandle.write(enc.encode(JSON.stringify({ event: "step", ...row }) + "\n"));
  if (s === 1 || s % every === 0 || s === steps) {
    const c = census ? ` live buffers ${row.liveBuffers} (${row.liveMB!.toFixed(1)} MB), bind groups made ${row.bindGroups} (collected ${row.bindGroupsCollected}), buffers made ${row.buffersMade}, passes ${row.passes}` : "";
    console.log(`step ${s}: ${ms.toFixed(1)} ms, ${Math.round(row.tokensPerSec)} tok/s, heap ${row.heapMB.toFixed(1)} MB;${c}`);
  }
}
logHandle?.close();
if (logFile) await Deno.remove(logFile);

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
// Step 1 compiles the pipelines: the "first 10" are steps 2..11.
const first = rows.slice(1, 11).map((x) => x.ms), last = rows.slice(-10).map((x) => x.ms);
const xs = rows.slice(1);
const mx = xs.reduce((s, x) => s + x.step, 0) / xs.length, my = xs.reduce((s, x) => s + x.ms, 0) / xs.length;
const slope = xs.reduce((s, x) => s + (x.step - mx) * (x.ms - my), 0) / Math.max(1e-9, xs.reduce((s, x) => s + (x.step - mx) ** 2, 0));
const summary = {
  webgpu,
  what, steps, B, T, micro, hidden: cfg.hiddenSize, layers: cfg.numLayers, vocab: cfg.vocabSize, census: census !== null, gcEvery, log: logFile !== null,
  firstMedianMs: median(first), lastMedianMs: median(last), ratio: median(last) / median(first), slopeMsPer100Steps: slope * 100,
  totalS: (performance.now() - t0) / 1000, final: census?.counts(true), rows,
};
console.log(
  `first 10 (steps 2-11) median ${summary.firstMedianMs.toFixed(1)} ms, last 10 median ${summary.lastMedianMs.toFixed(1)} ms (x${summary.ratio.toFixed(2)}); ` +
    `slope ${summary.slopeMsPer100Steps.toFixed(2)} ms per 100 steps; ${summary.totalS.toFixed(0)} s`,
);
if (census) {
  const live = Object.entries(summary.final!.liveByLabel ?? {}).sort((a, b) => b[1] - a[1]).slice(0, 12);
  console.log(`live buffers at the end by label: ${live.map(([l, n]) => `${l} ${n}`).join(", ")}`);
}
const out = named.get("out");
if (out) await Deno.writeTextFile(out, JSON.stringify(summary, null, 1));
