// The census's GPU-memory accounting (live bytes and the high-water mark) against an independent
// tally of every createBuffer and destroy() during a tiny GRPO step: the figure the train-step suite
// (bench/suites/train-step.ts) records as peak_bytes and the recipe reports as gpuMemoryBytes.
import { assert, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../model/lora.ts";
import { makeTinyModel } from "../model/tiny.ts";
import { GpuCensus } from "./census.ts";
import { requestGpu } from "./device.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "./model/state.ts";
import { grpoStep, grpoTrainer } from "./trainer/grpo-step.ts";

Deno.test("GpuCensus: live and peak buffer bytes equal the created-minus-destroyed sum through a GRPO step; resetPeak starts a new mark", async () => {
  // A device of its own: nothing else adds buffers to it.
  const { device } = await requestGpu();
  // The tally: wraps createBuffer before the census does, keeps every buffer (so none is garbage
  // collected behind the census's back) and its own running sum and maximum.
  const created: GPUBuffer[] = [];
  let sum = 0, max = 0;
  const original = device.createBuffer.bind(device);
  let census: GpuCensus | null = null;
  device.createBuffer = (desc: GPUBufferDescriptor) => {
    const b = original(desc);
    created.push(b);
    sum += desc.size;
    max = Math.max(max, sum);
    const destroy = b.destroy.bind(b);
    let done = false;
    b.destroy = () => {
      if (!done) {
        done = true;
        sum -= desc.size;
      }
      destroy();
    };
    return b;
  };
  census = new GpuCensus(device).install();
  const check = (where: string) => {
    assertEquals(census!.liveBufferBytes, sum, `${where}: census live bytes vs the tally`);
    assertEquals(census!.counts().liveBufferBytes, sum, `${where}: counts().liveBufferBytes`);
    assertEquals(census!.peakBufferBytes, max, `${where}: census peak vs the tally's maximum`);
  };
  try {
    const tiny = makeTinyModel("qwen2", { seed: 4 });
    const cfg = tiny.config;
    const model = uploadModel(device, cfg, tiny.weights, { q4: true });
    const lora = uploadAdapter(device, cfg, randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 1 }));
    check("after upload");
    const persistent = sum;
    assert(persistent > 0, "weights counted");
    const rng = new Rng(2);
    const samples4 = Array.from(
      { length: 4 },
      (_, i) => ({
        ids: Array.from({ length: 24 }, () => rng.int(cfg.vocabSize)),
        promptLen: 10,
        advantage: i % 2 ? 1 : -1,
      }),
    );
    const tr = grpoTrainer(model, lora, { lr: { base: 1e-3, warmupSteps: 0, totalSteps: 10, decay: "constant" } });
    await grpoStep(tr, samples4);
    await device.queue.onSubmittedWorkDone();
    check("after a step");
    const afterStep = sum;
    // The step's activations were made and destroyed: the peak is above what stays (weights, adapter
    // state, the uniform pool, the trainer's persistent scratch).
    assert(max > afterStep, `peak ${max} not above the bytes live after the step ${afterStep}`);
    assert(afterStep >= persistent, "bytes went below the upload's");
    census.resetPeak();
    max = sum;
    check("after resetPeak");
    assertEquals(census.peakBufferBytes, afterStep, "a reset peak starts at the live bytes");
    await grpoStep(tr, samples4);
    await device.queue.onSubmittedWorkDone();
    check("after a second step");
    // Steps of one shape reach the same mark; the second step reuses the pooled uniforms, so it is no higher.
    assert(census.peakBufferBytes > afterStep, "the second step's peak exceeds its live bytes");
    destroyAdapter(lora);
    destroyModel(model);
    check("after destroying model and adapter");
    assert(created.length > 0, "buffers seen");
    console.log(
      `census vs tally: ${created.length} buffers; upload ${(persistent / 1024).toFixed(1)} KiB, after a step ${
        (afterStep / 1024).toFixed(1)
      } KiB, step peak ${(max / 1024).toFixed(1)} KiB; after destroying the model ${(sum / 1024).toFixed(1)} KiB`,
    );
  } finally {
    census.uninstall();
    device.destroy();
  }
});

Deno.test("GpuCensus: two on one device, the first uninstalled first: the second keeps counting, the first stops, none counts after both are uninstalled", async () => {
  const { device } = await requestGpu();
  const a = new GpuCensus(device).install();
  const b = new GpuCensus(device).install();
  const x = device.createBuffer({ label: "x", size: 64, usage: GPUBufferUsage.STORAGE });
  assertEquals([a.liveBufferBytes, b.liveBufferBytes], [64, 64]);
  a.uninstall();
  const y = device.createBuffer({ label: "y", size: 128, usage: GPUBufferUsage.STORAGE });
  assertEquals([a.liveBufferBytes, b.liveBufferBytes], [64, 192]);
  b.uninstall();
  // The first census's wrapper is what b found at install, so it is put back, as a pass-through.
  const z = device.createBuffer({ label: "z", size: 256, usage: GPUBufferUsage.STORAGE });
  assertEquals([a.liveBufferBytes, b.liveBufferBytes], [64, 192]);
  x.destroy();
  y.destroy();
  z.destroy();
  assertEquals(b.liveBufferBytes, 0);
  device.destroy();
});
