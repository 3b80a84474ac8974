// Synthetic questions of a second kind: rows of one table chosen by a condition over another
// ("customers with at least 3 orders", "users with no export event after 2025-01-01"), shares and
// negations, and conditions given a made-up name in BIRD-style evidence ("flagged customer refers
// to customers with customer_id IN (SELECT ...)"). They teach the SQL an organisation's concepts
// are written in — subqueries over foreign keys, HAVING, date windows, AVG(CASE ...) — and how to
// use a definition from the evidence, without any of the demo's own concepts: the caller drops every
// candidate whose query or definition holds one (corpus.deno.ts), and the names come from a list
// that shares no word with them (tested).
import type { Rng } from "../../core/rng.ts";
import { quoteIdent, quoteLiteral } from "../../core/schema.ts";
import type { Col, Ctx, SyntheticQuestion } from "./synthetic.ts";

/** Made-up names for defined conditions (none is a demo concept's word: synthetic.test.ts). */
export const DEFINED_TERMS = ["flagged", "tagged", "priority", "notable", "tracked", "selected", "eligible", "featured", "marked", "key", "prime", "focus", "target", "listed", "watched"] as const;

/** A condition on a table's rows, as SQL over its unqualified columns and in words. */
export interface Condition {
  sql: string;
  says: string;
}

const pickOf = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)];
const lit = (v: string | number) => (typeof v === "number" ? String(v) : quoteLiteral(v));
const one = (plural: string) => plural.replace(/s$/, "");

/** A condition on `t`'s rows through one of its child tables (or on its own columns). */
export function conditionOn(rng: Rng, s: Ctx, table: string): Condition | null {
  const joins = s.joins.filter((j) => j.parent.name === table);
  const own = s.tables.find((x) => x.t.name === table);
  const kinds = joins.length ? ["has", "has", "none", "count", "avg", "after", "own"] : ["own"];
  const kind = pickOf(rng, kinds);
  if (kind === "own") {
    const f = own?.cols.filter((c) => (c.kind === "text" || c.kind === "number") && c.values.length > 0) ?? [];
    if (!f.length) return null;
    const c = pickOf(rng, f);
    const v = pickOf(rng, c.values);
    if (c.kind === "number" && rng.next() < 0.5) {
      const gt = rng.next() < 0.5;
      return { sql: `${quoteIdent(c.c.name)} ${gt ? ">" : "<"} ${lit(v)}`, says: `${c.w} ${gt ? "above" : "below"} ${v}` };
    }
    return { sql: `${quoteIdent(c.c.name)} = ${lit(v)}`, says: `${c.w} ${v}` };
  }
  const j = pickOf(rng, joins);
  const pk = quoteIdent(j.pk), fk = quoteIdent(j.fk), child = quoteIdent(j.child.name);
  const sub = (where: string, tail = "") => `(SELECT ${fk} FROM ${child}${where ? ` WHERE ${where}` : ""}${tail})`;
  const texts = j.childCols.filter((c) => c.kind === "text" && c.values.length > 0);
  const nums = j.childCols.filter((c) => c.kind === "number" && c.values.length > 0);
  const dates = j.childCols.filter((c) => c.kind === "date" && c.values.length > 0);
  switch (kind) {
    case "has":
    case "none": {
      if (!texts.length) return null;
      const c = pickOf(rng, texts);
      const v = pickOf(rng, c.values);
      const sql = `${pk} ${kind === "has" ? "IN" : "NOT IN"} ${sub(`${quoteIdent(c.c.name)} = ${lit(v)}`)}`;
      return { sql, says: `${kind === "has" ? "at least one" : "no"} ${one(j.cw)} with ${c.w} ${v}` };
    }
    case "count": {
      const n = 2 + rng.int(5);
      return { sql: `${pk} IN ${sub("", ` GROUP BY ${fk} HAVING COUNT(*) >= ${n}`)}`, says: `at least ${n} ${j.cw}` };
    }
    case "avg": {
      if (!nums.length) return null;
      const c = pickOf(rng, nums);
      const v = pickOf(rng, c.values);
      return { sql: `${pk} IN ${sub(`${quoteIdent(c.c.name)} IS NOT NULL`, ` GROUP BY ${fk} HAVING AVG(${quoteIdent(c.c.name)}) >= ${lit(v)}`)}`, says: `an average ${one(j.cw)} ${c.w} of at least ${v}` };
    }
    case "after": {
      if (!dates.length) return null;
      const c = pickOf(rng, dates);
      const d = String(pickOf(rng, c.values)).slice(0, 10);
      if (rng.next() < 0.5) return { sql: `${pk} IN ${sub(`${quoteIdent(c.c.name)} > ${lit(d)}`)}`, says: `a ${one(j.cw)} with ${c.w} after ${d}` };
      const days = pickOf(rng, [7, 14, 30, 45, 90, 180, 365]);
      return { sql: `${pk} IN ${sub(`${quoteIdent(c.c.name)} > date(${lit(d)}, '-${days} days')`)}`, says: `a ${one(j.cw)} in the ${days} days up to ${d}` };
    }
  }
  return null;
}

type Maker = (rng: Rng, s: Ctx) => SyntheticQuestion | null;

/** A table that has children and something to filter or show. */
function parentTable(rng: Rng, s: Ctx): Ctx["tables"][number] | null {
  const ps = s.tables.filter((x) => s.joins.some((j) => j.parent.name === x.t.name));
  return ps.length ? pickOf(rng, ps) : null;
}

function shown(rng: Rng, cols: readonly Col[]): Col | null {
  const xs = cols.filter((c) => c.kind === "text");
  return xs.length ? pickOf(rng, xs) : null;
}

/** The questions a condition supports on its table: count, count with a filter, list, per group. */
function framed(rng: Rng, x: Ctx["tables"][number], cond: Condition, name: string | null): { question: string; sql: string } | null {
  const T = quoteIdent(x.t.name);
  const who = name ? `${name} ${x.w}` : `${x.w} with ${cond.says}`;
  const frame = pickOf(rng, ["count", "count", "filter", "list", "group"]);
  if (frame === "count") return { question: pickOf(rng, [`How many ${who} are there?`, `Count the ${who}.`]), sql: `SELECT COUNT(*) FROM ${T} WHERE ${cond.sql}` };
  const f = x.cols.filter((c) => c.kind === "text" && c.values.length > 0);
  if (!f.length) return null;
  const c = pickOf(rng, f);
  if (frame === "group") return { question: pickOf(rng, [`How many ${who} are there per ${c.w}?`, `For each ${c.w}, count the ${who}.`]), sql: `SELECT ${quoteIdent(c.c.name)}, COUNT(*) FROM ${T} WHERE ${cond.sql} GROUP BY ${quoteIdent(c.c.name)}` };
  const v = pickOf(rng, c.values);
  if (frame === "filter") return { question: `How many ${who} have ${c.w} ${v}?`, sql: `SELECT COUNT(*) FROM ${T} WHERE ${cond.sql} AND ${quoteIdent(c.c.name)} = ${lit(v)}` };
  const d = shown(rng, x.cols.filter((k) => k !== c)) ?? c;
  return { question: `List the ${d.w} of the ${who} with ${c.w} ${v}.`, sql: `SELECT ${quoteIdent(d.c.name)} FROM ${T} WHERE ${cond.sql} AND ${quoteIdent(c.c.name)} = ${lit(v)}` };
}

/** The second kind's patterns (synthetic.ts draws them with its own). */
export const SUB_MAKERS: Record<string, Maker> = {
  sub_condition(rng, s) {
    const x = parentTable(rng, s);
    const cond = x && conditionOn(rng, s, x.t.name);
    const q = x && cond && framed(rng, x, cond, null);
    return q ? { question: q.question, gold_sql: q.sql, pattern: "sub_condition" } : null;
  },
  defined(rng, s) {
    const x = pickOf(rng, s.tables);
    const cond = conditionOn(rng, s, x.t.name);
    const term = pickOf(rng, DEFINED_TERMS);
    const q = cond && framed(rng, x, cond, term);
    if (!cond || !q) return null;
    // The evidence in the demo concepts' own form: "<term> <row> refers to <rows> with <condition>".
    return { question: q.question, gold_sql: q.sql, pattern: "defined", evidence: `${term} ${one(x.w)} refers to ${x.w} with ${cond.sql}` };
  },
  share(rng, s) {
    const x = pickOf(rng, s.tables);
    const cond = conditionOn(rng, s, x.t.name);
    if (!cond) return null;
    return {
      question: pickOf(rng, [`What fraction of ${x.w} have ${cond.says}?`, `What share of the ${x.w} have ${cond.says}?`]),
      gold_sql: `SELECT AVG(CASE WHEN ${cond.sql} THEN 1.0 ELSE 0.0 END) FROM ${quoteIdent(x.t.name)}`, pattern: "share",
    };
  },
  negation(rng, s) {
    const x = pickOf(rng, s.tables);
    const cond = conditionOn(rng, s, x.t.name);
    if (!cond) return null;
    return { question: pickOf(rng, [`How many ${x.w} do not have ${cond.says}?`, `Count the ${x.w} without ${cond.says}.`]), gold_sql: `SELECT COUNT(*) FROM ${quoteIdent(x.t.name)} WHERE NOT (${cond.sql})`, pattern: "negation" };
  },
};
