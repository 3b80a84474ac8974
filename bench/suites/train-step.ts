// Suite train-step: the GRPO training step of a random model of a preset's shape (default Qwen2.5-0.5B, q4 frozen
// projections, LoRA r 16 on all seven targets, B 8 x T 768, half of each row prompt), with stored activations and
// recomputed; the peak of the trainer's own buffer accounting (src/gpu/census.ts: WebGPU has no memory query) for
// each; PyTorch + PEFT's step of the same shape (bench/torch/train.py, bf16 autocast, eager attention) beside them.
import { Rng } from "../../src/core/rng.ts";
import { trimArena } from "../../src/gpu/arena.ts";
import { GpuCensus } from "../../src/gpu/census.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../../src/gpu/model/state.ts";
import { type GrpoSample, grpoStep, grpoTrainer } from "../../src/gpu/trainer/grpo-step.ts";
import { LORA_TARGETS, randomAdapter } from "../../src/model/lora.ts";
import { makeTinyModel } from "../../src/model/tiny.ts";
import { SHAPES } from "../shapes.ts";
import { numArg, pythonReference, round, type Suite, type SuiteContext, timeSteps } from "../suite.ts";

/**
 * Model shapes (random weights, tied embeddings); the names bench/torch/common.py's PRESETS use. demo and
 * qwen2.5-0.5b are bench/shapes.ts's; tiny keeps common.py's 280-id vocabulary.
 */
export const PRESETS = {
  tiny: { ...SHAPES.tiny, vocabSize: 280 },
  demo: SHAPES.demo,
  "qwen2.5-0.5b": SHAPES["qwen2.5-0.5b"],
  "qwen2.5-1.5b": {
    hidden: 1536,
    layers: 28,
    heads: 12,
    kvHeads: 2,
    headDim: 128,
    intermediate: 8960,
    vocabSize: 151936,
  },
} as const;

function presetOf(name: string): (typeof PRESETS)[keyof typeof PRESETS] {
  if (!(name in PRESETS)) throw new Error(`preset=${name}: one of ${Object.keys(PRESETS).join(", ")}`);
  return PRESETS[name as keyof typeof PRESETS];
}

async function run(ctx: SuiteContext) {
  const presetName = ctx.args.get("preset") ?? "qwen2.5-0.5b";
  const preset = presetOf(presetName);
  const B = numArg(ctx.args, "B", 8),
    T = numArg(ctx.args, "T", 768),
    r = numArg(ctx.args, "r", 16),
    iters = numArg(ctx.args, "iters", 3);
  const q4 = (ctx.args.get("q4") ?? "1") === "1";
  const { device } = await ctx.gpu();
  const census = new GpuCensus(device).install();
  const tiny = makeTinyModel("qwen2", { seed: 1, ...preset, tieWordEmbeddings: true });
  const model = uploadModel(device, tiny.config, tiny.weights, { q4 });
  const lora = uploadAdapter(
    device,
    tiny.config,
    randomAdapter(tiny.config, { r, alpha: 2 * r, targets: LORA_TARGETS, seed: 2 }),
  );
  const rng = new Rng(3);
  const samples: GrpoSample[] = Array.from({ length: B }, (_, i) => ({
    ids: Array.from({ length: T }, () => rng.int(tiny.config.vocabSize)),
    promptLen: Math.floor(T / 2),
    advantage: i % 2 ? 1 : -1,
  }));
  const lr = { base: 1e-5, warmupSteps: 0, totalSteps: 100, decay: "constant" } as const;
  const figures: Record<string, number> = {};
  for (const recompute of [false, true]) {
    // Each configuration's own peak: what the other left in the arena goes first, as the recipe trims it.
    await device.queue.onSubmittedWorkDone();
    trimArena(device);
    census.resetPeak();
    const tr = grpoTrainer(model, lora, { recompute, lr });
    const t = await timeSteps(device, iters, () => grpoStep(tr, samples));
    const name = recompute ? "recompute_" : "";
    figures[`${name}tok_s`] = round((B * T) / (t.bestMs / 1000));
    figures[`${name}step_ms`] = round(t.bestMs);
    figures[`${name}median_ms`] = round(t.medianMs);
    figures[`${name}peak_bytes`] = census.peakBufferBytes;
    console.log(
      `GRPO step${recompute ? " (recomputed)" : ""} ${presetName} ${q4 ? "q4" : "f32"} ${B}x${T} r${r}: best ${
        t.bestMs.toFixed(1)
      } ms, median ${t.medianMs.toFixed(1)} of ${iters}; peak ${census.peakBufferBytes} bytes`,
    );
  }
  destroyAdapter(lora);
  destroyModel(model);
  census.uninstall();
  const reference: Record<string, number> = {};
  // bench/torch/train.py times 8 x 768 only.
  if (ctx.reference && B === 8 && T === 768) {
    const res = await pythonReference(ctx, "train.py", [
      "--preset",
      presetName,
      "--iters",
      "5",
      "--warmup",
      "2",
      "--no-sweep",
      "--attn",
      "eager",
    ], "train.json") as {
      main?: { tokensPerSecond: number; medianSeconds: number; peakAllocated: number };
    };
    if (!res.main) throw new Error("bench/torch/train.py measured no step (see its errors above)");
    reference.torch_tok_s = round(res.main.tokensPerSecond);
    reference.torch_step_ms = round(res.main.medianSeconds * 1000);
    reference.torch_peak_bytes = res.main.peakAllocated;
  }
  return {
    figures,
    reference,
    runs: iters,
    notes: `${presetName} ${q4 ? "q4" : "f32"} projections, B ${B} x T ${T}, LoRA r ${r} on 7 targets; ` +
      `best of ${iters} steps after a warm-up; PyTorch + PEFT median of 5`,
  };
}

export const trainStep: Suite = {
  about: "the GRPO train step (stored and recomputed activations, peak buffer bytes) against PyTorch + PEFT",
  usage: "[preset=qwen2.5-0.5b|qwen2.5-1.5b|demo|tiny] [B=8] [T=768] [r=16] [q4=1|0] [iters=3]",
  run,
};
