// Online GRPO: per step, a batch of questions (epoch order, or focused on hard ones), G samples
// each, rewards by execution, group-relative advantages (equal-reward groups dropped and counted),
// the trainer's clipped policy-gradient step(s) with the KL and LR schedules, metrics and sample
// records, a held-out evaluation every N steps, and a checkpoint after every step so a restarted
// run continues exactly (same seed -> same next batch, same adapter).
import { FocusScheduler, groupAdvantages } from "../../core/advantages.ts";
import { klCoefficient } from "../../core/grpo.ts";
import { summarize } from "../../core/metrics.ts";
import type { GrpoParams } from "../../core/notebook-params.ts";
import { Rng } from "../../core/rng.ts";
import { type GrpoSample, type GrpoStepReport, grpoStep, sampleLogprobs } from "../../gpu/trainer/grpo-step.ts";
import { loadCheckpoint, saveCheckpoint } from "../checkpoint.ts";
import type { GrpoReport } from "../records.ts";
import { checkAborted, emitMetrics, emitSamples, mixSeed, progressReporter, requireSetup, type RunContext, splitTasks } from "./context.ts";
import { lengthSummary, perSecond, rewardSummary, sampleTasks, samplingMessage, toolsFor } from "./common.ts";
import { evaluateTasks } from "./evaluate.ts";
import { sampleRecord } from "./scoring.ts";

/** What a GRPO checkpoint keeps beside the tensors. */
interface GrpoState {
  config: string;
  trainerStep: number;
  focus: unknown;
  heldout: { step: number; accuracy: number }[];
  equalSum: number;
  skipped: number;
}

function isGrpoState(x: unknown): x is GrpoState {
  if (typeof x !== "object" || x === null) return false;
  const s: Record<string, unknown> = { ...x };
  return typeof s.config === "string" && typeof s.trainerStep === "number" && Array.isArray(s.heldout) && typeof s.equalSum === "number" && typeof s.skipped === "number";
}

/** The split GRPO evaluates on every `evalEvery` steps: "dev" when there is one, else "test". */
export function heldoutSplit(splits: Record<string, unknown>): string | null {
  return "dev" in splits ? "dev" : "test" in splits ? "test" : null;
}

/** The GRPO cell. Resumes from `checkpoints/<cell>/` when a checkpoint of the same parameters exists. */
export async function runGrpo(ctx: RunContext, cellId: string, p: GrpoParams): Promise<GrpoReport> {
  const setup = requireSetup(ctx, cellId);
  const runtime = setup.model.runtime;
  const tasks = splitTasks(ctx, cellId, setup.dataset.params.split);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const seed = ctx.opts.seed ?? p.seed;
  const steps = Math.min(p.steps, ctx.opts.maxSteps ?? Infinity);
  const tools = toolsFor(ctx, cellId);
  const progress = progressReporter(ctx, cellId, "grpo");
  const trainer = await runtime.freshTrainer({
    epsLow: p.eps_low, epsHigh: p.eps_high, beta: p.kl, aggregation: p.aggregation, maxGradNorm: p.maxGradNorm,
    lr: { base: p.lr, warmupSteps: p.warmupSteps, totalSteps: p.steps, decay: p.lrSchedule },
  });
  // Without focus: plain epochs of seeded shuffles (nothing is ever "mastered", nothing revisited).
  const focusOpts = p.focusHard ? { skipAfter: p.skipAfter, revisitFraction: p.revisitFraction } : { skipAfter: 2 ** 30, revisitFraction: 0 };
  let focus = new FocusScheduler(tasks.map((t) => t.id), new Rng(mixSeed(seed, "grpo-order")), focusOpts);
  // An imported starting adapter is part of what the checkpoint continues (absent: the key too, so older checkpoints still match).
  // evalSplit changes no training state: left out, so checkpoints made before it existed still match.
  const { evalSplit: _evalSplit, ...trainParams } = p;
  const config = JSON.stringify({ ...trainParams, seed, tasks: tasks.length, model: runtime.hf.name, ...(runtime.imported ? { adapter: runtime.imported.from } : {}) });
  const prefix = `checkpoints/${cellId}`;
  let start = 0;
  let state: GrpoState = { config, trainerStep: 0, focus: null, heldout: [], equalSum: 0, skipped: 0 };
  const ck = await loadCheckpoint(ctx.env.store, prefix);
  if (ck) {
    if (!isGrpoState(ck.state)) throw new Error(`checkpoint under ${prefix} has no GRPO state`);
    if (ck.state.config !== config) throw new Error(`checkpoint under ${prefix} was made with other parameters; use a fresh output folder or remove it`);
    state = ck.state;
    start = ck.step;
    await runtime.restoreState(ck.tensors, state.trainerStep);
    focus = FocusScheduler.fromJSON(state.focus);
    ctx.onLog(`grpo "${cellId}": resumed from step ${start}`);
  }
  const evalSplit = p.evalSplit || heldoutSplit(setup.dataset.splits);
  const heldoutTasks = evalSplit ? splitTasks(ctx, cellId, evalSplit).slice(0, p.evalN) : [];
  for (let step = start; step < steps; step++) {
    checkAborted(ctx);
    const ids = focus.nextBatch(p.batchQuestions);
    const batch = ids.map((id) => byId.get(id) ?? (() => { throw new Error(`unknown question ${id}`); })());
    const at = (f: number) => (step - start + f) / Math.max(1, steps - start);
    const sampled = await sampleTasks(ctx, tools, batch, p.G, {
      temperature: p.temperature, topP: p.topP, topK: 0, minP: 0, maxNewTokens: p.maxNewTokens, seed: mixSeed(seed, "grpo", step),
    }, (d, t, n) => progress(at((0.6 * d) / t), samplingMessage(`step ${step + 1}/${steps}: sampling ${p.G} per question,`, d, t, n)));
    progress(at(0.6), `step ${step + 1}/${steps}: scoring ${sampled.samples.length} samples by execution`);
    const t1 = ctx.env.now();
    const scored = await tools.scorer.scoreSamples(batch, sampled.samples);
    const scoreMs = ctx.env.now() - t1;
    const groups = batch.map((_, q) => scored.filter((_, i) => sampled.samples[i].prompt === q).map((s) => s.reward.total));
    const adv = groupAdvantages(groups, { mode: p.advantage, dropEqualGroups: p.dropEqualGroups });
    batch.forEach((t, q) => focus.record(t.id, scored.filter((s, i) => sampled.samples[i].prompt === q && s.correct).length, p.G));
    // Samples are ordered by (prompt, index), the order groupAdvantages flattened them in.
    const train: GrpoSample[] = [];
    sampled.samples.forEach((s, i) => {
      if (p.dropEqualGroups && !adv.keep[i]) return;
      if (s.tokens.length === 0) return;
      const prompt = sampled.promptIds[s.prompt];
      train.push({ ids: [...prompt, ...s.tokens], promptLen: prompt.length, advantage: adv.advantages[i] });
    });
    // The trainer's first update in this process compiles its GPU kernels (a while on a software GPU).
    const first = step === start ? "; the first update compiles the trainer's GPU kernels" : "";
    progress(at(0.65), `step ${step + 1}/${steps}: training on ${train.length} samples (${batch.length - Math.round(adv.equalFraction * batch.length)} of ${batch.length} groups with a reward difference)${first}`);
    const t2 = ctx.env.now();
    trainer.opts.beta = klCoefficient(step, { beta: p.kl, schedule: p.klSchedule, totalSteps: p.steps });
    const reports: GrpoStepReport[] = [];
    if (train.length > 0) {
      if (trainer.opts.beta > 0) {
        const ref = await runtime.referenceLogprobs(train.map((s) => s.ids));
        train.forEach((s, i) => (s.logpRef = ref[i]));
      }
      if (p.updatesPerBatch > 1) {
        const old = await sampleLogprobs(trainer, train.map((s) => s.ids));
        train.forEach((s, i) => (s.logpOld = old[i]));
      }
      for (let u = 0; u < p.updatesPerBatch; u++) reports.push(await grpoStep(trainer, train, { microBatch: ctx.opts.trainMicroBatch }));
      await runtime.syncPolicy();
    }
    const trainMs = ctx.env.now() - t2;
    const skipped = reports.filter((r) => r.skipped).length;
    state.skipped += skipped;
    state.equalSum += adv.equalFraction;
    const last = reports.at(-1);
    const trainTokens = train.reduce((a, s) => a + s.ids.length, 0) * reports.length;
    const correct = scored.filter((s) => s.correct).length;
    const mem = runtime.gpuMemory();
    runtime.resetGpuPeak();
    await emitMetrics(ctx, {
      v: 1, step: step + 1, phase: "grpo", time: ctx.env.now(),
      ms: { sample: sampled.ms, score: scoreMs, train: trainMs },
      tokensPerSec: { sample: perSecond(sampled.tokens, sampled.ms), score: perSecond(sampled.tokens, scoreMs), train: perSecond(trainTokens, trainMs) },
      rewards: rewardSummary(scored), execAccuracy: correct / scored.length, equalGroupFraction: adv.equalFraction,
      completionLength: lengthSummary(sampled.samples),
      // Peak buffer bytes of this step's trainer work (the high-water mark, reset below); live bytes in extra.
      ...(mem ? { gpuMemoryBytes: mem.peakBytes } : {}),
      ...(last ? {
        kl: last.metrics.klRef, approxKl: last.metrics.approxKl, entropy: last.entropy, loss: last.loss, lr: last.lr, gradNorm: last.gradNorm,
        clipFrac: { low: last.metrics.clipLowFrac, high: last.metrics.clipHighFrac },
      } : {}),
      extra: {
        ...(mem ? { gpuLiveBytes: mem.liveBytes } : {}),
        questions: batch.length, trainedSamples: train.length, skippedUpdates: skipped, klCoef: trainer.opts.beta,
        rewardMin: summarize(scored.map((s) => s.reward.total)).min, rewardMax: summarize(scored.map((s) => s.reward.total)).max,
      },
    });
    const kept = sampled.samples.slice(0, ctx.opts.samplesPerStep);
    await emitSamples(ctx, kept.map((s) => {
      const i = sampled.samples.indexOf(s);
      const a = p.dropEqualGroups && !adv.keep[i] ? null : adv.advantages[i];
      return sampleRecord({ phase: "grpo", step: step + 1 }, batch[s.prompt], sampled.prompts[s.prompt], s, scored[i], a);
    }));
    if (p.evalEvery > 0 && (step + 1) % p.evalEvery === 0 && heldoutTasks.length > 0) {
      const check = (f: number, m: string) => progress(at(0.9 + 0.1 * f), `step ${step + 1}/${steps}: held-out check on ${evalSplit}: ${m}`);
      const r = await evaluateTasks(ctx, cellId, heldoutTasks, { temperature: 0, topP: 1, k: 1, maxNewTokens: p.maxNewTokens, seed }, { phaseStep: { phase: "eval", step: step + 1 }, progress: check });
      state.heldout.push({ step: step + 1, accuracy: r.figures.greedy });
    }
    state.trainerStep = trainer.step;
    state.focus = focus.toJSON();
    await saveCheckpoint(ctx.env.store, prefix, {
      step: step + 1, cursor: step + 1, rng: { focus: focus.toJSON().rng }, tensors: await runtime.stateTensors(), state: { ...state },
    });
    progress((step + 1 - start) / Math.max(1, steps - start), `step ${step + 1}/${steps}: reward ${rewardSummary(scored).total?.mean.toFixed(3)}, acc ${(correct / scored.length).toFixed(3)}`);
  }
  return {
    kind: "grpo", cellId, steps: Math.max(start, steps), skippedSteps: state.skipped, resumedFrom: start,
    equalGroupFraction: steps > 0 ? state.equalSum / Math.max(1, Math.max(start, steps)) : 0, heldout: state.heldout,
  };
}
