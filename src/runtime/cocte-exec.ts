// Partial execution of a chain of CTEs: each step's query (core/cocte.ts stepQueries) runs on the
// task's database through the read-only SQL pool, with the pool's timeout and caps, and its
// result is compared with the gold result under the evaluator's rule (BIRD set semantics by
// default). A malformed chain still scores: whatever steps were split run, the rest is reported.
import { type Chain, splitChain, stepEndOffsets, stepQueries } from "../core/cocte.ts";
import { type CompareMode, type GoldIndex, indexGold, matchesGold } from "../core/compare.ts";
import type { ExecErrorKind, ResultSet } from "../core/types.ts";
import { DISPLAY_ROWS, displayResult, type SampleStep } from "./records.ts";
import type { QueryOptions, SqlPool } from "./sql-pool.ts";

export type { SampleStep };

/** One executed step: a CTE (`name`) or the chain's final statement (`name` null). */
export interface StepOutcome {
  /** Position in `stepQueries(chain)`. */
  index: number;
  /** The CTE's name; null for the final statement. */
  name: string | null;
  /** The query that ran. */
  sql: string;
  /** Null when the step ran to an uncapped result; otherwise why not. */
  error: { kind: ExecErrorKind; message: string } | null;
  /** Its rows (null when it failed). */
  result: ResultSet | null;
  /** Its result equals the gold result under the comparison mode. */
  matchesGold: boolean;
  /** Offset in the answer text just after the step (stepEndOffsets); -1 when unknown. */
  end: number;
  ms: number;
}

/** A chain's execution: its split, each step's outcome, and the gold's own result. */
export interface ChainExecution {
  chain: Chain;
  steps: StepOutcome[];
  /** The gold result, or why it failed (then no step can match). */
  gold: { ok: true; result: ResultSet | null } | { ok: false; error: { kind: ExecErrorKind; message: string } };
  /** The final statement ran and matches the gold: the answer's execution match. */
  correct: boolean;
}

/** Where the gold result comes from: SQL to run, or an already indexed result (G samples share one). */
export type GoldSource = { sql: string } | { index: GoldIndex; result?: ResultSet };

/** Options of `executeChain`. */
export interface ChainExecOptions extends QueryOptions {
  /** Comparison rule; default "set" (BIRD). Ignored when the gold comes indexed (its own mode holds). */
  mode?: CompareMode;
}

/** Runs the gold query once and indexes its result for `executeChain`. */
export async function goldFor(
  pool: Pick<SqlPool, "query">,
  dbId: string,
  sql: string,
  opts: ChainExecOptions = {},
): Promise<ChainExecution["gold"] & { index?: GoldIndex }> {
  const r = await pool.query(dbId, sql, opts);
  if (!r.ok) return { ok: false, error: r.error };
  return { ok: true, result: r.result, index: indexGold(r.result, opts.mode ?? "set") };
}

/**
 * Splits `answer` (model output, or an already split chain) and runs every step query against
 * database `dbId`, comparing each result with the gold's. Rejects only when the database cannot
 * be loaded (DatabaseLoadError), as the evaluator does.
 */
export async function executeChain(
  pool: Pick<SqlPool, "query">,
  dbId: string,
  answer: string | Chain,
  gold: GoldSource,
  opts: ChainExecOptions = {},
): Promise<ChainExecution> {
  const text = typeof answer === "string" ? answer : null;
  const chain = typeof answer === "string" ? splitChain(answer) : answer;
  const queries = stepQueries(chain);
  const ends = text === null ? queries.map(() => -1) : stepEndOffsets(text, chain);
  let goldIndex: GoldIndex | null = null;
  let goldOut: ChainExecution["gold"];
  if ("index" in gold) {
    goldIndex = gold.index;
    goldOut = { ok: true, result: gold.result ?? null };
  } else {
    const g = await goldFor(pool, dbId, gold.sql, opts);
    goldOut = g.ok ? { ok: true, result: g.result } : { ok: false, error: g.error };
    goldIndex = g.index ?? null;
  }
  const steps = await Promise.all(queries.map(async (sql, k): Promise<StepOutcome> => {
    const name = k < chain.steps.length ? chain.steps[k].name : null;
    const r = await pool.query(dbId, sql, opts);
    if (!r.ok) {
      return { index: k, name, sql, error: r.error, result: null, matchesGold: false, end: ends[k] ?? -1, ms: r.ms };
    }
    const match = goldIndex !== null && matchesGold(r.result, goldIndex);
    return { index: k, name, sql, error: null, result: r.result, matchesGold: match, end: ends[k] ?? -1, ms: r.ms };
  }));
  const last = steps.at(-1);
  const correct = chain.final !== null && last !== undefined && last.name === null && last.matchesGold;
  return { chain, steps, gold: goldOut, correct };
}

/** The steps of an execution as sample-record steps (results cut for display). */
export function sampleSteps(exec: ChainExecution, maxRows = DISPLAY_ROWS): SampleStep[] {
  return exec.steps.map((s) => {
    const step = s.name === null ? null : exec.chain.steps[s.index];
    const out: SampleStep = {
      name: s.name,
      sql: step ? step.sql : exec.chain.final ?? "",
      end: s.end,
      error: s.error,
      result: s.result ? displayResult(s.result, maxRows) : null,
      matchesGold: s.matchesGold,
    };
    if (step?.comment) out.comment = step.comment;
    return out;
  });
}
