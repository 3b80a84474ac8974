// Self-consistency: N sampled answers per question, grouped by execution result and voted on
// (by count, or weighted by the model's log-probabilities); best-of-N by mean token
// log-probability among the answers that ran; pass@N as the oracle bound.
import type { SelfConsistencyParams } from "../../core/notebook-params.ts";
import { bestOfN, vote, voteWeightingOf } from "../../core/selfconsistency.ts";
import type { SelfConsistencyReport } from "../records.ts";
import { emitMetrics, emitSamples, mixSeed, nextIndex, progressReporter, type RunContext, splitTasks } from "./context.ts";
import { birdPredictions, lengthSummary, perSecond, rewardSummary, sampleTasks, samplingMessage, toolsFor, voteSample } from "./common.ts";
import { sampleRecord } from "./scoring.ts";

/** The self-consistency cell; the voted SQL goes to `predictions/<cell>.json` (BIRD format). */
export async function runSelfConsistency(ctx: RunContext, cellId: string, p: SelfConsistencyParams): Promise<SelfConsistencyReport> {
  const tasks = splitTasks(ctx, cellId, p.split).slice(0, p.n);
  const tools = toolsFor(ctx, cellId);
  const progress = progressReporter(ctx, cellId, "selfconsistency");
  progress(0, `building ${tasks.length} prompts`);
  const seed = mixSeed(ctx.opts.seed ?? 0, "selfconsistency", cellId);
  const sampled = await sampleTasks(ctx, tools, tasks, p.N, {
    temperature: p.temperature, topP: 1, topK: 0, minP: 0, maxNewTokens: p.maxNewTokens, seed,
  }, (d, t, n) => progress((0.9 * d) / t, samplingMessage(`sampling ${p.N} per question,`, d, t, n)));
  progress(0.9, `scoring ${sampled.samples.length} samples by execution`);
  const t1 = ctx.env.now();
  const scored = await tools.scorer.scoreSamples(tasks, sampled.samples);
  const scoreMs = ctx.env.now() - t1;
  const weighting = voteWeightingOf(p.vote, p.logprobWeight);
  let voted = 0, best = 0, oracle = 0, first = 0;
  const sql: (string | null)[] = [];
  tasks.forEach((_, q) => {
    const idx = sampled.samples.map((s, i) => (s.prompt === q ? i : -1)).filter((i) => i >= 0);
    const v = vote(idx.map((i) => voteSample(sampled.samples[i], scored[i])), weighting, p.comparison);
    const win = v.winner && !v.allFailed ? idx[v.winner.representative] : null;
    if (win !== null && scored[win].correct) voted++;
    sql.push(win !== null ? scored[win].extraction.sql : (scored[idx[0]]?.extraction.sql ?? null));
    const ran = idx.filter((i) => scored[i].outcome !== null && scored[i].outcome?.error === null);
    const b = bestOfN(ran, (i) => sampled.samples[i].logprobs.reduce((a, x) => a + x, 0) / Math.max(1, sampled.samples[i].tokens.length));
    if (b.index >= 0 && scored[ran[b.index]].correct) best++;
    if (idx.some((i) => scored[i].correct)) oracle++;
    if (idx.length && scored[idx[0]].correct) first++;
  });
  const n = tasks.length;
  const predictionsPath = `predictions/${cellId}.json`;
  await ctx.env.store.write(predictionsPath, JSON.stringify(birdPredictions(tasks, sql), null, 1));
  const step = nextIndex(ctx, "selfconsistency");
  await emitMetrics(ctx, {
    v: 1, step, phase: "selfconsistency", time: ctx.env.now(), ms: { sample: sampled.ms, score: scoreMs },
    tokensPerSec: { sample: perSecond(sampled.tokens, sampled.ms), score: perSecond(sampled.tokens, scoreMs) },
    rewards: rewardSummary(scored), execAccuracy: voted / n, completionLength: lengthSummary(sampled.samples),
    extra: { bestOfN: best / n, oracle: oracle / n, firstSample: first / n, samplesPerQuestion: p.N },
  });
  await emitSamples(ctx, sampled.samples.slice(0, ctx.opts.samplesPerStep).map((s, i) =>
    sampleRecord({ phase: "selfconsistency", step }, tasks[s.prompt], sampled.prompts[s.prompt], s, scored[i], null)));
  progress(1, `vote accuracy ${((voted / n) * 100).toFixed(1)}%`);
  return {
    kind: "selfconsistency", cellId, split: p.split, samples: p.N, weighting, questions: n,
    voteAccuracy: voted / n, bestOfNAccuracy: best / n, oracleAccuracy: oracle / n, firstSampleAccuracy: first / n, predictionsPath,
  };
}
