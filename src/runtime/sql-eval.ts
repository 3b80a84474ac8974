// Execution match of a predicted query against a task's gold query, through the SQL pool.
// Gold results are cached per task (indexed once for comparison), so G samples of one question
// run the gold query once.
import { type CompareMode, type GoldIndex, indexGold, matchesGold } from "../core/compare.ts";
import type { ExecErrorKind, ExecOutcome, Task } from "../core/types.ts";
import type { SqlPool } from "./sql-pool.ts";

/** A scored prediction, or a gold query that could not be run (left out of any score). */
export type Scored =
  | { status: "scored"; outcome: ExecOutcome }
  | { status: "gold-failed"; error: { kind: ExecErrorKind; message: string } };

type GoldEntry = { ok: true; index: GoldIndex } | { ok: false; error: { kind: ExecErrorKind; message: string } };

/** Scores predictions by execution against gold results under one comparison mode. */
export class SqlEvaluator {
  private readonly gold = new Map<string, Promise<GoldEntry>>();

  constructor(
    private readonly pool: SqlPool,
    readonly mode: CompareMode = "set",
    /** Gold results kept (least recently used out). */
    private readonly maxCached = 50_000,
  ) {}

  /** Scores `predSql` for `task`; rejects only when the task's database cannot be loaded. */
  async score(task: Task, predSql: string | undefined): Promise<Scored> {
    const gold = await this.goldOf(task);
    if (!gold.ok) return { status: "gold-failed", error: gold.error };
    if (predSql === undefined || predSql.trim() === "") {
      return {
        status: "scored",
        outcome: { correct: false, error: { kind: "empty", message: "no prediction" }, ms: 0 },
      };
    }
    const r = await this.pool.query(task.db_id, predSql);
    if (!r.ok) return { status: "scored", outcome: { correct: false, error: r.error, ms: r.ms } };
    return {
      status: "scored",
      outcome: { correct: matchesGold(r.result, gold.index), error: null, ms: r.ms, result: r.result },
    };
  }

  /** The task's gold result, run once and cached; a rejected load is not cached. */
  private goldOf(task: Task): Promise<GoldEntry> {
    const key = `${task.id}\u0000${task.db_id}\u0000${task.gold_sql}`;
    let p = this.gold.get(key);
    if (p) {
      this.gold.delete(key);
      this.gold.set(key, p);
      return p;
    }
    p = this.pool.query(task.db_id, task.gold_sql).then((r): GoldEntry =>
      r.ok ? { ok: true, index: indexGold(r.result, this.mode) } : { ok: false, error: r.error }
    );
    p.catch(() => this.gold.delete(key));
    this.gold.set(key, p);
    if (this.gold.size > this.maxCached) {
      const oldest = this.gold.keys().next();
      if (!oldest.done) this.gold.delete(oldest.value);
    }
    return p;
  }
}
