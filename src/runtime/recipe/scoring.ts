// Scoring samples: extract the SQL, run it and the gold query (the gold result cached per task),
// compare under the reward cell's mode, and score with the reward spec; plus the sample record.
//
// Cost control, none of which changes a reward (docs/evaluator.md, "Scoring in the recipe"):
// - the gold of a task runs once per dataset cell (shared GoldCache), and it is started before the
//   samples exist (`prefetch`), so it is ready when they are;
// - within one batch (`ScoreBatch`, a GRPO step) the same SQL text on the same database runs once,
//   unless it calls a volatile function (random(), 'now', ...: sql-guard.ts isRepeatable);
// - a prediction gets `predictionTimeMs(gold's time)`: `factor` times what the gold took, never
//   less than `floorMs` nor more than the pool's limit. bench/sql-budget.bench.ts (in git at
//   6e6b06a) measured what correct answers need: every Spider-train and demo gold, and each gold
//   rewritten as a chain of CTEs (same rows, another text) took at most 8.6x its gold (those above
//   1 ms).
import { type CompareMode, type GoldIndex, indexGold, matchesGold } from "../../core/compare.ts";
import { type Extraction, type ExtractMode, extractSql } from "../../core/extract.ts";
import type { MetricPhase } from "../../core/metrics.ts";
import { compileRewardSpec, type RewardScore, type RewardSpec } from "../../core/rewards.ts";
import type { ExecOutcome, ResultSet, Task } from "../../core/types.ts";
import type { Sample } from "../../model/sampler.ts";
import type { PrmScored } from "../prm/prm-model.ts";
import type { QueryReply } from "../sql-exec.ts";
import { isRepeatable } from "../sql-guard.ts";
import { displayResult, promptOpensThink, reasoningOf, type SampleRecord } from "../records.ts";
import type { SqlRunner } from "./context.ts";

/** A scored completion. */
export interface Scored {
  extraction: Extraction;
  /** Null when no SQL was extracted (nothing ran). */
  outcome: ExecOutcome | null;
  predicted: ResultSet | null;
  gold: ResultSet | null;
  correct: boolean;
  reward: RewardScore;
  /** The PRM's steps and scores of the completion, when a PRM scored it. */
  prm?: PrmScored;
}

/** Scores completions with a PRM (runtime/recipe/common.ts builds one from the run's PRM). */
export interface PrmTextScorer {
  /** Step scores of each item's text, item.task indexing `tasks`. */
  score(tasks: readonly Task[], items: readonly { task: number; text: string }[]): Promise<PrmScored[]>;
}

/** Gold query replies by task id (shared by the scorers of one dataset). */
export type GoldCache = Map<string, Promise<QueryReply>>;

/** How long a prediction may run: `factor` x its gold's time, within [floorMs, capMs]. */
export interface PredictionTime {
  factor: number;
  floorMs: number;
  /** Upper bound; also the limit where the gold failed (it cannot be matched anyway). */
  capMs: number;
}

/** The recipe's default (see the header and docs/evaluator.md for the measurements). */
export const DEFAULT_PREDICTION_TIME: PredictionTime = { factor: 10, floorMs: 250, capMs: 30_000 };

/** The time limit of a prediction whose gold took `goldMs` (null: the gold did not run). */
export function predictionTimeMs(goldMs: number | null, t: PredictionTime = DEFAULT_PREDICTION_TIME): number {
  if (goldMs === null || !Number.isFinite(goldMs)) return t.floorMs;
  return Math.min(t.capMs, Math.max(t.floorMs, Math.ceil(t.factor * goldMs)));
}

/** What a scorer ran and what it answered from memory, since it was made. */
export interface ScorerStats {
  goldRuns: number;
  goldHits: number;
  /** Second runs of slow golds, for their time only (see `retimed`). */
  goldRetimes: number;
  /** Prediction queries sent to the SQL runner, and those answered by an identical one in the batch. */
  predictionRuns: number;
  predictionHits: number;
}

type Gold = { reply: QueryReply; index: GoldIndex | null };

/** Runs and scores completions of tasks. */
export class Scorer {
  private readonly golds = new Map<string, Promise<Gold>>();
  private readonly score: (x: Parameters<ReturnType<typeof compileRewardSpec>>[0]) => RewardScore;
  /** Gold queries that failed or were capped (their tasks can never score as correct). */
  readonly goldProblems = new Map<string, string>();
  private readonly counters: ScorerStats = {
    goldRuns: 0,
    goldHits: 0,
    goldRetimes: 0,
    predictionRuns: 0,
    predictionHits: 0,
  };

  constructor(
    private readonly sql: SqlRunner,
    readonly spec: RewardSpec,
    readonly comparison: CompareMode,
    readonly extractMode: ExtractMode,
    private readonly goldReplies: GoldCache = new Map(),
    /** Step scores for the reward's prm component (set when the spec has one). */
    readonly prm: PrmTextScorer | null = null,
    readonly time: PredictionTime = DEFAULT_PREDICTION_TIME,
  ) {
    this.score = compileRewardSpec(spec);
  }

  /** Counters since this scorer was made. */
  stats(): ScorerStats {
    return { ...this.counters };
  }

  /** The gold result of `task` (run once). */
  gold(task: Task): Promise<Gold> {
    let g = this.golds.get(task.id);
    if (g) {
      this.counters.goldHits++;
      return g;
    }
    let reply = this.goldReplies.get(task.id);
    if (reply) this.counters.goldHits++;
    else {
      this.counters.goldRuns++;
      reply = this.sql.query(task.db_id, task.gold_sql).then((r) => this.retimed(task, r));
      this.goldReplies.set(task.id, reply);
    }
    g = reply.then((reply) => {
      if (!reply.ok) this.goldProblems.set(task.id, `${reply.error.kind}: ${reply.error.message}`);
      else if (reply.result.capped) this.goldProblems.set(task.id, "gold result capped");
      const index = reply.ok && !reply.result.capped ? indexGold(reply.result, this.comparison) : null;
      return { reply, index };
    });
    this.golds.set(task.id, g);
    return g;
  }

  /**
   * The gold's reply with `ms` the faster of two runs when its time sets the limit (over
   * floorMs / factor): one wall-clock run on a loaded machine can be several times too slow
   * (4x seen here), and the limit would grow with it. Same rows either way; only `ms` changes.
   */
  private async retimed(task: Task, r: QueryReply): Promise<QueryReply> {
    if (!r.ok || r.ms * this.time.factor <= this.time.floorMs) return r;
    this.counters.goldRetimes++;
    const again = await this.sql.query(task.db_id, task.gold_sql);
    return again.ok ? { ...r, ms: Math.min(r.ms, again.ms) } : r;
  }

  /** Starts the gold queries of `tasks` now (before their samples exist); errors surface when scored. */
  prefetch(tasks: readonly Task[]): void {
    for (const t of tasks) this.gold(t).catch(() => undefined);
  }

  /** A batch: scores completions, running identical SQL of one database once. */
  batch(): ScoreBatch {
    return new ScoreBatch(this);
  }

  /** Extracts, runs and compares one completion of `task` with the gold result (no reward; no sharing with other calls). */
  async execute(task: Task, completion: string): Promise<Omit<Scored, "reward" | "prm">> {
    const { reward: _, ...x } = await this.batch().score(task, completion, 0);
    return x;
  }

  /** Extracts, runs, compares and scores one completion of `task` (`prm`: its PRM step scores, for the prm component; no sharing with other calls). */
  scoreCompletion(task: Task, completion: string, completionTokens: number, prm?: PrmScored): Promise<Scored> {
    return this.batch().score(task, completion, completionTokens, prm);
  }

  /** Scores samples (in parallel: the SQL runner queues them; identical SQL runs once); with a PRM, its step scores first. */
  async scoreSamples(tasks: readonly Task[], samples: readonly Sample[]): Promise<Scored[]> {
    const prm = this.prm ? await this.prm.score(tasks, samples.map((s) => ({ task: s.prompt, text: s.text }))) : null;
    const b = this.batch();
    return await Promise.all(samples.map((s, i) => b.score(tasks[s.prompt], s.text, s.tokens.length, prm?.[i])));
  }

  /** @internal The prediction's reply, through `memo` when its text is repeatable. */
  run(task: Task, sql: string, goldMs: number | null, memo: Map<string, Promise<QueryReply>>): Promise<QueryReply> {
    const timeoutMs = predictionTimeMs(goldMs, this.time);
    const key = `${task.db_id}\u0000${timeoutMs}\u0000${sql}`;
    const hit = memo.get(key);
    if (hit) {
      this.counters.predictionHits++;
      return hit;
    }
    this.counters.predictionRuns++;
    const p = this.sql.query(task.db_id, sql, { timeoutMs });
    if (isRepeatable(sql)) memo.set(key, p);
    return p;
  }

  /** @internal The outcome and reward of a completion whose SQL produced `reply`. */
  finish(
    completion: string,
    completionTokens: number,
    extraction: Extraction,
    gold: Gold,
    reply: QueryReply | null,
    prm?: PrmScored,
  ): Scored {
    const goldRs = gold.reply.ok ? gold.reply.result : null;
    const withPrm = (x: Scored): Scored => (prm ? { ...x, prm } : x);
    if (reply === null) {
      const reward = this.score({ completion, completionTokens, extraction, outcome: null, prmScores: prm?.scores });
      return withPrm({ extraction, outcome: null, predicted: null, gold: goldRs, correct: false, reward });
    }
    let outcome: ExecOutcome;
    if (!reply.ok) outcome = { correct: false, error: reply.error, ms: reply.ms };
    else if (reply.result.capped) {
      outcome = {
        correct: false,
        error: { kind: "capped", message: "result exceeded the row or byte cap" },
        ms: reply.ms,
        result: reply.result,
      };
    } else {outcome = {
        correct: gold.index !== null && matchesGold(reply.result, gold.index),
        error: null,
        ms: reply.ms,
        result: reply.result,
      };}
    const reward = this.score({ completion, completionTokens, extraction, outcome, prmScores: prm?.scores });
    return withPrm({
      extraction,
      outcome,
      predicted: reply.ok ? reply.result : null,
      gold: goldRs,
      correct: outcome.correct,
      reward,
    });
  }
}

/** Completions scored together (one GRPO step): identical repeatable SQL on one database runs once. */
export class ScoreBatch {
  private readonly memo = new Map<string, Promise<QueryReply>>();

  constructor(private readonly scorer: Scorer) {}

  /** Extracts, runs, compares and scores one completion of `task` (`prm`: its PRM step scores, for the prm component). */
  async score(task: Task, completion: string, completionTokens: number, prm?: PrmScored): Promise<Scored> {
    const extraction = extractSql(completion, { mode: this.scorer.extractMode });
    const gold = await this.scorer.gold(task);
    if (extraction.sql === null) return this.scorer.finish(completion, completionTokens, extraction, gold, null, prm);
    const goldMs = gold.reply.ok ? gold.reply.ms : null;
    const reply = await this.scorer.run(task, extraction.sql, goldMs, this.memo);
    return this.scorer.finish(completion, completionTokens, extraction, gold, reply, prm);
  }
}

/** The inspection record of one scored sample. */
export function sampleRecord(
  at: { phase: MetricPhase; step: number; round?: number },
  task: Task,
  prompt: string,
  sample: Sample,
  scored: Scored,
  advantage: number | null,
  /** The answer's start the prompt wrote (TaskPrompt.answerPrefix); the sample's text begins with it. */
  answerPrefix = "",
): SampleRecord {
  const r: SampleRecord = {
    v: 1,
    phase: at.phase,
    step: at.step,
    taskId: task.id,
    dbId: task.db_id,
    question: task.question,
    ...(task.evidence ? { evidence: task.evidence } : {}),
    sampleIndex: sample.index,
    prompt,
    completion: sample.text,
    reasoning: reasoningOf(sample.text, promptOpensThink(prompt)),
    extraction: scored.extraction,
    predicted: scored.predicted ? displayResult(scored.predicted) : null,
    gold: scored.gold ? displayResult(scored.gold) : null,
    ...(task.gold_sql ? { goldSql: task.gold_sql } : {}),
    error: scored.outcome?.error ?? null,
    correct: scored.correct,
    execMs: scored.outcome?.ms ?? 0,
    reward: scored.reward,
    advantage,
    completionTokens: sample.tokens.length,
    logprob: sample.logprobs.reduce((a, b) => a + b, 0),
    finishReason: sample.finishReason,
  };
  if (answerPrefix) r.answerPrefix = answerPrefix;
  if (at.round !== undefined) r.round = at.round;
  if (task.difficulty !== undefined) r.difficulty = task.difficulty;
  return r;
}
