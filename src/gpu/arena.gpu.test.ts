// The host side must not change a single bit of a training step: buffers reused from the arena
// (poisoned with NaN, so a read of an element the step did not write shows) and merged compute
// passes, against unpoisoned buffers and a pass per dispatch (the profiler's mode, knob passes=split).
import { assert, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../model/lora.ts";
import { makeTinyModel } from "../model/tiny.ts";
import { demoConfig, initWeights } from "../runtime/pretrain/model.ts";
import { createPretrainer, destroyPretrainer, pretrainStep, readWeights } from "../runtime/pretrain/step.ts";
import { arenaBuffer, arenaStats, releaseToArena, setArenaPoison, trimArena } from "./arena.ts";
import { bindGroupStats } from "./recorder.ts";
import { readF32, releaseTransients, requestGpu } from "./device.ts";
import { destroyAdapter, destroyModel, readAdapter, uploadAdapter, uploadModel } from "./model/state.ts";
import { DEFAULT_SWITCHES, type PerfSwitches, setPerfSwitches } from "./switches.ts";
import { type GrpoSample, grpoStep, grpoTrainer } from "./trainer/grpo-step.ts";

const gpu = await requestGpu();
const { device } = gpu;

/** A pass per dispatch: the arithmetic stays that of the defaults. */
const SPLIT_PASSES: Partial<PerfSwitches> = { passes: "split" };

Deno.test("arena: a buffer comes back by label and size; another size of the label frees the old one; trim frees the rest", async () => {
  trimArena(device);
  const s0 = arenaStats(device);
  const a = arenaBuffer(device, "arena-test-a", 64);
  const b = arenaBuffer(device, "arena-test-b", new Float32Array([1, 2, 3]));
  releaseToArena(device, [a, b]);
  assert(arenaBuffer(device, "arena-test-a", 64) === a, "same label and size: the same buffer");
  const b2 = arenaBuffer(device, "arena-test-b", new Float32Array([4, 5, 6]));
  assert(b2 === b, "data given: reused and written");
  assertEquals(Array.from(await readF32(device, b2, 3)), [4, 5, 6]);
  releaseToArena(device, [a, b2]);
  const a2 = arenaBuffer(device, "arena-test-a", 128);
  assert(a2 !== a, "another size: a new buffer");
  const s1 = arenaStats(device);
  assertEquals(s1.made - s0.made, 3);
  assertEquals(s1.reused - s0.reused, 2);
  assertEquals(s1.free, s0.free + 1, "the 64-byte buffer was destroyed, the b buffer is still free");
  releaseToArena(device, [a2]);
  assert(trimArena(device) >= 128 + 12, "trim frees the free buffers' bytes");
  assertEquals(arenaStats(device).free, 0);
});

const tiny = makeTinyModel("qwen2", { seed: 11 });
const cfg = tiny.config;

function samples(seed: number): GrpoSample[] {
  const rng = new Rng(seed);
  return [[9, 3], [6, 2], [12, 7], [8, 4], [11, 5]].map(([len, promptLen]) => ({
    ids: Array.from({ length: len }, () => rng.int(cfg.vocabSize)),
    promptLen,
    advantage: 2 * rng.next() - 1,
  }));
}

/** Three GRPO steps (micro-batches of 2, stored or recomputed activations) under `switches`; the adapter after each and the reports. */
async function grpoRun(
  switches: Partial<PerfSwitches>,
  recompute: boolean,
  poison: boolean,
): Promise<{ params: Float32Array[]; losses: number[] }> {
  const prev = setPerfSwitches(switches);
  setArenaPoison(poison);
  const model = uploadModel(device, cfg, tiny.weights);
  const lora = uploadAdapter(
    device,
    cfg,
    randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 12, bScale: 0.2 }),
  );
  const tr = grpoTrainer(model, lora, {
    recompute,
    lr: { base: 1e-2, warmupSteps: 0, totalSteps: 10, decay: "constant" },
  });
  const params: Float32Array[] = [];
  const losses: number[] = [];
  try {
    for (let step = 0; step < 3; step++) {
      const rep = await grpoStep(tr, samples(20 + step), { microBatch: 2 });
      losses.push(rep.loss, rep.gradNorm);
      const a = await readAdapter(device, lora);
      params.push(Float32Array.from([...a.tensors.values()].flatMap((t) => Array.from(t.data))));
    }
  } finally {
    destroyAdapter(lora);
    destroyModel(model);
    setArenaPoison(false);
    trimArena(device);
    setPerfSwitches(prev);
  }
  return { params, losses };
}

for (const recompute of [false, true]) {
  Deno.test(`grpoStep${recompute ? " (recompute)" : ""}: arena buffers poisoned with NaN and merged passes give bitwise the steps of fresh buffers and a pass per dispatch`, async () => {
    const before = await grpoRun(SPLIT_PASSES, recompute, false);
    const b0 = bindGroupStats(device);
    const after = await grpoRun({ ...DEFAULT_SWITCHES }, recompute, true);
    const b1 = bindGroupStats(device);
    assert(b1.hits - b0.hits > 0, "no bind group was reused");
    for (let s = 0; s < 3; s++) {
      assert(after.params[s].every(Number.isFinite), `step ${s}: non-finite parameters (a poisoned element was read)`);
      assertEquals(Array.from(after.params[s]), Array.from(before.params[s]), `step ${s}: parameters differ`);
    }
    assertEquals(after.losses, before.losses, "losses and gradient norms differ");
    console.log(
      `grpo${recompute ? " recompute" : ""}: ${
        after.params[2].length
      } parameters bitwise equal over 3 steps; bind groups reused ${b1.hits - b0.hits}, made ${b1.made - b0.made}`,
    );
  });
}

Deno.test("pretrainStep: arena buffers poisoned with NaN and merged passes give bitwise the weights of fresh buffers and a pass per dispatch", async () => {
  const pcfg = demoConfig({
    arch: "qwen2",
    vocabSize: 200,
    hidden: 32,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    intermediate: 48,
    seqLen: 40,
    tieWordEmbeddings: true,
    ropeTheta: 10000,
  }, [0]);
  const rng = new Rng(31);
  const batches = [0, 1, 2].map(() =>
    Array.from({ length: 4 }, () => Array.from({ length: 10 + rng.int(30) }, () => rng.int(pcfg.vocabSize)))
  );
  const run = async (switches: Partial<PerfSwitches>, poison: boolean) => {
    const prev = setPerfSwitches(switches);
    setArenaPoison(poison);
    const tr = createPretrainer(device, pcfg, initWeights(pcfg, 3), { microBatch: 2, seqLen: 40 });
    const out: number[][] = [];
    try {
      for (const rows of batches) {
        const rep = await pretrainStep(tr, rows);
        const w = await readWeights(tr);
        out.push([rep.loss, rep.gradNorm, ...[...w.values()].flatMap((t) => Array.from(t.data))]);
      }
    } finally {
      destroyPretrainer(tr);
      setArenaPoison(false);
      trimArena(device);
      releaseTransients(device);
      setPerfSwitches(prev);
    }
    return out;
  };
  const before = await run(SPLIT_PASSES, false);
  const after = await run({ ...DEFAULT_SWITCHES }, true);
  for (let s = 0; s < batches.length; s++) {
    assert(after[s].every(Number.isFinite), `step ${s}: non-finite weights or loss (a poisoned element was read)`);
    assertEquals(after[s], before[s], `step ${s}: weights differ`);
  }
});
