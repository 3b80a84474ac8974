// Suite pretrain: one pretraining step of the demo model (full fine-tuning, src/runtime/pretrain/step.ts; random
// init, vocabulary 8,192) at B 16 x T 1024 in micro-batches of 16, tokens/s over the B x (T - 1) predicted tokens;
// PyTorch's full fine-tuning of the same shape (bench/torch/pretrain.py, bf16 autocast, sdpa and eager) beside it.
import { Rng } from "../../src/core/rng.ts";
import { DEFAULT_DEMO_ARCH, demoConfig, initWeights } from "../../src/runtime/pretrain/model.ts";
import { createPretrainer, destroyPretrainer, pretrainStep } from "../../src/runtime/pretrain/step.ts";
import { numArg, pythonReference, round, type Suite, type SuiteContext, timeSteps } from "../suite.ts";

async function run(ctx: SuiteContext) {
  const B = numArg(ctx.args, "B", 16), T = numArg(ctx.args, "T", 1024), micro = numArg(ctx.args, "micro", 16);
  const iters = numArg(ctx.args, "iters", 5);
  const { device } = await ctx.gpu();
  const cfg = demoConfig({ ...DEFAULT_DEMO_ARCH, vocabSize: 8192, seqLen: T }, [1, 2]);
  const tr = createPretrainer(device, cfg, initWeights(cfg, 1), { microBatch: micro, seqLen: T });
  const rng = new Rng(5);
  const rows = Array.from({ length: B }, () => Array.from({ length: T }, () => rng.int(cfg.vocabSize)));
  const t = await timeSteps(device, iters, () => pretrainStep(tr, rows));
  destroyPretrainer(tr);
  const tokens = B * (T - 1);
  console.log(
    `pretraining step demo ${B}x${T} micro ${micro}: best ${t.bestMs.toFixed(1)} ms, median ${
      t.medianMs.toFixed(1)
    } of ${iters}, ${(tokens / (t.bestMs / 1000)).toFixed(0)} tokens/s`,
  );
  const reference: Record<string, number> = {};
  if (ctx.reference) {
    const res = await pythonReference(ctx, "pretrain.py", ["--B", String(B), "--T", String(T)], "pretrain.json") as {
      runs: Record<string, { tokensPerSecond: number }>;
    };
    if (res.runs.sdpa) reference.torch_tok_s = round(res.runs.sdpa.tokensPerSecond);
    if (res.runs.eager) reference.torch_eager_tok_s = round(res.runs.eager.tokensPerSecond);
  }
  return {
    figures: { tok_s: round(tokens / (t.bestMs / 1000)), step_ms: round(t.bestMs), median_ms: round(t.medianMs) },
    reference,
    runs: iters,
    notes: `demo model ${B} x ${T}, micro-batch ${micro}; best of ${iters} steps after a warm-up; ` +
      "PyTorch median of 10 (sdpa; eager beside it)",
  };
}

export const pretrain: Suite = {
  about: "the demo model's pretraining step against PyTorch's full fine-tuning",
  usage: "[B=16] [T=1024] [micro=16] [iters=5]",
  run,
};
