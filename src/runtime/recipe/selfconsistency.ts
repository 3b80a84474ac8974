// Self-consistency: N sampled answers per question, grouped by execution result and voted on
// (by count, or weighted by the model's log-probabilities); best-of-N by mean token
// log-probability among the answers that ran, and by each listed PRM's chain score; pass@N as the
// oracle bound; and every rule again on the first 1, 2, 4, ... samples of each question.
import type { SelfConsistencyParams } from "../../core/notebook-params.ts";
import { bestOfN, vote, type VoteWeighting, voteWeightingOf } from "../../core/selfconsistency.ts";
import type { Sample } from "../../model/sampler.ts";
import type { SelectionAtN, SelfConsistencyReport } from "../records.ts";
import {
  emitMetrics,
  emitSamples,
  mixSeed,
  nextIndex,
  progressReporter,
  type RunContext,
  splitTasks,
} from "./context.ts";
import {
  birdPredictions,
  lengthSummary,
  perSecond,
  prmFor,
  prmTextScorer,
  rewardSummary,
  sampleTasks,
  samplingMessage,
  toolsFor,
  voteSample,
} from "./common.ts";
import { sampleRecord, type Scored } from "./scoring.ts";
import { withPrmSteps } from "../prm/prm-grpo.ts";
import type { PrmScored } from "../prm/prm-model.ts";

/** Sample counts the rules are compared at: powers of two up to N, and N. */
export function nestedSizes(N: number): number[] {
  const out: number[] = [];
  for (let n = 1; n < N; n *= 2) out.push(n);
  out.push(N);
  return out;
}

interface Rules {
  samples: readonly Sample[];
  scored: readonly Scored[];
  weighting: VoteWeighting;
  comparison: SelfConsistencyParams["comparison"];
  /** Per PRM cell, each sample's chain score. */
  prm: { cellId: string; score: number[] }[];
}

/** Which rules pick a correct answer from the samples `idx` of one question. */
function pick(
  r: Rules,
  idx: readonly number[],
): { vote: boolean; logprob: boolean; prm: boolean[]; oracle: boolean; first: boolean; voted: number | null } {
  const v = vote(idx.map((i) => voteSample(r.samples[i], r.scored[i])), r.weighting, r.comparison);
  const voted = v.winner && !v.allFailed ? idx[v.winner.representative] : null;
  const ran = idx.filter((i) => r.scored[i].outcome !== null && r.scored[i].outcome?.error === null);
  const best = (score: (i: number) => number) => {
    const b = bestOfN(ran, score);
    return b.index >= 0 && r.scored[ran[b.index]].correct;
  };
  return {
    vote: voted !== null && r.scored[voted].correct,
    logprob: best((i) => r.samples[i].logprobs.reduce((a, x) => a + x, 0) / Math.max(1, r.samples[i].tokens.length)),
    prm: r.prm.map((m) => best((i) => m.score[i])),
    oracle: idx.some((i) => r.scored[i].correct),
    first: idx.length > 0 && r.scored[idx[0]].correct,
    voted,
  };
}

/** The self-consistency cell; the voted SQL goes to `predictions/<cell>.json` (BIRD format). */
export async function runSelfConsistency(
  ctx: RunContext,
  cellId: string,
  p: SelfConsistencyParams,
): Promise<SelfConsistencyReport> {
  const tasks = splitTasks(ctx, cellId, p.split).slice(0, p.n);
  const tools = toolsFor(ctx, cellId);
  const prms = (p.prm ?? []).map((id) => prmFor(ctx, cellId, id));
  const progress = progressReporter(ctx, cellId, "selfconsistency");
  progress(0, `building ${tasks.length} prompts`);
  const seed = mixSeed(ctx.opts.seed ?? 0, "selfconsistency", cellId);
  const sampled = await sampleTasks(ctx, tools, tasks, p.N, {
    temperature: p.temperature,
    topP: 1,
    topK: 0,
    minP: 0,
    maxNewTokens: p.maxNewTokens,
    seed,
  }, (d, t, n, ph) => progress((0.9 * d) / t, samplingMessage(`sampling ${p.N} per question,`, d, t, n, ph)));
  progress(0.9, `scoring ${sampled.samples.length} samples by execution`);
  const t1 = ctx.env.now();
  const scored = await tools.scorer.scoreSamples(tasks, sampled.samples);
  const prmScored: PrmScored[][] = [];
  for (const [k, prm] of prms.entries()) {
    progress(0.9 + (0.1 * k) / prms.length, `scoring with the PRM of ${prm.cellId}`);
    prmScored.push(
      await prmTextScorer(ctx, prm).score(tasks, sampled.samples.map((s) => ({ task: s.prompt, text: s.text }))),
    );
  }
  const scoreMs = ctx.env.now() - t1;
  const aggregate = p.prmAggregate ?? "min";
  const rules: Rules = {
    samples: sampled.samples,
    scored,
    weighting: voteWeightingOf(p.vote, p.logprobWeight),
    comparison: p.comparison,
    prm: prms.map((prm, k) => ({ cellId: prm.cellId, score: prmScored[k].map((s) => prm.chainScore(s, aggregate)) })),
  };
  const byQuestion = tasks.map((_, q) =>
    sampled.samples.map((s, i) => (s.prompt === q ? i : -1)).filter((i) => i >= 0)
  );
  const sizes = nestedSizes(p.N);
  const atN: SelectionAtN[] = sizes.map((N) => ({
    N,
    questions: tasks.length,
    vote: 0,
    logprob: 0,
    prm: Object.fromEntries(rules.prm.map((m) => [m.cellId, 0])),
    oracle: 0,
    first: 0,
  }));
  const sql: (string | null)[] = [];
  byQuestion.forEach((idx) => {
    sizes.forEach((N, k) => {
      const r = pick(rules, idx.slice(0, N));
      const a = atN[k];
      a.vote += r.vote ? 1 : 0;
      a.logprob += r.logprob ? 1 : 0;
      a.oracle += r.oracle ? 1 : 0;
      a.first += r.first ? 1 : 0;
      r.prm.forEach((ok, j) => (a.prm[rules.prm[j].cellId] += ok ? 1 : 0));
      if (N === p.N) {
        sql.push(r.voted !== null ? scored[r.voted].extraction.sql : (scored[idx[0]]?.extraction.sql ?? null));
      }
    });
  });
  const n = tasks.length;
  for (const a of atN) {
    for (const k of ["vote", "logprob", "oracle", "first"] as const) a[k] /= n;
    for (const id of Object.keys(a.prm)) a.prm[id] /= n;
  }
  const all = atN[atN.length - 1];
  const predictionsPath = `predictions/${cellId}.json`;
  await ctx.env.store.write(predictionsPath, JSON.stringify(birdPredictions(tasks, sql), null, 1));
  const step = nextIndex(ctx, "selfconsistency");
  await emitMetrics(ctx, {
    v: 1,
    step,
    phase: "selfconsistency",
    time: ctx.env.now(),
    ms: { sample: sampled.ms, score: scoreMs },
    tokensPerSec: { sample: perSecond(sampled.tokens, sampled.ms), score: perSecond(sampled.tokens, scoreMs) },
    rewards: rewardSummary(scored),
    execAccuracy: all.vote,
    completionLength: lengthSummary(sampled.samples),
    extra: {
      bestOfN: all.logprob,
      oracle: all.oracle,
      firstSample: all.first,
      samplesPerQuestion: p.N,
      ...Object.fromEntries(Object.entries(all.prm).map(([id, v]) => [`prmBestOfN.${id}`, v])),
    },
  });
  await emitSamples(
    ctx,
    await Promise.all(
      sampled.samples.slice(0, ctx.opts.samplesPerStep).map((s, i) => {
        const r = sampleRecord(
          { phase: "selfconsistency", step },
          tasks[s.prompt],
          sampled.prompts[s.prompt],
          s,
          scored[i],
          null,
          sampled.answerPrefixes[s.prompt],
        );
        const dataset = ctx.dataset;
        return dataset
          ? withPrmSteps(
            r,
            prmScored[0]?.[i] ?? scored[i].prm,
            tasks[s.prompt],
            tools.scorer,
            dataset.sql,
            p.comparison,
          )
          : r;
      }),
    ),
  );
  progress(1, `vote accuracy ${((all.vote / 1) * 100).toFixed(1)}%`);
  return {
    kind: "selfconsistency",
    cellId,
    split: p.split,
    samples: p.N,
    weighting: rules.weighting,
    questions: n,
    voteAccuracy: all.vote,
    bestOfNAccuracy: all.logprob,
    oracleAccuracy: all.oracle,
    firstSampleAccuracy: all.first,
    predictionsPath,
    ...(prms.length
      ? {
        prmBestOfN: prms.map((prm) => ({ cellId: prm.cellId, labels: prm.info.labels, accuracy: all.prm[prm.cellId] })),
      }
      : {}),
    ...(sizes.length > 1 || prms.length ? { atN } : {}),
  };
}
