// Online GRPO: per step, a batch of questions (epoch order, or focused on hard ones), G samples
// each, rewards by execution, group-relative advantages (equal-reward groups dropped and counted),
// the trainer's clipped policy-gradient step(s) with the KL and LR schedules, metrics and sample
// records, a held-out evaluation every N steps, and a checkpoint after every step so a restarted
// run continues exactly (same seed -> same next batch, same adapter). Step N's checkpoint is written
// while step N + 1 samples (its tensors are copied on the GPU before any later update).
import { FocusScheduler, groupAdvantages } from "../../core/advantages.ts";
import { klCoefficient } from "../../core/grpo.ts";
import { summarize } from "../../core/metrics.ts";
import type { GrpoParams } from "../../core/notebook-params.ts";
import { Rng } from "../../core/rng.ts";
import { type GrpoSample, grpoStep, type GrpoStepReport, sampleLogprobs } from "../../gpu/trainer/grpo-step.ts";
import { loadCheckpoint, saveCheckpoint } from "../checkpoint.ts";
import type { GrpoReport } from "../records.ts";
import {
  checkAborted,
  emitMetrics,
  emitSamples,
  mixSeed,
  progressReporter,
  requireSetup,
  type RunContext,
  splitTasks,
} from "./context.ts";
import { rewardSummary, sampleTasks, samplingMessage, stepFigures, toolsFor } from "./common.ts";
import { evaluateTasks } from "./evaluate.ts";
import { sampleRecord, type Scored } from "./scoring.ts";
import { tokenAdvantages, withPrmSteps } from "../prm/prm-grpo.ts";
import { prmFor, prmTextScorer } from "./common.ts";

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
  return typeof s.config === "string" && typeof s.trainerStep === "number" && Array.isArray(s.heldout) &&
    typeof s.equalSum === "number" && typeof s.skipped === "number";
}

/** Mean and spread of the PRM's chain scores (mean over steps) of a step's samples, when a PRM scored them. */
function prmExtra(scored: readonly { prm?: { scores: number[] } }[]): Record<string, number> {
  const means = scored.flatMap((
    s,
  ) => (s.prm && s.prm.scores.length ? [s.prm.scores.reduce((a, b) => a + b, 0) / s.prm.scores.length] : []));
  if (means.length === 0) return {};
  const m = summarize(means);
  return {
    prmMean: m.mean,
    prmStd: m.std,
    prmSteps: scored.reduce((a, s) => a + (s.prm?.scores.length ?? 0), 0) / scored.length,
  };
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
  const tools = toolsFor(ctx, cellId, { prm: p.prm ?? "" });
  const stepMode = p.stepAdvantage ?? "chain";
  // Step-level advantages need the PRM's scores even when the reward has no prm component.
  const stepScorer = stepMode !== "chain" && !tools.scorer.prm
    ? prmTextScorer(ctx, prmFor(ctx, cellId, p.prm ?? ""))
    : null;
  const report = progressReporter(ctx, cellId, "grpo");
  // The write of the last step's checkpoint while it is under way (at most one; a rejected one stays
  // here until awaited).
  let writing: Promise<void> | null = null;
  // A line naming step N + 1 says step N is saved (a reload resumes after it): none while it is written.
  const progress = (fraction: number, message: string) => {
    if (!writing) report(fraction, message);
  };
  const trainer = await runtime.freshTrainer({
    epsLow: p.eps_low,
    epsHigh: p.eps_high,
    beta: p.kl,
    aggregation: p.aggregation,
    maxGradNorm: p.maxGradNorm,
    lr: { base: p.lr, warmupSteps: p.warmupSteps, totalSteps: p.steps, decay: p.lrSchedule },
  });
  // Without focus: plain epochs of seeded shuffles (nothing is ever "mastered", nothing revisited).
  const focusOpts = p.focusHard
    ? { skipAfter: p.skipAfter, revisitFraction: p.revisitFraction }
    : { skipAfter: 2 ** 30, revisitFraction: 0 };
  let focus = new FocusScheduler(tasks.map((t) => t.id), new Rng(mixSeed(seed, "grpo-order")), focusOpts);
  // An imported starting adapter is part of what the checkpoint continues (absent: the key too, so older checkpoints still match).
  // evalSplit changes no training state: left out, so checkpoints made before it existed still match.
  const { evalSplit: _evalSplit, ...trainParams } = p;
  const config = JSON.stringify({
    ...trainParams,
    seed,
    tasks: tasks.length,
    model: runtime.hf.name,
    ...(runtime.imported ? { adapter: runtime.imported.from } : {}),
  });
  const prefix = `checkpoints/${cellId}`;
  let start = 0;
  let state: GrpoState = { config, trainerStep: 0, focus: null, heldout: [], equalSum: 0, skipped: 0 };
  const ck = await loadCheckpoint(ctx.env.store, prefix, ctx.onLog);
  if (ck) {
    if (!isGrpoState(ck.state)) throw new Error(`checkpoint under ${prefix} has no GRPO state`);
    if (ck.state.config !== config) {
      throw new Error(
        `checkpoint under ${prefix} was made with other parameters; use a fresh output folder or remove it`,
      );
    }
    state = ck.state;
    start = ck.step;
    await runtime.restoreState(ck.tensors, state.trainerStep);
    focus = FocusScheduler.fromJSON(state.focus);
    ctx.onLog(`grpo "${cellId}": resumed from step ${start}`);
  }
  const evalSplit = p.evalSplit || heldoutSplit(setup.dataset.splits);
  const heldoutTasks = evalSplit ? splitTasks(ctx, cellId, evalSplit).slice(0, p.evalN) : [];
  try {
    for (let step = start; step < steps; step++) {
      checkAborted(ctx);
      const ids = focus.nextBatch(p.batchQuestions);
      const batch = ids.map((id) =>
        byId.get(id) ?? (() => {
          throw new Error(`unknown question ${id}`);
        })()
      );
      // Scoring overlaps decoding: golds start now, each completion is scored the step its row ends
      // (sample-stream.ts); `score` below is only what is left once sampling returns.
      tools.scorer.prefetch(batch);
      const scoring = tools.scorer.batch();
      const sql0 = tools.scorer.stats();
      const early = new Map<string, { text: string; tokens: number; scored: Promise<Scored> }>();
      const at = (f: number) => (step - start + f) / Math.max(1, steps - start);
      const sampled = await sampleTasks(
        ctx,
        tools,
        batch,
        p.G,
        {
          temperature: p.temperature,
          topP: p.topP,
          topK: 0,
          minP: 0,
          maxNewTokens: p.maxNewTokens,
          seed: mixSeed(seed, "grpo", step),
        },
        (d, t, n, ph) =>
          progress(
            at((0.6 * d) / t),
            samplingMessage(`step ${step + 1}/${steps}: sampling ${p.G} per question,`, d, t, n, ph),
          ),
        tools.scorer.prm ? undefined : (f) => {
          const scored = scoring.score(batch[f.prompt], f.text, f.tokens);
          scored.catch(() => undefined); // awaited below; an abort in between must not leave it unhandled
          early.set(`${f.prompt}:${f.index}`, { text: f.text, tokens: f.tokens, scored });
        },
      );
      progress(at(0.6), `step ${step + 1}/${steps}: scoring ${sampled.samples.length} samples by execution`);
      const t1 = ctx.env.now();
      let rescored = 0;
      // With a prm reward component the PRM scores the whole batch first (no early scores).
      const scored = tools.scorer.prm
        ? await tools.scorer.scoreSamples(batch, sampled.samples)
        : await Promise.all(sampled.samples.map((s) => {
          const e = early.get(`${s.prompt}:${s.index}`);
          if (e && e.text === s.text && e.tokens === s.tokens.length) return e.scored;
          if (e) rescored++;
          return scoring.score(batch[s.prompt], s.text, s.tokens.length);
        }));
      if (stepScorer) {
        const ps = await stepScorer.score(batch, sampled.samples.map((s) => ({ task: s.prompt, text: s.text })));
        scored.forEach((x, i) => (x.prm = ps[i]));
      }
      const scoreMs = ctx.env.now() - t1;
      const sql1 = tools.scorer.stats();
      const groups = batch.map((_, q) =>
        scored.filter((_, i) => sampled.samples[i].prompt === q).map((s) => s.reward.total)
      );
      const adv = groupAdvantages(groups, { mode: p.advantage, dropEqualGroups: p.dropEqualGroups });
      batch.forEach((t, q) =>
        focus.record(t.id, scored.filter((s, i) => sampled.samples[i].prompt === q && s.correct).length, p.G)
      );
      // Samples are ordered by (prompt, index), the order groupAdvantages flattened them in.
      const perToken = tokenAdvantages(stepMode, sampled.samples, scored, adv, {
        spec: setup.reward.spec,
        advantage: p.advantage,
        decode: (ids) => runtime.decode(ids),
      });
      const train: GrpoSample[] = [];
      sampled.samples.forEach((s, i) => {
        if (p.dropEqualGroups && !adv.keep[i]) return;
        if (s.tokens.length === 0) return;
        const prompt = sampled.promptIds[s.prompt];
        const ta = perToken[i];
        train.push({
          ids: [...prompt, ...s.tokens],
          promptLen: prompt.length,
          advantage: adv.advantages[i],
          ...(ta ? { tokenAdvantages: ta } : {}),
        });
      });
      // The trainer's first update in this process compiles its GPU kernels (a while on a software GPU).
      const first = step === start ? "; the first update compiles the trainer's GPU kernels" : "";
      progress(
        at(0.65),
        `step ${step + 1}/${steps}: training on ${train.length} samples (${
          batch.length - Math.round(adv.equalFraction * batch.length)
        } of ${batch.length} groups with a reward difference)${first}`,
      );
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
        for (let u = 0; u < p.updatesPerBatch; u++) {
          reports.push(await grpoStep(trainer, train, { microBatch: ctx.opts.trainMicroBatch }));
        }
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
        v: 1,
        step: step + 1,
        phase: "grpo",
        time: ctx.env.now(),
        ...stepFigures(sampled, scored, {
          scoreMs,
          trainMs,
          trainTokens,
          execAccuracy: correct / scored.length,
          equalGroupFraction: adv.equalFraction,
        }),
        // Peak buffer bytes of this step's trainer work (the high-water mark, reset below); live bytes in extra.
        ...(mem ? { gpuMemoryBytes: mem.peakBytes } : {}),
        ...(last
          ? {
            kl: last.metrics.klRef,
            approxKl: last.metrics.approxKl,
            entropy: last.entropy,
            loss: last.loss,
            lr: last.lr,
            gradNorm: last.gradNorm,
            clipFrac: { low: last.metrics.clipLowFrac, high: last.metrics.clipHighFrac },
          }
          : {}),
        extra: {
          ...(mem ? { gpuLiveBytes: mem.liveBytes } : {}),
          questions: batch.length,
          trainedSamples: train.length,
          skippedUpdates: skipped,
          klCoef: trainer.opts.beta,
          scoredWhileSampling: early.size - rescored,
          sqlRuns: sql1.predictionRuns - sql0.predictionRuns,
          sqlRepeats: sql1.predictionHits - sql0.predictionHits,
          goldRuns: sql1.goldRuns - sql0.goldRuns,
          rewardMin: summarize(scored.map((s) => s.reward.total)).min,
          rewardMax: summarize(scored.map((s) => s.reward.total)).max,
          ...prmExtra(scored),
        },
      });
      const kept = sampled.samples.slice(0, ctx.opts.samplesPerStep);
      await emitSamples(
        ctx,
        await Promise.all(kept.map((s) => {
          const i = sampled.samples.indexOf(s);
          const a = p.dropEqualGroups && !adv.keep[i] ? null : adv.advantages[i];
          const r = sampleRecord(
            { phase: "grpo", step: step + 1 },
            batch[s.prompt],
            sampled.prompts[s.prompt],
            s,
            scored[i],
            a,
            sampled.answerPrefixes[s.prompt],
          );
          return withPrmSteps(
            r,
            scored[i].prm,
            batch[s.prompt],
            tools.scorer,
            setup.dataset.sql,
            setup.reward.comparison,
          );
        })),
      );
      if (p.evalEvery > 0 && (step + 1) % p.evalEvery === 0 && heldoutTasks.length > 0) {
        const check = (f: number, m: string) =>
          progress(at(0.9 + 0.1 * f), `step ${step + 1}/${steps}: held-out check on ${evalSplit}: ${m}`);
        const r = await evaluateTasks(ctx, cellId, heldoutTasks, {
          temperature: 0,
          topP: 1,
          k: 1,
          maxNewTokens: p.maxNewTokens,
          seed,
        }, { phaseStep: { phase: "eval", step: step + 1 }, progress: check });
        state.heldout.push({ step: step + 1, accuracy: r.figures.greedy });
      }
      state.trainerStep = trainer.step;
      state.focus = focus.toJSON();
      // This step's checkpoint is written while the next step samples. stateTensors queues the copies
      // of the adapter and moments now, ahead of the next update; what is kept beside them is copied
      // now too. The previous write is done first (one at a time, and its error is this step's).
      await writing;
      const ck = {
        step: step + 1,
        cursor: step + 1,
        rng: { focus: focus.toJSON().rng },
        state: { ...structuredClone(state) },
      };
      const tensors = runtime.stateTensors();
      const done = `step ${step + 1}/${steps}: reward ${rewardSummary(scored).total?.mean.toFixed(3)}, acc ${
        (correct / scored.length).toFixed(3)
      }`;
      const fraction = (step + 1 - start) / Math.max(1, steps - start);
      const write: Promise<void> = (async () => {
        await saveCheckpoint(ctx.env.store, prefix, { ...ck, tensors: await tensors });
        writing = null;
        report(fraction, done);
      })();
      writing = write;
      write.catch(() => undefined); // awaited at the next save, after the loop, or when the cell stops
    }
  } catch (e) {
    // Stopped or failed: the last finished step's checkpoint is still written before the cell ends.
    await writing?.catch((w) => {
      if (w !== e) ctx.onLog(`grpo "${cellId}": the checkpoint of the last step was not written: ${String(w)}`);
    });
    throw e;
  }
  await writing;
  return {
    kind: "grpo",
    cellId,
    steps: Math.max(start, steps),
    skippedSteps: state.skipped,
    resumedFrom: start,
    equalGroupFraction: steps > 0 ? state.equalSum / Math.max(1, Math.max(start, steps)) : 0,
    heldout: state.heldout,
  };
}
