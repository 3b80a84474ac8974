// Long runs must not pile up GPU objects: per-dispatch uniform buffers are recycled across steps,
// a step's activations and scratch come back from the arena (arena.ts) instead of being made again,
// kernel scratches are one grow-only buffer per device, and a recycled uniform buffer never changes
// what already-submitted work reads.
import { assert, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../model/lora.ts";
import { demoConfig, initWeights } from "../runtime/pretrain/model.ts";
import { createPretrainer, destroyPretrainer, pretrainStep } from "../runtime/pretrain/step.ts";
import { GpuCensus } from "./census.ts";
import {
  computePipeline,
  dispatch,
  readF32,
  releaseTransients,
  requestGpu,
  storageBuffer,
  transientStats,
  uniformBuffer,
} from "./device.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "./model/state.ts";
import { grpoStep, grpoTrainer } from "./trainer/grpo-step.ts";

const gpu = await requestGpu();

/** Records y = alpha * y over 4 elements: a kernel with a uniform (count, alpha). */
async function encodeScale(device: GPUDevice, enc: GPUCommandEncoder, y: GPUBuffer, count: number, alpha: number) {
  const pipeline = await computePipeline(
    device,
    "test-scale",
    `
    struct P { count: u32, alpha: f32, _a: u32, _b: u32 }
    @group(0) @binding(0) var<storage, read_write> y: array<f32>;
    @group(0) @binding(1) var<uniform> p: P;
    @compute @workgroup_size(4) fn main(@builtin(local_invocation_index) i: u32) { if (i < p.count) { y[i] = p.alpha * y[i]; } }`,
    {},
  );
  const words = new Uint32Array([count, 0, 0, 0]);
  new Float32Array(words.buffer)[1] = alpha;
  dispatch(device, enc, pipeline, [y, uniformBuffer(device, "test-scale-params", words)], [1]);
}

Deno.test("uniformBuffer: a buffer recycled by releaseTransients and rewritten does not change the work submitted before", async () => {
  const { device } = gpu;
  const y = storageBuffer(device, "y", new Float32Array([1, 2, 3, 4]));
  const z = storageBuffer(device, "z", new Float32Array([1, 2, 3, 4]));
  releaseTransients(device);
  const before = transientStats(device);
  const e1 = device.createCommandEncoder();
  await encodeScale(device, e1, y, 4, 2);
  device.queue.submit([e1.finish()]);
  releaseTransients(device); // y's uniform (count 4, alpha 2) goes back to the free list
  const e2 = device.createCommandEncoder();
  await encodeScale(device, e2, z, 4, 3); // same size: gets the recycled buffer, rewritten with alpha 3
  device.queue.submit([e2.finish()]);
  const after = transientStats(device);
  assert(
    after.rewritten > before.rewritten,
    `the second uniform was not recycled (${JSON.stringify(before)} -> ${JSON.stringify(after)})`,
  );
  assertEquals(Array.from(await readF32(device, y)), [2, 4, 6, 8]);
  assertEquals(Array.from(await readF32(device, z)), [3, 6, 9, 12]);
  releaseTransients(device);
  y.destroy();
  z.destroy();
});

const cfg = demoConfig({
  arch: "qwen2",
  vocabSize: 256,
  hidden: 32,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  intermediate: 48,
  seqLen: 300,
  tieWordEmbeddings: true,
  ropeTheta: 10000,
}, [0]);
const rng = new Rng(5);
const rows = (n: number, T: number) =>
  Array.from({ length: n }, () => Array.from({ length: T }, () => rng.int(cfg.vocabSize)));

Deno.test("pretrainStep: after the first steps no uniform buffer is created, buffers are made only for the step's read-back, and none stays alive per step (norm-weight and grad-norm partials included)", async () => {
  const { device } = gpu;
  const census = new GpuCensus(device).install();
  // 300 rows per micro-batch: the RMSNorm weight gradients take the sliced path with a partials scratch.
  const tr = createPretrainer(device, cfg, initWeights(cfg, 3), { microBatch: 1, seqLen: 300 });
  try {
    const batch = rows(2, 300);
    await pretrainStep(tr, batch);
    await pretrainStep(tr, batch);
    const s0 = transientStats(device), c0 = census.counts(true);
    for (let i = 0; i < 3; i++) await pretrainStep(tr, batch);
    await device.queue.onSubmittedWorkDone();
    const s1 = transientStats(device), c1 = census.counts(true);
    assertEquals(s1.created, s0.created, "uniform buffers were created after the first steps");
    assert(s1.unchanged > s0.unchanged, "no uniform buffer was reused unchanged");
    assertEquals(s1.inUse, 0);
    // Buffers neither destroyed nor collected: the same set after three more steps (destroy() is counted at once, GC not needed).
    assertEquals(
      c1.liveBuffers,
      c0.liveBuffers,
      `live buffers grew: ${JSON.stringify(c0.liveByLabel)} -> ${JSON.stringify(c1.liveByLabel)}`,
    );
    // One grow-only scratch per device for each kernel (before: one per call, destroyed at the step's end).
    assert(
      (c1.liveByLabel?.["rmsnorm_dw-partials"] ?? 0) <= 1 && (c1.liveByLabel?.["gradnorm-partials"] ?? 0) <= 1,
      `scratch piled up: ${JSON.stringify(c1.liveByLabel)}`,
    );
    // Per step: the two micro-batches' log-prob copies and the one read-back staging buffer; activations come from the arena.
    assertEquals(
      c1.made.buffer - c0.made.buffer,
      3 * 3,
      `buffers made in three steps: ${c1.made.buffer - c0.made.buffer}`,
    );
  } finally {
    census.uninstall();
    destroyPretrainer(tr);
  }
});

Deno.test("grpoStep: after the first steps no uniform buffer is created and no buffer stays alive per step", async () => {
  const { device } = gpu;
  const census = new GpuCensus(device).install();
  const model = uploadModel(device, cfg, initWeights(cfg, 4));
  const lora = uploadAdapter(device, cfg, randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 6 }));
  const tr = grpoTrainer(model, lora, { lr: { base: 1e-3, warmupSteps: 0, totalSteps: 10, decay: "constant" } });
  try {
    const samples = rows(4, 24).map((ids, i) => ({ ids, promptLen: 12, advantage: i % 2 ? 1 : -1 }));
    await grpoStep(tr, samples, { microBatch: 2 });
    await grpoStep(tr, samples, { microBatch: 2 });
    const s0 = transientStats(device), c0 = census.counts(true);
    for (let i = 0; i < 3; i++) await grpoStep(tr, samples, { microBatch: 2 });
    await device.queue.onSubmittedWorkDone();
    const s1 = transientStats(device), c1 = census.counts(true);
    assertEquals(s1.created, s0.created, "uniform buffers were created after the first steps");
    assertEquals(
      c1.liveBuffers,
      c0.liveBuffers,
      `live buffers grew: ${JSON.stringify(c0.liveByLabel)} -> ${JSON.stringify(c1.liveByLabel)}`,
    );
  } finally {
    census.uninstall();
    destroyAdapter(lora);
    destroyModel(model);
  }
});
