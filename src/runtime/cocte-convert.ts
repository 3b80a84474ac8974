// Gold SQL to a verified Chain of CTEs: the rewriter's candidates (core/cocte-rewrite.ts), fullest
// first, are run on the task's database; the first whose every step query runs and whose final
// query returns the gold's rows (BIRD set semantics) is kept. The database's schema (read once per
// database through the pool) lets the rewriter resolve unqualified column names.
import { type Chain, type CteStep, splitChain, stepQueries } from "../core/cocte.ts";
import { chainCandidates } from "../core/cocte-rewrite.ts";
import { indexGold, matchesGold } from "../core/compare.ts";
import type { QueryOptions, SqlPool } from "./sql-pool.ts";

/** A verified conversion, or why there is none. */
export type Conversion =
  | {
    ok: true;
    cocte: string;
    steps: CteStep[];
    final: string;
    /** The runnable query of each step (stepQueries), the whole chain last. */
    queries: string[];
    /** Which candidate held (0: the fullest rewrite; more: a fallback that leaves rewrites out). */
    candidate: number;
    /** The chain's rows also come in the gold's order (list equality). */
    ordered: boolean;
  }
  | { ok: false; reason: string };

const SCHEMA_SQL =
  "SELECT m.name, p.name FROM sqlite_master AS m JOIN pragma_table_info(m.name) AS p WHERE m.type IN ('table', 'view')";

/** Converts gold queries of many databases, caching each database's schema. */
export class GoldConverter {
  private readonly schemas = new Map<string, Promise<Record<string, string[]> | undefined>>();

  constructor(
    private readonly pool: Pick<SqlPool, "query">,
    private readonly opts: QueryOptions & { maxCandidates?: number } = {},
  ) {}

  /** Column names per table of a database (undefined when they cannot be read). */
  schemaOf(dbId: string): Promise<Record<string, string[]> | undefined> {
    let p = this.schemas.get(dbId);
    if (!p) {
      p = this.pool.query(dbId, SCHEMA_SQL, this.opts).then((r) => {
        if (!r.ok) return undefined;
        const out: Record<string, string[]> = {};
        for (const [t, c] of r.result.rows) if (typeof t === "string" && typeof c === "string") (out[t] ??= []).push(c);
        return out;
      });
      p.catch(() => this.schemas.delete(dbId));
      this.schemas.set(dbId, p);
    }
    return p;
  }

  /** The gold as a verified chain; rejects only when the database cannot be loaded. */
  async convert(dbId: string, gold: string): Promise<Conversion> {
    const g = await this.pool.query(dbId, gold, this.opts);
    if (!g.ok) return { ok: false, reason: `gold failed: ${g.error.kind}: ${g.error.message}` };
    const setIndex = indexGold(g.result, "set");
    const orderedIndex = indexGold(g.result, "ordered");
    const schema = await this.schemaOf(dbId);
    const candidates = chainCandidates(gold, schema ? { schema } : {}).slice(0, this.opts.maxCandidates ?? 9);
    let firstReason = "";
    for (let c = 0; c < candidates.length; c++) {
      const cand = candidates[c];
      if (!cand.ok) return { ok: false, reason: `no rewrite: ${cand.reason}` };
      const reason = await this.check(dbId, cand.cocte, cand.steps, cand.final, setIndex);
      if (reason === null) {
        const chain: Chain = { steps: cand.steps, final: cand.final, problems: [] };
        const queries = stepQueries(chain);
        const last = await this.pool.query(dbId, queries[queries.length - 1], this.opts);
        const ordered = last.ok && matchesGold(last.result, orderedIndex);
        return { ok: true, cocte: cand.cocte, steps: cand.steps, final: cand.final, queries, candidate: c, ordered };
      }
      firstReason ||= reason;
    }
    return { ok: false, reason: firstReason };
  }

  /** Null when the chain splits back into its steps, every step runs, and the whole returns the gold's rows; else why not. */
  private async check(
    dbId: string,
    cocte: string,
    steps: CteStep[],
    final: string,
    gold: ReturnType<typeof indexGold>,
  ): Promise<string | null> {
    const back = splitChain(cocte);
    if (
      back.final !== final || back.steps.length !== steps.length ||
      back.steps.some((s, k) => s.name !== steps[k].name || s.sql !== steps[k].sql)
    ) {
      return "the chain does not split back into its steps";
    }
    const queries = stepQueries({ steps, final, problems: [] });
    const replies = await Promise.all(queries.map((q) => this.pool.query(dbId, q, this.opts)));
    for (let k = 0; k < replies.length; k++) {
      const r = replies[k];
      const what = k < steps.length ? `step ${k + 1} (${steps[k].name})` : "final";
      if (!r.ok) return `${what} failed: ${r.error.kind}: ${r.error.message}`;
    }
    const whole = replies[replies.length - 1];
    if (whole.ok && !matchesGold(whole.result, gold)) return "different rows from the gold";
    return null;
  }
}
