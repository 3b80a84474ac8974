// Evaluate: execution accuracy of the current model on a split — one decoding at the cell's
// temperature (0: greedy) whose SQL is saved in BIRD's prediction format, and, with k > 1, k
// sampled answers per question for pass@k and maj@k — overall and per difficulty; under the
// chain-of-ctes prompts (@1, @2) also the greedy answers' shapes (core/cocte-shapes.ts: how many are chains
// a PRM can score step by step).
import { type ChainShapes, chainShapes } from "../../core/cocte-shapes.ts";
import { isCocteTemplate } from "../../core/prompts.ts";
import type { EvaluateParams } from "../../core/notebook-params.ts";
import { majAtK, passAtK } from "../../core/selfconsistency.ts";
import { Rng } from "../../core/rng.ts";
import type { Task } from "../../core/types.ts";
import type { AccuracyFigures, EvalReport } from "../records.ts";
import { emitMetrics, emitSamples, nextIndex, progressReporter, type RunContext, splitTasks } from "./context.ts";
import {
  answerCounts,
  birdPredictions,
  lengthSummary,
  perSecond,
  rewardSummary,
  sampleTasks,
  samplingMessage,
  toolsFor,
} from "./common.ts";
import type { ModelRuntime } from "./model-runtime.ts";
import { sampleRecord, type Scored } from "./scoring.ts";

/** The k values reported: powers of two below k, and k. */
export function kValues(k: number): number[] {
  const ks: number[] = [];
  for (let x = 1; x < k; x *= 2) ks.push(x);
  ks.push(k);
  return ks;
}

/** What `evaluateTasks` measures, before it is written anywhere. */
export interface EvalResult {
  tasks: Task[];
  greedy: Scored[];
  /** Per task, the k sampled answers (empty when k = 1). */
  sampled: Scored[][];
  figures: AccuracyFigures;
  byDifficulty: Record<string, AccuracyFigures>;
  greedySql: (string | null)[];
  /** Under a chain-of-ctes prompt: the greedy answers' shapes. */
  chains?: ChainShapes;
}

/** Runs the evaluation of `p` on `tasks` with the context's model (or `o.runtime` / `o.template`). */
export async function evaluateTasks(
  ctx: RunContext,
  cellId: string,
  tasks: Task[],
  p: Pick<EvaluateParams, "temperature" | "topP" | "k" | "maxNewTokens" | "seed">,
  o: {
    runtime?: ModelRuntime;
    template?: string;
    phaseStep?: { phase: "eval" | "select"; step: number };
    progress?: (fraction: number, message: string) => void;
    keep?: string;
  } = {},
): Promise<EvalResult> {
  const tools = toolsFor(ctx, cellId, o);
  // A stage that evaluates inside itself (GRPO's held-out checks) maps this onto its own progress.
  const progress = o.progress ?? progressReporter(ctx, cellId, "evaluate");
  const passes = p.k > 1 ? 2 : 1;
  const base = { topP: p.topP, topK: 0, minP: 0, maxNewTokens: p.maxNewTokens, seed: p.seed };
  // The first decoding of a run also compiles the policy's GPU programs for its shapes: say so, it can take a while.
  progress(0, `building ${tasks.length} prompts and decoding the first batch`);
  const kept = (
    pass: string,
  ) => (o.keep ? { dir: `partial/${o.keep}/${pass}`, key: JSON.stringify([tasks.map((t) => t.id), p]) } : undefined);
  const first = await sampleTasks(
    ctx,
    tools,
    tasks,
    1,
    { ...base, temperature: p.temperature },
    (d, t, n, ph) =>
      progress(
        (0.95 * d) / t / passes,
        samplingMessage(p.temperature > 0 ? "sampling" : "decoding (greedy)", d, t, n, ph),
      ),
    undefined,
    kept("first"),
  );
  progress(0.95 / passes, `scoring ${tasks.length} answers by execution`);
  const tScore = ctx.env.now();
  const greedy = await tools.scorer.scoreSamples(tasks, first.samples);
  const scoreMs = ctx.env.now() - tScore;
  let sampled: Scored[][] = tasks.map(() => []);
  let sampledTokens = 0;
  if (p.k > 1) {
    const temp = p.temperature > 0 ? p.temperature : 1;
    const many = await sampleTasks(
      ctx,
      tools,
      tasks,
      p.k,
      { ...base, temperature: temp, seed: (p.seed + 1) >>> 0 },
      (d, t, n, ph) =>
        progress(0.5 + (0.95 * d) / t / 2, samplingMessage(`sampling ${p.k} per question,`, d, t, n, ph)),
      undefined,
      kept("k"),
    );
    progress(0.98, `scoring ${many.samples.length} samples by execution`);
    const scored = await tools.scorer.scoreSamples(tasks, many.samples);
    sampled = tasks.map((_, i) => scored.filter((_, j) => many.samples[j].prompt === i));
    sampledTokens = many.tokens;
  }
  const figuresOf = (idx: number[]): AccuracyFigures => {
    const f: AccuracyFigures = {
      questions: idx.length,
      greedy: idx.length ? idx.filter((i) => greedy[i].correct).length / idx.length : 0,
    };
    if (p.k > 1 && idx.length) {
      f.passAtK = {};
      f.majAtK = {};
      const rng = new Rng(p.seed);
      for (const k of kValues(p.k)) {
        let pass = 0, maj = 0;
        for (const i of idx) {
          pass += passAtK(p.k, sampled[i].filter((s) => s.correct).length, k);
          maj += majAtK(answerCounts(sampled[i], tools.scorer.comparison), k, { random: () => rng.next() }).value;
        }
        f.passAtK[String(k)] = pass / idx.length;
        f.majAtK[String(k)] = maj / idx.length;
      }
    }
    return f;
  };
  const all = tasks.map((_, i) => i);
  const byDifficulty: Record<string, AccuracyFigures> = {};
  for (const d of new Set(tasks.map((t) => t.difficulty ?? "unknown"))) {
    byDifficulty[d] = figuresOf(all.filter((i) => (tasks[i].difficulty ?? "unknown") === d));
  }
  const figures = figuresOf(all);
  const chains = isCocteTemplate(tools.prompter.template.id)
    ? chainShapes(first.samples.map((s) => s.text))
    : undefined;
  const at = o.phaseStep ?? { phase: "eval" as const, step: nextIndex(ctx, "eval") };
  const extra: Record<string, number> = { questions: tasks.length, goldProblems: tools.scorer.goldProblems.size };
  if (chains) Object.assign(extra, { chainMultiStep: chains.multiStep, chainNoSql: chains.noSql });
  for (const [k, v] of Object.entries(figures.passAtK ?? {})) extra[`passAt${k}`] = v;
  for (const [k, v] of Object.entries(figures.majAtK ?? {})) extra[`majAt${k}`] = v;
  await emitMetrics(ctx, {
    v: 1,
    step: at.step,
    phase: at.phase,
    time: ctx.env.now(),
    ms: { sample: first.ms, score: scoreMs },
    tokensPerSec: { sample: perSecond(first.tokens + sampledTokens, first.ms) },
    rewards: rewardSummary(greedy),
    execAccuracy: figures.greedy,
    completionLength: lengthSummary(first.samples),
    extra,
  });
  // Every question's answer, not samplesPerStep of them: the page compares answers question by
  // question across evaluations (the before/after view), and an evaluation is small.
  const keep = at.phase === "eval" && o.phaseStep === undefined
    ? first.samples
    : first.samples.slice(0, ctx.opts.samplesPerStep);
  await emitSamples(
    ctx,
    keep.map((s) =>
      sampleRecord(
        at,
        tasks[s.prompt],
        first.prompts[s.prompt],
        s,
        greedy[s.prompt],
        null,
        first.answerPrefixes[s.prompt],
      )
    ),
  );
  progress(1, `accuracy ${(figures.greedy * 100).toFixed(1)}%`);
  return {
    tasks,
    greedy,
    sampled,
    figures,
    byDifficulty,
    greedySql: greedy.map((g) => g.extraction.sql),
    ...(chains ? { chains } : {}),
  };
}

/** The Evaluate cell: evaluates on its split and writes `predictions/<cell>.json` (BIRD format). */
export async function runEvaluate(
  ctx: RunContext,
  cellId: string,
  p: EvaluateParams,
  label: string,
): Promise<EvalReport> {
  const tasks = splitTasks(ctx, cellId, p.split).slice(0, p.n);
  // Its sampling calls are kept as they finish (partial/<cell>/): stopped or reloaded halfway, it resumes
  // where it was; the model it evaluates is the same, since this folder's training cells restore their checkpoints.
  const r = await evaluateTasks(ctx, cellId, tasks, { ...p, seed: ctx.opts.seed ?? p.seed }, { keep: cellId });
  await ctx.env.store.remove(`partial/${cellId}`);
  const predictionsPath = `predictions/${cellId}.json`;
  await ctx.env.store.write(predictionsPath, JSON.stringify(birdPredictions(tasks, r.greedySql), null, 1));
  return {
    kind: "evaluate",
    cellId,
    split: p.split,
    label,
    overall: r.figures,
    byDifficulty: r.byDifficulty,
    samplesPerQuestion: p.k > 1 ? p.k : 0,
    predictionsPath,
    ...(r.chains ? { chains: r.chains } : {}),
  };
}
