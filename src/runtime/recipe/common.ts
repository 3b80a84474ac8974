// Pieces every stage uses: sampling a task list in batches, scoring, reward summaries, the
// answer groups behind maj@k and votes, and the BIRD-format predictions file.
import { type AnswerCount, resultKey, type VoteSample } from "../../core/selfconsistency.ts";
import { BIRD_SEPARATOR } from "../../core/loaders.ts";
import { summarize, type Summary } from "../../core/metrics.ts";
import type { CompareMode } from "../../core/compare.ts";
import type { DbSchema } from "../../core/schema.ts";
import type { Task } from "../../core/types.ts";
import { newSampleTiming, type Sample, type SampleProgress, type SamplingParams } from "../../model/sampler.ts";
import { checkAborted, requireSetup, type RunContext } from "./context.ts";
import type { ModelRuntime } from "./model-runtime.ts";
import { cachedSchemas, Prompter } from "./prompting.ts";
import { type GoldCache, type PrmTextScorer, type Scored, Scorer } from "./scoring.ts";
import type { PrmModel } from "../prm/prm-model.ts";
import type { PromptParams } from "../../core/notebook-params.ts";
import { usesPrm } from "../../core/rewards.ts";
import { type FinishedText, FinishTracker } from "./sample-stream.ts";

/**
 * Prompter and scorer for the context's current model, prompt and reward (or a given template, or
 * the evidence switched on or off); cached per dataset. When the reward has a prm component the
 * scorer gets the run's PRM (`prm`: a PRM train cell id, else the last one); `prm: null` leaves it
 * out (judging by execution only).
 */
export function toolsFor(
  ctx: RunContext,
  cellId: string,
  o: { runtime?: ModelRuntime; template?: string; evidence?: boolean; prm?: string | null } = {},
): { prompter: Prompter; scorer: Scorer; runtime: ModelRuntime } {
  const s = requireSetup(ctx, cellId);
  const runtime = o.runtime ?? s.model.runtime;
  const params = {
    ...s.prompt,
    ...(o.template ? { template: o.template } : {}),
    ...(o.evidence !== undefined ? { evidence: o.evidence } : {}),
  };
  const prompter = prompterFor(ctx, runtime, params);
  const prm = o.prm !== null && usesPrm(s.reward.spec) ? prmTextScorer(ctx, prmFor(ctx, cellId, o.prm ?? "")) : null;
  const scorer = new Scorer(
    s.dataset.sql,
    s.reward.spec,
    s.reward.comparison,
    prompter.template.extractMode,
    datasetCache(ctx).golds,
    prm,
  );
  return { prompter, scorer, runtime };
}

/** The prompter of `runtime` for prompt settings `params` (cached per dataset: prompts depend on the model's tokenizer and chat template and the settings only). */
export function prompterFor(ctx: RunContext, runtime: ModelRuntime, params: PromptParams): Prompter {
  const cache = datasetCache(ctx);
  let byParams = cache.prompters.get(runtime);
  if (!byParams) {
    byParams = new Map();
    cache.prompters.set(runtime, byParams);
  }
  const key = JSON.stringify(params);
  let prompter = byParams.get(key);
  if (!prompter) {
    prompter = new Prompter(runtime, params, cache.schemas);
    byParams.set(key, prompter);
  }
  return prompter;
}

/**
 * The PRM of PRM train cell `ref`, or (empty `ref`) the last process PRM that ran — an outcome model
 * (labels "outcome", one score per answer) only when no process one did — with a log line naming the
 * pick; errors say what is missing. (Before 2026-12-04 the default was the last PRM of either kind: a
 * notebook with a PRM and then an ORM gave its GRPO cell the ORM.)
 */
export function prmFor(ctx: RunContext, cellId: string, ref: string): PrmModel {
  const prms = ctx.prms ?? new Map<string, PrmModel>();
  if (ref) {
    const p = prms.get(ref);
    if (!p) {
      throw new Error(
        `cell "${cellId}" uses the PRM of cell "${ref}", which has not run before it (PRMs so far: ${
          [...prms.keys()].join(", ") || "none"
        })`,
      );
    }
    return p;
  }
  const all = [...prms.values()];
  const pick = all.filter((p) => p.info.labels === "process").at(-1) ?? all.at(-1);
  if (!pick) throw new Error(`cell "${cellId}" needs a PRM: add a PRM train cell (after a PRM data cell) before it`);
  ctx.onLog(
    `cell "${cellId}" uses the PRM of cell "${pick.cellId}" (${pick.info.labels} labels; name another with the cell's prm parameter)`,
  );
  return pick;
}

/** Step scores of completions under `prm`, inputs built with the PRM's own prompt template. */
export function prmTextScorer(ctx: RunContext, prm: PrmModel): PrmTextScorer {
  const s = ctx.prompt;
  if (!s) throw new Error("needs a prompt cell before it");
  const prompter = prompterFor(ctx, prm.runtime, { ...s, template: prm.info.template });
  return {
    score: async (tasks, items) => {
      const prompts = await prompter.prompts(tasks);
      return await prm.score(items.map((x) => ({ prompt: prompts[x.task].text, completion: x.text })), {
        microBatch: ctx.opts.trainMicroBatch,
      });
    },
  };
}

/** What is cached per dataset cell: schemas, gold query replies, prompters per model. */
interface DatasetCache {
  schemas: (dbId: string) => Promise<DbSchema>;
  golds: GoldCache;
  prompters: WeakMap<ModelRuntime, Map<string, Prompter>>;
}

const CACHES = new WeakMap<RunContext, DatasetCache>();

function datasetCache(ctx: RunContext): DatasetCache {
  let c = CACHES.get(ctx);
  if (!c) {
    const d = ctx.dataset;
    if (!d) throw new Error("no dataset");
    c = {
      schemas: cachedSchemas((dbId) => ctx.env.schemaOf(d.params, dbId)),
      golds: new Map(),
      prompters: new WeakMap(),
    };
    CACHES.set(ctx, c);
  }
  return c;
}

/** Forgets what was cached for the previous dataset cell. */
export function resetDatasetCache(ctx: RunContext): void {
  CACHES.delete(ctx);
}

/**
 * Samples of a task list with their prompts: `n` per task, prompt index relative to `tasks`. A
 * sample's `text` is its answer — the template's answer prefix, then the generated text — and its
 * `tokens` the generated ones, which continue `promptIds` (the prompt's ids and the prefix's).
 */
export interface TaskSamples {
  /** The rendered prompts, before the answer (TaskPrompt.text). */
  prompts: string[];
  /** Per prompt, the answer's start it writes for the model (TaskPrompt.answerPrefix; "" for most templates). */
  answerPrefixes: string[];
  promptIds: number[][];
  samples: Sample[];
  /** Generated tokens and wall milliseconds of the sampling, and of its prompts' prefill (within `ms`). */
  tokens: number;
  ms: number;
  prefillMs: number;
}

/** FNV-1a of a string as 8 hex digits (a kept batch's key: its sampling, prompts and seed). */
function fnvHex(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(16).padStart(8, "0");
}

/** A kept batch's samples (sampleTasks `keep`) when its key matches, else null (none, damaged, or of other sampling). */
async function readKept(ctx: RunContext, path: string, key: string): Promise<Sample[] | null> {
  try {
    const raw = await ctx.env.store.read(path);
    if (!raw) return null;
    const j = JSON.parse(new TextDecoder().decode(raw)) as { key?: unknown; samples?: unknown };
    return j.key === key && Array.isArray(j.samples) ? (j.samples as Sample[]) : null;
  } catch {
    return null;
  }
}

/** How often progress inside a sampling call is reported (each decoding step would flood the page). */
const SAMPLE_PROGRESS_MS = 250;

/**
 * Samples `n` completions of every task, `batch` prompts per call, seeded per batch from `seed`.
 * `onBatch` hears before every call (phase "prefill": the call reads its prompts first, the long
 * silent part of a call on a slow GPU), after it and, every SAMPLE_PROGRESS_MS, within it: `done` counts
 * questions (fractional inside a call), `tokens` the tokens generated so far. A stopped run (ctx.signal)
 * throws between decoding steps, not only between calls: a call can take minutes on a software GPU. `onFinished` hears of
 * each completion as its row ends, before the call returns (not with stop strings: see
 * sample-stream.ts); prompt indices are relative to `tasks`. With `keep`, each finished call's samples
 * are kept in the run folder under `keep.dir` and a later call of the same sampling (same `keep.key`)
 * takes them instead of sampling again: an evaluation stopped or reloaded halfway resumes where it was.
 */
export async function sampleTasks(
  ctx: RunContext,
  tools: { prompter: Prompter; runtime: ModelRuntime },
  tasks: readonly Task[],
  n: number,
  params: Omit<SamplingParams, "eosTokenIds" | "stop"> & { stop?: readonly string[] },
  onBatch?: (done: number, total: number, tokens: number, phase: SamplePhase) => void,
  onFinished?: (f: FinishedText) => void,
  keep?: { dir: string; key: string },
): Promise<TaskSamples> {
  const built = await tools.prompter.prompts(tasks);
  const out: TaskSamples = {
    prompts: built.map((b) => b.text),
    answerPrefixes: built.map((b) => b.answerPrefix),
    promptIds: built.map((b) => b.ids),
    samples: [],
    tokens: 0,
    ms: 0,
    prefillMs: 0,
  };
  const timing = newSampleTiming();
  const t0 = ctx.env.now();
  const B = Math.max(1, ctx.opts.sampleBatchPrompts);
  let tokens = 0;
  let last = ctx.env.now();
  for (let i = 0; i < tasks.length; i += B) {
    checkAborted(ctx);
    const ids = out.promptIds.slice(i, i + B);
    const seed = (params.seed + i * 7919) >>> 0;
    const kept = keep && !onFinished ? `${keep.dir}/${i}.json` : null;
    const batchKey = kept ? fnvHex(JSON.stringify([keep!.key, n, B, seed, params, ids])) : "";
    const before = kept ? await readKept(ctx, kept, batchKey) : null;
    if (before) {
      for (const s of before) {
        out.samples.push({ ...s, prompt: s.prompt + i, text: built[s.prompt + i].answerPrefix + s.text });
        tokens += s.tokens.length;
      }
      onBatch?.(Math.min(tasks.length, i + B), tasks.length, tokens, "decode");
      continue;
    }
    onBatch?.(i, tasks.length, tokens, "prefill");
    const within = onBatch && ((sp: SampleProgress) => {
      const t = ctx.env.now();
      if (t - last < SAMPLE_PROGRESS_MS) return;
      last = t;
      // Rows finish together near the end: the decoding step against the token budget moves steadily.
      const f = Math.min(1, Math.max(sp.finished / Math.max(1, sp.total), sp.step / Math.max(1, params.maxNewTokens)));
      onBatch(i + ids.length * f, tasks.length, tokens + sp.tokens, "decode");
    });
    // One seed per batch position: the same tasks and seed give the same samples however the run was split.
    const stream = onFinished && !params.stop?.length
      ? new FinishTracker(
        new Set(tools.runtime.hf.config.eosTokenIds),
        params.maxNewTokens,
        (t) => tools.runtime.decode(t),
        (f) => onFinished({ ...f, prompt: f.prompt + i, text: built[f.prompt + i].answerPrefix + f.text }),
      )
      : null;
    const hear = (sp: SampleProgress) => {
      checkAborted(ctx);
      stream?.progress(sp);
      within?.(sp);
    };
    const got = await tools.runtime.sample(ids, n, { ...params, stop: params.stop ?? [], seed }, hear, timing);
    got.sort((a, b) => a.prompt - b.prompt || a.index - b.index);
    if (kept) await ctx.env.store.write(kept, JSON.stringify({ key: batchKey, samples: got }));
    for (const s of got) {
      out.samples.push({ ...s, prompt: s.prompt + i, text: built[s.prompt + i].answerPrefix + s.text });
      tokens += s.tokens.length;
    }
    onBatch?.(Math.min(tasks.length, i + B), tasks.length, tokens, "decode");
  }
  out.ms = ctx.env.now() - t0;
  out.prefillMs = timing.prefillMs + timing.repeatMs;
  out.tokens = out.samples.reduce((a, s) => a + s.tokens.length, 0);
  return out;
}

/** A progress line of a sampling call: "decoding 12/96 questions, 1,234 tokens". */
export function samplingMessage(
  what: string,
  done: number,
  total: number,
  tokens: number,
  phase: SamplePhase = "decode",
): string {
  const at = `${what} ${Math.floor(done)}/${total} questions, ${tokens.toLocaleString("en-US")} tokens`;
  return phase === "prefill" ? `${at}: reading the next prompts (prefill)` : at;
}

/** What a sampling call is doing: reading its prompts, or writing the answers token by token. */
export type SamplePhase = "prefill" | "decode";

/** Mean and std of each reward component (weighted contributions) and of the total. */
export function rewardSummary(scored: readonly Scored[]): Record<string, { mean: number; std: number }> {
  const out: Record<string, { mean: number; std: number }> = {};
  if (scored.length === 0) return out;
  for (const k of Object.keys(scored[0].reward.weighted)) {
    const s = summarize(scored.map((x) => x.reward.weighted[k] ?? 0));
    out[k] = { mean: s.mean, std: s.std };
  }
  const t = summarize(scored.map((x) => x.reward.total));
  out.total = { mean: t.mean, std: t.std };
  return out;
}

/** Completion length summary. */
export function lengthSummary(samples: readonly Sample[]): Summary {
  return summarize(samples.map((s) => s.tokens.length));
}

/** The vote input of a scored sample: its result unless it failed. */
export function voteSample(s: Sample, scored: Scored): VoteSample {
  const ok = scored.outcome !== null && scored.outcome.error === null;
  return {
    result: ok ? scored.predicted : null,
    logprob: s.logprobs.reduce((a, b) => a + b, 0),
    tokens: s.tokens.length,
  };
}

/** The answer groups of one question's samples (equal results together), for maj@k. */
export function answerCounts(scored: readonly Scored[], mode: CompareMode): AnswerCount[] {
  const groups = new Map<string, AnswerCount>();
  let failed = 0;
  for (const s of scored) {
    const ok = s.outcome !== null && s.outcome.error === null && s.predicted !== null;
    if (!ok || s.predicted === null) {
      failed++;
      continue;
    }
    const key = resultKey(s.predicted, mode);
    const g = groups.get(key) ?? { count: 0, correct: s.correct };
    g.count++;
    groups.set(key, g);
  }
  const out = [...groups.values()];
  if (failed > 0) out.push({ count: failed, correct: false, failed: true });
  return out;
}

/** BIRD's prediction dict: position -> "SQL\t----- bird -----\tdb_id" (empty SQL when none was extracted). */
export function birdPredictions(tasks: readonly Task[], sql: readonly (string | null)[]): Record<string, string> {
  const out: Record<string, string> = {};
  tasks.forEach((t, i) => (out[String(i)] = `${sql[i] ?? ""}${BIRD_SEPARATOR}${t.db_id}`));
  return out;
}

/** Seconds to tokens per second (0 when no time passed). */
export function perSecond(count: number, ms: number): number {
  return ms > 0 ? count / (ms / 1000) : 0;
}

/**
 * The figures a sample-score-train step's metrics record shares (a GRPO step, a warm-up round): each phase's time and
 * tokens per second (the score phase over the sampled tokens), the rewards, the accuracy of the samples, the share of
 * equal-reward groups and the completion lengths.
 */
export function stepFigures(
  sampled: TaskSamples,
  scored: readonly Scored[],
  t: { scoreMs: number; trainMs: number; trainTokens: number; execAccuracy?: number; equalGroupFraction: number },
) {
  return {
    ms: { sample: sampled.ms, prefill: sampled.prefillMs, score: t.scoreMs, train: t.trainMs },
    tokensPerSec: {
      sample: perSecond(sampled.tokens, sampled.ms),
      score: perSecond(sampled.tokens, t.scoreMs),
      train: perSecond(t.trainTokens, t.trainMs),
    },
    rewards: rewardSummary(scored),
    execAccuracy: t.execAccuracy,
    equalGroupFraction: t.equalGroupFraction,
    completionLength: lengthSummary(sampled.samples),
  };
}
