// Offline warm-up, TAO-style: rounds of (sample N answers per training question with the current
// model, score them, then optimise offline on that fixed set). Methods, all through the GRPO
// trainer's clipped policy-gradient step:
//  - rft: rejection-sampling fine-tuning — correct or positive-advantage samples as SFT targets
//    (advantage 1, ratio 1: the gradient of their mean token log-likelihood);
//  - awpg: advantage-weighted offline policy gradient — every sample with its group advantage,
//    the importance ratio taken against the sampling policy's log-probabilities (clipped);
//  - dpo: per question the best- and worst-rewarded answers as a pair; the DPO gradient
//    -beta sigma(-z) (grad log pi(w) - grad log pi(l)) is a sequence-level policy gradient with
//    advantages +-2 beta sigma(-z) under "seq-mean-token-sum-norm" (C = sequences), ratio 1;
//  - sft: supervised fine-tuning on the dataset's gold answers, nothing sampled: per training
//    question its record's `completion`, else the gold SQL in the template's answer format
//    (sft-targets.ts), trained as rft trains its targets (advantage 1, ratio 1); a round is
//    `epochs` passes over that fixed set.
import { groupAdvantages } from "../../core/advantages.ts";
import type { WarmupParams } from "../../core/notebook-params.ts";
import { Rng } from "../../core/rng.ts";
import {
  type GrpoSample,
  grpoStep,
  type GrpoStepReport,
  type GrpoTrainer,
  sampleLogprobs,
} from "../../gpu/trainer/grpo-step.ts";
import { loadCheckpoint, saveCheckpoint } from "../checkpoint.ts";
import { promptOpensThink, type WarmupReport, type WarmupRoundReport } from "../records.ts";
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
import { summarize } from "../../core/metrics.ts";
import { perSecond, sampleTasks, samplingMessage, stepFigures, toolsFor } from "./common.ts";
import type { ModelRuntime } from "./model-runtime.ts";
import { sampleRecord } from "./scoring.ts";
import { encodeWarmupDataset, warmupDatasetPath, warmupDatasetRecords } from "./warmup-dataset.ts";
import {
  afterAnswerPrefix,
  cocteTargets,
  sftSequence,
  sftTarget,
  type SftTargetSource,
  targetLogprob,
} from "./sft-targets.ts";

/** Sequences per optimiser step in the offline phase. */
export const WARMUP_MINIBATCH = 16;

/** One offline training item: a sequence with its advantage and (awpg) sampling log-probs. */
interface Item {
  sample: GrpoSample;
  /** Index of the pair (dpo) and whether this is its chosen side. */
  pair?: { id: number; chosen: boolean };
}

function isRoundReport(x: unknown): x is WarmupRoundReport {
  return typeof x === "object" && x !== null && "round" in x && typeof x.round === "number";
}

function meanLen(xs: readonly (readonly number[])[]): number {
  return xs.length ? xs.reduce((a, x) => a + x.length, 0) / xs.length : 0;
}

/**
 * The samples an rft round trains on, as indices into `samples`: those that are correct, or (keep
 * "better") of positive group advantage, and not empty. With `perQuestion` > 0, at most that many per
 * question, each a different answer (identical token sequences count once; the first drawn is kept):
 * eight identical correct draws of an easy question would otherwise weigh eight times one correct
 * draw of a hard one, and the definition-free prompts then learn the easy questions' condition for
 * every question of their database (docs/recipe.md, "Warm-up with the definitions").
 */
export function rftSelect(
  samples: readonly { prompt: number; tokens: readonly number[] }[],
  correct: readonly boolean[],
  advantages: ArrayLike<number>,
  keep: "better" | "correct",
  perQuestion: number,
): number[] {
  const seen = new Map<number, Set<string>>();
  const out: number[] = [];
  samples.forEach((s, i) => {
    if (s.tokens.length === 0 || !(correct[i] || (keep === "better" && advantages[i] > 0))) return;
    if (perQuestion > 0) {
      const mine = seen.get(s.prompt) ?? new Set<string>();
      seen.set(s.prompt, mine);
      const key = s.tokens.join(",");
      if (mine.has(key) || mine.size >= perQuestion) return;
      mine.add(key);
    }
    out.push(i);
  });
  return out;
}

function sigmoid(x: number): number {
  return x >= 0 ? 1 / (1 + Math.exp(-x)) : Math.exp(x) / (1 + Math.exp(x));
}

/** The offline phase's trainer: clipped policy gradient without KL, a constant learning rate, gradients clipped at 1. */
function warmupTrainer(
  runtime: ModelRuntime,
  lr: number,
  aggregation: "token-mean" | "seq-mean-token-sum-norm",
): Promise<GrpoTrainer> {
  return runtime.freshTrainer({
    epsLow: 0.2,
    epsHigh: 0.28,
    beta: 0,
    aggregation,
    lr: { base: lr, warmupSteps: 0, totalSteps: 1, decay: "constant" },
    maxGradNorm: 1,
  });
}

/** The rounds a checkpoint under `prefix` already finished (the trainer's state restored), or none; a checkpoint of other parameters is refused. */
async function resumeRounds(
  ctx: RunContext,
  runtime: ModelRuntime,
  cellId: string,
  prefix: string,
  config: string,
): Promise<{ rounds: WarmupRoundReport[]; start: number }> {
  const ck = await loadCheckpoint(ctx.env.store, prefix, ctx.onLog);
  if (!ck) return { rounds: [], start: 0 };
  const st = ck.state;
  if (st.config !== config || !Array.isArray(st.rounds) || typeof st.trainerStep !== "number") {
    throw new Error(
      `checkpoint under ${prefix} was made with other parameters; use a fresh output folder or remove it`,
    );
  }
  await runtime.restoreState(ck.tensors, st.trainerStep);
  ctx.onLog(`warmup "${cellId}": ${ck.step} round(s) already done`);
  return { rounds: st.rounds.filter(isRoundReport), start: ck.step };
}

/** Checkpoints the finished round `round` (0-based) with the rounds' reports. */
async function saveRound(
  ctx: RunContext,
  runtime: ModelRuntime,
  prefix: string,
  round: number,
  config: string,
  rounds: WarmupRoundReport[],
  trainer: GrpoTrainer,
): Promise<void> {
  await saveCheckpoint(ctx.env.store, prefix, {
    step: round + 1,
    cursor: 0,
    rng: {},
    tensors: await runtime.stateTensors(),
    state: { config, rounds, trainerStep: trainer.step },
  });
}

/** Mean of f over the round's optimiser steps (undefined without any). */
function meanOf(reports: readonly GrpoStepReport[], f: (r: GrpoStepReport) => number): number | undefined {
  return reports.length ? reports.reduce((a, r) => a + f(r), 0) / reports.length : undefined;
}

/**
 * The warm-up cell. Each finished round is checkpointed under `checkpoints/<cell>/`; finished rounds
 * are not redone. Each round writes its scored samples whole to `warmup/<cell>/round-<k>.jsonl`
 * (exportSamples; warmup-dataset.ts), before its checkpoint, so a resumed run never duplicates lines.
 */
export async function runWarmup(ctx: RunContext, cellId: string, p: WarmupParams): Promise<WarmupReport> {
  if (p.method === "sft") return await runSftWarmup(ctx, cellId, p);
  const setup = requireSetup(ctx, cellId);
  const runtime = setup.model.runtime;
  const tasks = splitTasks(ctx, cellId, setup.dataset.params.split);
  const seed = ctx.opts.seed ?? p.seed;
  const tools = toolsFor(ctx, cellId);
  if (p.sampleWithEvidence && p.method !== "rft") {
    throw new Error(
      `sampleWithEvidence needs method "rft" (${p.method} weighs samples by their log-probabilities under the prompt they were drawn with)`,
    );
  }
  // With the definitions while sampling; the training sequences get the cell's own prompts.
  const sampler = p.sampleWithEvidence ? toolsFor(ctx, cellId, { evidence: true }) : tools;
  const trainIds = p.sampleWithEvidence ? (await tools.prompter.prompts(tasks)).map((x) => x.ids) : null;
  const progress = progressReporter(ctx, cellId, "warmup");
  progress(0, `building ${tasks.length} prompts`);
  const trainer = await warmupTrainer(runtime, p.lr, p.method === "dpo" ? "seq-mean-token-sum-norm" : "token-mean");
  const prefix = `checkpoints/${cellId}`;
  // exportSamples changes no training state: checkpoints made without it (or with another value) stay valid.
  // sampleWithEvidence is left out when off, so checkpoints made before it existed still match.
  // rftKeep likewise when "better", and rftPerQuestion when 0: the behaviour before each existed.
  const { exportSamples, sampleWithEvidence, rftKeep, rftPerQuestion, ...trainParams } = p;
  const config = JSON.stringify({
    ...trainParams,
    ...(sampleWithEvidence ? { sampleWithEvidence } : {}),
    ...(rftKeep !== "better" ? { rftKeep } : {}),
    ...(rftPerQuestion > 0 ? { rftPerQuestion } : {}),
    seed,
    tasks: tasks.length,
    model: runtime.hf.name,
  });
  const { rounds, start } = await resumeRounds(ctx, runtime, cellId, prefix, config);
  for (let round = start; round < p.rounds; round++) {
    checkAborted(ctx);
    const sampled = await sampleTasks(
      ctx,
      sampler,
      tasks,
      p.samplesPerQuestion,
      {
        temperature: p.temperature,
        topP: 1,
        topK: 0,
        minP: 0,
        maxNewTokens: p.maxNewTokens,
        seed: mixSeed(seed, "warmup", round),
      },
      (d, t, n, ph) =>
        progress(
          (round - start + (0.5 * d) / t) / (p.rounds - start),
          samplingMessage(
            `round ${round + 1}: sampling ${p.samplesPerQuestion} per question${
              p.sampleWithEvidence ? " with the definitions" : ""
            },`,
            d,
            t,
            n,
            ph,
          ),
        ),
    );
    progress(
      (round - start + 0.5) / (p.rounds - start),
      `round ${round + 1}: scoring ${sampled.samples.length} samples by execution`,
    );
    const t1 = ctx.env.now();
    const scored = await tools.scorer.scoreSamples(tasks, sampled.samples);
    const scoreMs = ctx.env.now() - t1;
    const groups = tasks.map((_, q) =>
      scored.filter((_, i) => sampled.samples[i].prompt === q).map((s) => s.reward.total)
    );
    const adv = groupAdvantages(groups, { mode: "mean-std" });
    const seqOf = (i: number): GrpoSample => {
      const s = sampled.samples[i];
      const prompt = (trainIds ?? sampled.promptIds)[s.prompt];
      return { ids: [...prompt, ...s.tokens], promptLen: prompt.length, advantage: 0 };
    };
    const items: Item[] = [];
    if (p.method === "rft") {
      for (
        const i of rftSelect(
          sampled.samples,
          scored.map((x) => x.correct),
          adv.advantages,
          p.rftKeep,
          p.rftPerQuestion,
        )
      ) items.push({ sample: { ...seqOf(i), advantage: 1 } });
    } else if (p.method === "awpg") {
      sampled.samples.forEach((s, i) => {
        if (s.tokens.length === 0 || adv.advantages[i] === 0) return;
        const seq = seqOf(i);
        const old = new Float32Array(seq.ids.length - 1);
        s.logprobs.forEach((lp, j) => (old[seq.promptLen - 1 + j] = lp));
        items.push({ sample: { ...seq, advantage: adv.advantages[i], logpOld: old } });
      });
    } else {
      tasks.forEach((_, q) => {
        const idx = sampled.samples.map((s, i) => (s.prompt === q && s.tokens.length > 0 ? i : -1)).filter((i) =>
          i >= 0
        );
        if (idx.length < 2) return;
        const best = idx.reduce((a, b) => (scored[b].reward.total > scored[a].reward.total ? b : a));
        const worst = idx.reduce((a, b) => (scored[b].reward.total < scored[a].reward.total ? b : a));
        if (scored[best].reward.total === scored[worst].reward.total) return;
        items.push({ sample: seqOf(best), pair: { id: q, chosen: true } }, {
          sample: seqOf(worst),
          pair: { id: q, chosen: false },
        });
      });
    }
    progress(
      (round - start + 0.6) / (p.rounds - start),
      `round ${round + 1}: training on ${items.length} samples${
        round === start ? " (the first update compiles the trainer's GPU kernels)" : ""
      }`,
    );
    const t2 = ctx.env.now();
    const reports: GrpoStepReport[] = [];
    const rng = new Rng(mixSeed(seed, "warmup-order", round));
    // DPO keeps pairs together: shuffle pairs, not sequences.
    const unit = p.method === "dpo" ? 2 : 1;
    for (let epoch = 0; epoch < p.epochs && items.length > 0; epoch++) {
      const order = rng.shuffle(Array.from({ length: items.length / unit }, (_, i) => i)).flatMap((i) =>
        Array.from({ length: unit }, (_, j) => items[i * unit + j])
      );
      for (let b = 0; b < order.length; b += WARMUP_MINIBATCH) {
        checkAborted(ctx);
        const mb = order.slice(b, b + WARMUP_MINIBATCH - (WARMUP_MINIBATCH % unit));
        if (mb.length === 0) continue;
        let batch = mb.map((it) => it.sample);
        if (p.method === "dpo") {
          batch = await dpoBatch(
            trainer,
            mb.map((it) => ({ sample: it.sample, chosen: it.pair?.chosen ?? false })),
            p.dpoBeta,
            (seqs) => runtime.referenceLogprobs(seqs),
          );
        }
        reports.push(await grpoStep(trainer, batch, { microBatch: ctx.opts.trainMicroBatch }));
        const done = epoch * order.length + b + mb.length, all = p.epochs * order.length;
        progress(
          (round - start + 0.6 + (0.4 * done) / all) / (p.rounds - start),
          `round ${round + 1}: training, ${done}/${all} samples${
            p.epochs > 1 ? ` (epoch ${epoch + 1}/${p.epochs})` : ""
          }`,
        );
      }
    }
    if (reports.length > 0) await runtime.syncPolicy();
    const trainMs = ctx.env.now() - t2;
    const correct = scored.filter((s) => s.correct).length;
    const rep: WarmupRoundReport = {
      round: round + 1,
      samples: scored.length,
      sampleAccuracy: correct / scored.length,
      rftTargets: p.method === "rft" ? items.length : 0,
      weightedSamples: p.method === "rft" ? 0 : items.length,
      optimiserSteps: reports.length,
    };
    if (exportSamples !== "none") {
      const opensThink = sampled.prompts.map(promptOpensThink);
      const ds = warmupDatasetRecords(
        sampled.samples.map((s, i) => ({
          task: tasks[s.prompt],
          sampleIndex: s.index,
          completion: s.text,
          promptOpensThink: opensThink[s.prompt],
          extraction: scored[i].extraction,
          correct: scored[i].correct,
          reward: scored[i].reward.total,
        })),
        round + 1,
        exportSamples,
      );
      const path = warmupDatasetPath(cellId, round + 1);
      // Written whole (not appended): a round redone after a crash replaces its file.
      await ctx.env.store.write(path, encodeWarmupDataset(ds.records));
      rep.dataset = { path, records: ds.records.length, questions: ds.questions };
    }
    rounds.push(rep);
    const mean = (f: (r: GrpoStepReport) => number) => meanOf(reports, f);
    const trainTokens = items.reduce((a, it) => a + it.sample.ids.length, 0) * p.epochs;
    await emitMetrics(ctx, {
      v: 1,
      step: round + 1,
      phase: "warmup",
      time: ctx.env.now(),
      ...stepFigures(sampled, scored, {
        scoreMs,
        trainMs,
        trainTokens,
        execAccuracy: rep.sampleAccuracy,
        equalGroupFraction: adv.equalFraction,
      }),
      loss: mean((r) => r.loss),
      gradNorm: mean((r) => r.gradNorm),
      entropy: mean((r) => r.entropy),
      lr: p.lr,
      extra: {
        trainItems: items.length,
        optimiserSteps: reports.length,
        skippedUpdates: reports.filter((r) => r.skipped).length,
        // Mean prompt lengths sampled with and trained on: they differ when sampleWithEvidence adds the definitions.
        samplePromptTokens: meanLen(sampled.promptIds),
        trainPromptTokens: meanLen(trainIds ?? sampled.promptIds),
      },
    });
    await emitSamples(
      ctx,
      sampled.samples.slice(0, ctx.opts.samplesPerStep).map((s, i) =>
        sampleRecord(
          { phase: "warmup", step: round + 1, round: round + 1 },
          tasks[s.prompt],
          sampled.prompts[s.prompt],
          s,
          scored[i],
          adv.advantages[i],
          sampled.answerPrefixes[s.prompt],
        )
      ),
    );
    await saveRound(ctx, runtime, prefix, round, config, rounds, trainer);
    progress(
      (round + 1 - start) / (p.rounds - start),
      `round ${round + 1}: ${items.length} training items, ${reports.length} updates`,
    );
  }
  const datasetFiles = rounds.flatMap((r) => (r.dataset ? [r.dataset.path] : []));
  return { kind: "warmup", cellId, method: p.method, rounds, exportSamples, datasetFiles };
}

/**
 * The sft warm-up: every training question's gold target (sft-targets.ts) after the cell's prompt,
 * trained with advantage 1 and ratio 1 (the gradient of the mean token log-likelihood, "token-mean"),
 * `epochs` passes per round in shuffled minibatches of WARMUP_MINIBATCH. Each round reports the
 * targets' mean token log-probability before and after it (the trainer's forward) and is
 * checkpointed as the other methods' rounds are; finished rounds are not redone.
 */
async function runSftWarmup(ctx: RunContext, cellId: string, p: WarmupParams): Promise<WarmupReport> {
  // The reader refuses these; parameters built in code get the same refusal.
  if (p.sampleWithEvidence) throw new Error(`method "sft" samples nothing: sampleWithEvidence must be false`);
  if (p.exportSamples !== "none") {
    throw new Error(`method "sft" samples nothing to export: exportSamples must be "none"`);
  }
  const setup = requireSetup(ctx, cellId);
  const runtime = setup.model.runtime;
  const tasks = splitTasks(ctx, cellId, setup.dataset.params.split);
  const seed = ctx.opts.seed ?? p.seed;
  const { prompter } = toolsFor(ctx, cellId);
  const template = prompter.template.id;
  const progress = progressReporter(ctx, cellId, "warmup");
  progress(0, `building ${tasks.length} prompts and gold targets`);
  const prompts = await prompter.prompts(tasks);
  const counts = { completion: 0, gold: 0, cocte: 0, template };
  // sftTargets "cocte": the golds as verified chains, written where the run's files are (rlvr cocte --dataset's format).
  const chains = p.sftTargets === "cocte" ? await cocteTargets(tasks, setup.dataset.sql) : null;
  if (chains) {
    const kept = chains.records.filter((r) => r !== null);
    await ctx.env.store.write(`warmup/${cellId}/cocte.jsonl`, kept.map((r) => JSON.stringify(r) + "\n").join(""));
    const failed = Object.entries(chains.failed).map(([k, n]) => `${k} ${n}`).join(", ");
    ctx.onLog(
      `warmup "${cellId}" (sft): ${kept.length} golds as chains of CTEs (warmup/${cellId}/cocte.jsonl)${
        failed ? `; not converted, trained as the gold SQL: ${failed}` : ""
      }`,
    );
  }
  const all: { seq: GrpoSample; source: SftTargetSource }[] = [];
  // Under a template that starts the answer (chain-of-ctes@2), a target trains on what follows that start;
  // one that does not begin with it cannot be written after this prompt and is left out.
  const answerPrefix = prompts[0]?.answerPrefix ?? "";
  let unprefixed = -1, unprefixedCount = 0;
  for (let i = 0; i < tasks.length; i++) {
    const target = sftTarget(
      tasks[i],
      template,
      await prompter.schemaOf(tasks[i].db_id),
      promptOpensThink(prompts[i].text),
      chains?.records[i],
    );
    const rest = afterAnswerPrefix(target.text, answerPrefix);
    if (rest === null) {
      if (unprefixed < 0) unprefixed = i;
      unprefixedCount++;
      continue;
    }
    all.push({
      seq: { ...sftSequence(prompts[i].ids, runtime.encodePlain(rest), runtime.hf.config.eosTokenIds), advantage: 1 },
      source: target.source,
    });
  }
  if (unprefixedCount > 0) {
    const what = `${unprefixedCount} target(s) do not start with ${
      JSON.stringify(answerPrefix)
    }, the answer's start ${template} writes (e.g. question ${tasks[unprefixed].id})`;
    if (all.length === 0) {
      throw new Error(
        `warmup "${cellId}" (sft): ${what}; none is left to train on (sftTargets "cocte" writes chains that start so)`,
      );
    }
    ctx.onLog(`warmup "${cellId}" (sft): ${what}: left out`);
  }
  // A target that does not fit after its prompt is left out (the sampler could not write it either: a
  // chain of CTEs is several times its gold's length), unless none fits.
  const maxLen = runtime.hf.config.maxPositionEmbeddings;
  const longest = all.findIndex((x) => x.seq.ids.length > maxLen);
  const fits = all.filter((x) => x.seq.ids.length <= maxLen);
  if (longest >= 0) {
    const what = `question ${tasks[longest].id}: prompt + answer are ${
      all[longest].seq.ids.length
    } tokens, more than the model's ${maxLen} positions`;
    if (fits.length === 0) throw new Error(`sft target of ${what} (lower the prompt cell's maxPromptTokens)`);
    ctx.onLog(
      `warmup "${cellId}" (sft): ${
        all.length - fits.length
      } target(s) left out, longer than the model's positions after their prompt (e.g. ${what})`,
    );
  }
  const seqs = fits.map((x) => x.seq);
  for (const x of fits) counts[x.source]++;
  const tooLong = all.length - fits.length;
  ctx.onLog(
    `warmup "${cellId}" (sft): ${seqs.length} gold targets under ${template}: ${counts.completion} from the records' completion, ${counts.gold} the gold SQL in the template's answer format${
      chains ? `, ${counts.cocte} the gold as a chain of CTEs` : ""
    }`,
  );
  const trainer = await warmupTrainer(runtime, p.lr, "token-mean");
  // Only what shapes the training state (sampling knobs are ignored by sft).
  // (sftTargets only when not the default, so checkpoints written before it existed still resume.)
  const config = JSON.stringify({
    method: p.method,
    rounds: p.rounds,
    lr: p.lr,
    epochs: p.epochs,
    seed,
    tasks: tasks.length,
    template,
    model: runtime.hf.name,
    ...(chains ? { sftTargets: p.sftTargets } : {}),
  });
  const prefix = `checkpoints/${cellId}`;
  const { rounds, start } = await resumeRounds(ctx, runtime, cellId, prefix, config);
  const micro = Math.max(1, ctx.opts.trainMicroBatch);
  const measure = async (): Promise<number> => {
    const rows: ArrayLike<number>[] = [];
    for (let b = 0; b < seqs.length; b += micro) {
      checkAborted(ctx);
      rows.push(...(await sampleLogprobs(trainer, seqs.slice(b, b + micro).map((s) => s.ids))));
    }
    return targetLogprob(seqs, rows).mean;
  };
  const tokens = seqs.reduce((a, s) => a + s.ids.length, 0);
  let before = start < p.rounds && seqs.length > 0 ? await measure() : 0;
  for (let round = start; round < p.rounds; round++) {
    checkAborted(ctx);
    const frac = (x: number) => (round - start + x) / (p.rounds - start);
    progress(
      frac(0),
      `round ${round + 1}: training on ${seqs.length} gold targets${
        round === start ? " (the first update compiles the trainer's GPU kernels)" : ""
      }`,
    );
    const t0 = ctx.env.now();
    const reports: GrpoStepReport[] = [];
    const rng = new Rng(mixSeed(seed, "warmup-order", round));
    for (let epoch = 0; epoch < p.epochs && seqs.length > 0; epoch++) {
      const order = rng.shuffle(Array.from({ length: seqs.length }, (_, i) => i));
      for (let b = 0; b < order.length; b += WARMUP_MINIBATCH) {
        checkAborted(ctx);
        const mb = order.slice(b, b + WARMUP_MINIBATCH).map((i) => seqs[i]);
        reports.push(await grpoStep(trainer, mb, { microBatch: ctx.opts.trainMicroBatch }));
        const done = epoch * order.length + b + mb.length, all = p.epochs * order.length;
        progress(
          frac((0.9 * done) / all),
          `round ${round + 1}: training, ${done}/${all} gold targets${
            p.epochs > 1 ? ` (epoch ${epoch + 1}/${p.epochs})` : ""
          }`,
        );
      }
    }
    if (reports.length > 0) await runtime.syncPolicy();
    const trainMs = ctx.env.now() - t0;
    progress(frac(0.95), `round ${round + 1}: measuring the gold targets' log-probability`);
    const after = seqs.length > 0 ? await measure() : 0;
    const rep: WarmupRoundReport = {
      round: round + 1,
      samples: 0,
      goldTargets: seqs.length,
      targetLogprob: { before, after },
      rftTargets: 0,
      weightedSamples: 0,
      optimiserSteps: reports.length,
    };
    rounds.push(rep);
    const mean = (f: (r: GrpoStepReport) => number) => meanOf(reports, f);
    await emitMetrics(ctx, {
      v: 1,
      step: round + 1,
      phase: "warmup",
      time: ctx.env.now(),
      ms: { train: trainMs },
      tokensPerSec: { train: perSecond(tokens * p.epochs, trainMs) },
      completionLength: summarize(seqs.map((s) => s.ids.length - s.promptLen)),
      loss: mean((r) => r.loss),
      gradNorm: mean((r) => r.gradNorm),
      entropy: mean((r) => r.entropy),
      lr: p.lr,
      extra: {
        trainItems: seqs.length,
        goldTargets: seqs.length,
        optimiserSteps: reports.length,
        skippedUpdates: reports.filter((r) => r.skipped).length,
        targetLogprobBefore: before,
        targetLogprobAfter: after,
        trainPromptTokens: meanLen(prompts.map((x) => x.ids)),
      },
    });
    await saveRound(ctx, runtime, prefix, round, config, rounds, trainer);
    progress(
      frac(1),
      `round ${round + 1}: ${seqs.length} gold targets, ${reports.length} updates, mean token log-probability ${
        before.toFixed(3)
      } -> ${after.toFixed(3)}`,
    );
    before = after;
  }
  return {
    kind: "warmup",
    cellId,
    method: p.method,
    rounds,
    exportSamples: "none",
    datasetFiles: [],
    targets: {
      completion: counts.completion,
      gold: counts.gold,
      template,
      ...(chains ? { cocte: counts.cocte, cocteFile: `warmup/${cellId}/cocte.jsonl`, cocteFailed: chains.failed } : {}),
      ...(tooLong > 0 ? { tooLong } : {}),
    },
  };
}

/**
 * The DPO minibatch as policy-gradient samples: `pairs` alternate chosen, rejected. With
 * z = beta((log pi(w) - log ref(w)) - (log pi(l) - log ref(l))) (sums over completion tokens),
 * advantages +-2 beta sigma(-z), logpOld = the current log-probs (ratio 1) and the trainer's
 * normConstant set to the number of sequences, the step's gradient is that of the mean DPO loss.
 */
export async function dpoBatch(
  trainer: GrpoTrainer,
  pairs: readonly { sample: GrpoSample; chosen: boolean }[],
  beta: number,
  refLogprobs: (seqs: number[][]) => Promise<ArrayLike<number>[]>,
): Promise<GrpoSample[]> {
  const seqs = pairs.map((it) => it.sample.ids);
  const cur = await sampleLogprobs(trainer, seqs);
  const ref = await refLogprobs(seqs);
  const seqLogp = (rows: ArrayLike<number>, promptLen: number) => {
    let s = 0;
    for (let t = promptLen - 1; t < rows.length; t++) s += rows[t];
    return s;
  };
  const margin = pairs.map((it, i) => seqLogp(cur[i], it.sample.promptLen) - seqLogp(ref[i], it.sample.promptLen));
  trainer.opts.normConstant = pairs.length;
  return pairs.map((it, i) => {
    const j = it.chosen ? i + 1 : i - 1;
    const z = beta * (it.chosen ? margin[i] - margin[j] : margin[j] - margin[i]);
    const a = 2 * beta * sigmoid(-z);
    return { ...it.sample, advantage: it.chosen ? a : -a, logpOld: cur[i] };
  });
}
