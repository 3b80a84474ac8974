// Benchmark helper (not a test): the WebGPU calls of one training step, counted exactly — compute
// passes, dispatches, bind groups, buffers created, uniform writes, submits, read-backs — for a GRPO
// step (LoRA r on all seven targets) or a pretraining step (full fine-tuning), after two warm-up
// steps (pipelines compiled, scratches grown: the steady state of a run). Counts do not depend on the machine's speed, so they are exact on a
// CPU adapter too; they do depend on the adapter's binding limit (the vocabulary head's chunking),
// which the output names.
// dry=1 replaces queue.submit by a no-op while stepping: nothing runs, so the 0.5B step's counts at
// 8 x 768 come out on a CPU machine in seconds (read-backs then return zeros; the step's numbers are
// meaningless, its calls are the real ones). The wall time of a dry step is host-side recording cost
// on this machine (a CPU figure, not a GPU one).
// Usage: deno run -A bench/calls.bench.ts [what=grpo|pretrain] [preset=tiny|small|qwen2.5-0.5b|demo] [B=8] [T=768]
//          [micro=B] [q4=1] [r=16] [dry=1] [recompute=0] [out=FILE.json]
import { args as benchArgs, webgpu } from "./engine.ts";
import { diffCalls, installCallCounter, snapshotCalls } from "./webgpu-calls.ts";
import { Rng } from "../src/core/rng.ts";
import { GpuCensus } from "../src/gpu/census.ts";
import { requestGpu, transientStats } from "../src/gpu/device.ts";
import { perfSwitches } from "../src/gpu/switches.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../src/gpu/model/state.ts";
import { type GrpoSample, grpoStep, grpoTrainer } from "../src/gpu/trainer/grpo-step.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { makeTinyModel } from "../src/model/tiny.ts";
import { DEFAULT_DEMO_ARCH, demoConfig, initWeights } from "../src/runtime/pretrain/model.ts";
import { createPretrainer, destroyPretrainer, pretrainStep } from "../src/runtime/pretrain/step.ts";

const PRESETS = {
  tiny: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, vocabSize: 280 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
  "qwen2.5-0.5b": { hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocabSize: 151936 },
} as const;

const named = new Map(benchArgs.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const KNOWN = ["what", "preset", "B", "T", "micro", "q4", "r", "dry", "recompute", "out"];
for (const k of named.keys()) if (!KNOWN.includes(k)) throw new Error(`unknown option ${k}= (known: ${KNOWN.join(", ")})`);
const what = named.get("what") ?? "grpo";
const B = Number(named.get("B") ?? 8), T = Number(named.get("T") ?? 768);
const micro = Number(named.get("micro") ?? B);
const dry = named.get("dry") === "1";
const r = Number(named.get("r") ?? 16);

const gpu = await requestGpu();
const device = gpu.device;
// createBuffer's own time (the census below wraps the device's method, so the prototype counter misses it).
const createBufferTime = { calls: 0, ms: 0 };
{
  const create = device.createBuffer.bind(device);
  device.createBuffer = (desc: GPUBufferDescriptor) => {
    const t = performance.now();
    try {
      return create(desc);
    } finally {
      createBufferTime.calls++;
      createBufferTime.ms += performance.now() - t;
    }
  };
}
// Bind groups made during the counted step, by label: what the cache (recorder.ts) missed.
const bgLabels = new Map<string, number>();
{
  const cbg = device.createBindGroup.bind(device);
  device.createBindGroup = (d: GPUBindGroupDescriptor) => {
    bgLabels.set(d.label ?? "", (bgLabels.get(d.label ?? "") ?? 0) + 1);
    return cbg(d);
  };
}
const census = new GpuCensus(device, { buffersOnly: true }).install();
// dry=1: queue.submit becomes a no-op before the counter wraps it, so submits are still counted.
const queueProto = (globalThis as unknown as { GPUQueue: { prototype: { submit: (cbs: GPUCommandBuffer[]) => undefined } } }).GPUQueue.prototype;
if (dry) queueProto.submit = function (this: GPUQueue, _cbs: GPUCommandBuffer[]) {
  return undefined;
};
const calls = installCallCounter();

let step: () => Promise<unknown>;
let cleanup: () => void;
let label: string;
if (what === "grpo") {
  const presetName = named.get("preset") ?? "qwen2.5-0.5b";
  const preset = PRESETS[presetName as keyof typeof PRESETS];
  if (!preset) throw new Error(`unknown preset ${presetName}`);
  const tiny = makeTinyModel("qwen2", { seed: 1, ...preset, tieWordEmbeddings: true });
  const q4 = (named.get("q4") ?? "1") === "1";
  const model = uploadModel(device, tiny.config, tiny.weights, { q4 });
  const lora = uploadAdapter(device, tiny.config, randomAdapter(tiny.config, { r, alpha: 2 * r, targets: LORA_TARGETS, seed: 2 }));
  const tr = grpoTrainer(model, lora, { recompute: named.get("recompute") === "1", lr: { base: 1e-5, warmupSteps: 0, totalSteps: 100, decay: "constant" } });
  const rng = new Rng(3);
  const samples: GrpoSample[] = Array.from({ length: B }, (_, i) => ({
    ids: Array.from({ length: T }, () => rng.int(tiny.config.vocabSize)),
    promptLen: Math.floor(T / 2),
    advantage: i % 2 ? 1 : -1,
  }));
  label = `grpo ${presetName} ${q4 ? "q4" : "f32"} ${B}x${T} micro ${micro} r ${r}${tr.opts.recompute ? " recompute" : ""}`;
  step = () => grpoStep(tr, samples, { microBatch: micro });
  cleanup = () => {
    destroyAdapter(lora);
    destroyModel(model);
  };
} else if (what === "pretrain") {
  const cfg = demoConfig({ ...DEFAULT_DEMO_ARCH, vocabSize: 8192, seqLen: T }, [1, 2]);
  const tr = createPretrainer(device, cfg, initWeights(cfg, 1), { microBatch: micro, seqLen: T });
  const rng = new Rng(5);
  const rows = Array.from({ length: B }, () => Array.from({ length: T }, () => rng.int(cfg.vocabSize)));
  label = `pretrain demo ${B}x${T} micro ${micro}`;
  step = () => pretrainStep(tr, rows);
  cleanup = () => destroyPretrainer(tr);
} else throw new Error(`what=${what}: grpo or pretrain`);

console.log(`adapter: ${gpu.info.vendor} ${gpu.info.description || gpu.info.device} (${webgpu}); maxStorageBufferBindingSize ${(device.limits.maxStorageBufferBindingSize / 2 ** 20).toFixed(0)} MiB; ${label}; dry ${dry}; switches ${JSON.stringify(perfSwitches())}`);
// Two warm-up steps: pipelines, and the grow-only scratches reaching their size (a grown split-K
// scratch makes new bind groups once more in the step after it grew).
await step();
await step();
await device.queue.onSubmittedWorkDone();
const before = snapshotCalls(calls);
const buffersBefore = census.counts().made.buffer;
const uniformsBefore = transientStats(device);
const cb0 = { ...createBufferTime };
bgLabels.clear();
const t0 = performance.now();
await step();
const wall = performance.now() - t0;
await device.queue.onSubmittedWorkDone();
const d = diffCalls(before, calls);
const uniformsAfter = transientStats(device);
const n = (k: string) => d[k]?.calls ?? 0;
const summary = {
  webgpu, label, dry, switches: perfSwitches(), maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize,
  dispatches: n("GPUComputePassEncoder.dispatchWorkgroups"),
  computePasses: n("GPUCommandEncoder.beginComputePass"),
  setPipeline: n("GPUComputePassEncoder.setPipeline"),
  // Counted by the device-level wrapper above (the prototype counter does not see calls through it).
  bindGroups: [...bgLabels.values()].reduce((a, b) => a + b, 0),
  bindGroupsByLabel: Object.fromEntries(bgLabels),
  buffersCreated: census.counts().made.buffer - buffersBefore,
  uniformBuffersCreated: uniformsAfter.created - uniformsBefore.created,
  writeBuffer: n("GPUQueue.writeBuffer"),
  copyBufferToBuffer: n("GPUCommandEncoder.copyBufferToBuffer"),
  clearBuffer: n("GPUCommandEncoder.clearBuffer"),
  commandEncoders: n("GPUDevice.createCommandEncoder"),
  submits: n("GPUQueue.submit"),
  mapAsync: n("GPUBuffer.mapAsync"),
  onSubmittedWorkDone: n("GPUQueue.onSubmittedWorkDone"),
  stepWallMs: wall,
  createBufferMs: createBufferTime.ms - cb0.ms,
  apiMs: Object.values(d).reduce((s, c) => s + c.ms, 0),
  calls: d,
};
console.log(`${label}: ${summary.dispatches} dispatches in ${summary.computePasses} compute passes, ${summary.bindGroups} bind groups, ${summary.buffersCreated} buffers created (${summary.uniformBuffersCreated} uniform), ${summary.writeBuffer} writeBuffer, ${summary.copyBufferToBuffer} copies, ${summary.submits} submits, ${summary.mapAsync} mapAsync, ${summary.onSubmittedWorkDone} onSubmittedWorkDone; step wall ${wall.toFixed(0)} ms${dry ? " (dry: recording only, this machine's CPU)" : ""}`);
console.log(JSON.stringify(summary));
const out = named.get("out");
if (out) await Deno.writeTextFile(out, JSON.stringify(summary, null, 1));
cleanup();
census.uninstall();
