// Scoring samples: extract the SQL, run it and the gold query (the gold result cached per task),
// compare under the reward cell's mode, and score with the reward spec; plus the sample record.
import { type CompareMode, type GoldIndex, indexGold, matchesGold } from "../../core/compare.ts";
import { type Extraction, type ExtractMode, extractSql } from "../../core/extract.ts";
import type { MetricPhase } from "../../core/metrics.ts";
import { compileRewardSpec, type RewardScore, type RewardSpec } from "../../core/rewards.ts";
import type { ExecOutcome, ResultSet, Task } from "../../core/types.ts";
import type { Sample } from "../../model/sampler.ts";
import type { QueryReply } from "../sql-exec.ts";
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
}

/** Gold query replies by task id (shared by the scorers of one dataset). */
export type GoldCache = Map<string, Promise<QueryReply>>;

/** Runs and scores completions of tasks. */
export class Scorer {
  private readonly golds = new Map<string, Promise<{ reply: QueryReply; index: GoldIndex | null }>>();
  private readonly score: (x: Parameters<ReturnType<typeof compileRewardSpec>>[0]) => RewardScore;
  /** Gold queries that failed or were capped (their tasks can never score as correct). */
  readonly goldProblems = new Map<string, string>();

  constructor(
    private readonly sql: SqlRunner,
    readonly spec: RewardSpec,
    readonly comparison: CompareMode,
    readonly extractMode: ExtractMode,
    private readonly goldReplies: GoldCache = new Map(),
  ) {
    this.score = compileRewardSpec(spec);
  }

  /** The gold result of `task` (run once). */
  gold(task: Task): Promise<{ reply: QueryReply; index: GoldIndex | null }> {
    let g = this.golds.get(task.id);
    if (!g) {
      let reply = this.goldReplies.get(task.id);
      if (!reply) {
        reply = this.sql.query(task.db_id, task.gold_sql);
        this.goldReplies.set(task.id, reply);
      }
      g = reply.then((reply) => {
        if (!reply.ok) this.goldProblems.set(task.id, `${reply.error.kind}: ${reply.error.message}`);
        else if (reply.result.capped) this.goldProblems.set(task.id, "gold result capped");
        const index = reply.ok && !reply.result.capped ? indexGold(reply.result, this.comparison) : null;
        return { reply, index };
      });
      this.golds.set(task.id, g);
    }
    return g;
  }

  /** Extracts, runs, compares and scores one completion of `task`. */
  async scoreCompletion(task: Task, completion: string, completionTokens: number): Promise<Scored> {
    const extraction = extractSql(completion, { mode: this.extractMode });
    const gold = await this.gold(task);
    const goldRs = gold.reply.ok ? gold.reply.result : null;
    if (extraction.sql === null) {
      const reward = this.score({ completion, completionTokens, extraction, outcome: null });
      return { extraction, outcome: null, predicted: null, gold: goldRs, correct: false, reward };
    }
    const reply = await this.sql.query(task.db_id, extraction.sql);
    let outcome: ExecOutcome;
    if (!reply.ok) outcome = { correct: false, error: reply.error, ms: reply.ms };
    else if (reply.result.capped) outcome = { correct: false, error: { kind: "capped", message: "result exceeded the row or byte cap" }, ms: reply.ms, result: reply.result };
    else outcome = { correct: gold.index !== null && matchesGold(reply.result, gold.index), error: null, ms: reply.ms, result: reply.result };
    const reward = this.score({ completion, completionTokens, extraction, outcome });
    return { extraction, outcome, predicted: reply.ok ? reply.result : null, gold: goldRs, correct: outcome.correct, reward };
  }

  /** Scores samples (in parallel: the SQL runner queues them). */
  scoreSamples(tasks: readonly Task[], samples: readonly Sample[]): Promise<Scored[]> {
    return Promise.all(samples.map((s) => this.scoreCompletion(tasks[s.prompt], s.text, s.tokens.length)));
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
    error: scored.outcome?.error ?? null,
    correct: scored.correct,
    execMs: scored.outcome?.ms ?? 0,
    reward: scored.reward,
    advantage,
    completionTokens: sample.tokens.length,
    logprob: sample.logprobs.reduce((a, b) => a + b, 0),
    finishReason: sample.finishReason,
  };
  if (at.round !== undefined) r.round = at.round;
  if (task.difficulty !== undefined) r.difficulty = task.difficulty;
  return r;
}
