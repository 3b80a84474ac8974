// Synthetic questions of a second kind: rows of one table chosen by a condition over another
// ("customers with at least 3 orders", "users with no export event after 2025-01-01"), shares and
// negations, and conditions given a made-up name in BIRD-style evidence ("flagged customer refers
// to customers with customer_id IN (SELECT ...)"). They teach the SQL an organisation's concepts
// are written in — subqueries over foreign keys, HAVING, date windows, AVG(CASE ...) — and how to
// use a definition from the evidence, also composed as the demo's questions compose them: a term
// defined by two conditions ANDed ("defined_and"), two terms in one question with both definitions
// in the evidence ("defined_pair"), a term with a plain filter on the rows' own column
// ("defined_filter"). None of the demo's own concepts: the caller drops every candidate whose query
// or definition holds one (corpus.deno.ts), and the names come from a list that shares no word with
// them (tested).
import type { Rng } from "../../core/rng.ts";
import { quoteIdent, quoteLiteral } from "../../core/schema.ts";
import type { Col, Ctx, SyntheticQuestion } from "./synthetic.ts";

/** Made-up names for defined conditions (none is a demo concept's word: synthetic.test.ts). */
export const DEFINED_TERMS = [
  "flagged",
  "tagged",
  "priority",
  "notable",
  "tracked",
  "selected",
  "eligible",
  "featured",
  "marked",
  "key",
  "prime",
  "focus",
  "target",
  "listed",
  "watched",
  "starred",
  "pinned",
  "verified",
  "preferred",
  "qualified",
  "shortlisted",
  "reviewed",
  "highlighted",
  "fast-track",
  "hand-picked",
  "top-tier",
  "core",
] as const;

/** A condition on a table's rows, as SQL over its unqualified columns and in words. */
export interface Condition {
  sql: string;
  says: string;
  /** What it constrains ("own:<column>", "has:<child>.<column>=<value>", ...): two conditions on the same thing are not conjoined. */
  on: string;
}

/**
 * One definition in the form of the demo's concepts (public/demo/concepts.json): "<term> refers to
 * <rows> with <SQL condition>", the term being a name and the row noun ("loyal customer refers to
 * customers with customer_id IN (...)"). Tested against the demo's own definitions and evidence.
 */
export const DEFINITION_FORM = /^(?<term>[^;]+?) refers to (?<rows>[^;]+?) with (?<sql>.+)$/s;
/** How one evidence joins several definitions (the demo's questions about two concepts). */
export const DEFINITION_SEPARATOR = "; ";

/** The definitions of an evidence string, or null when a part is not in DEFINITION_FORM. */
export function parseDefinitions(evidence: string): { term: string; rows: string; sql: string }[] | null {
  const out: { term: string; rows: string; sql: string }[] = [];
  // Split only where the next part is itself a definition: a literal may hold "; ".
  for (const part of evidence.split(/; (?=[^;]*? refers to )/)) {
    const m = DEFINITION_FORM.exec(part);
    if (!m?.groups) return null;
    out.push({ term: m.groups.term, rows: m.groups.rows, sql: m.groups.sql });
  }
  return out;
}

const pickOf = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)];
const lit = (v: string | number) => (typeof v === "number" ? String(v) : quoteLiteral(v));
/** Nouns whose plural is the word itself or not made with -s. */
const SAME =
  /(^| )(people|staff|information|equipment|data|media|personnel|faculty|series|species|aircraft|music|furniture)$/;
/** A noun (the last word of a name) in the plural: "department" -> "departments", "company" -> "companies"; plurals stay. */
export function plural(w: string): string {
  if ((/s$/.test(w) && !/(ss|us|is)$/.test(w)) || SAME.test(w)) return w;
  if (/(ss|us)$/.test(w)) return w + "es";
  if (/is$/.test(w)) return w.slice(0, -2) + "es";
  if (/[^aeiou]y$/.test(w)) return w.slice(0, -1) + "ies";
  if (/(ch|sh|x|z)$/.test(w)) return w + "es";
  return w + "s";
}
/** A plural noun in the singular: "customers" -> "customer", "companies" -> "company", "matches" -> "match"; singulars stay. */
export function one(w: string): string {
  if (SAME.test(w) || /(ss|us|is)$/.test(w)) return w;
  if (/(movie|cookie|calorie|rookie|pie)s$/.test(w)) return w.slice(0, -1);
  if (/[^aeiou]ies$/.test(w)) return w.slice(0, -3) + "y";
  if (/(ss|ch|sh|x|z|bus|status|campus|virus)es$/.test(w)) return w.slice(0, -2);
  return w.replace(/s$/, "");
}
// Constants a definition may carry, drawn widely so that a model has to copy them from the evidence:
// the corpus of the fifth demo model (hash 967359cd) drew thresholds from 2..6, windows from seven fixed
// day counts and dates from a column's sixteen examples, and that model wrote those (">= 5", "'-180 days'")
// where a demo definition said ">= 15" or "'-120 days'" (docs/demo-model.md, "Copying the evidence").
/** A row count for HAVING COUNT(*) >= n: half the time 2..6 as before, else 2..40. */
export function atLeast(rng: Rng): number {
  return rng.next() < 0.5 ? 2 + rng.int(5) : 2 + rng.int(39);
}
/** Days of a date window: half the time a round figure, else any of 1..400. */
export function windowDays(rng: Rng): number {
  return rng.next() < 0.5 ? pickOf(rng, [7, 14, 30, 45, 60, 90, 120, 180, 365]) : 1 + rng.int(400);
}
/** A number to compare a column with: one of its examples, or (half the time) one between its smallest and largest, rounded as they are. */
export function numberNear(rng: Rng, c: Col): number {
  const xs = c.values.filter((v): v is number => typeof v === "number");
  if (!xs.length) return 0;
  if (rng.next() < 0.5 || xs.length < 2) return pickOf(rng, xs);
  const lo = Math.min(...xs), hi = Math.max(...xs);
  const x = lo + rng.next() * (hi - lo);
  return xs.every(Number.isInteger) ? Math.round(x) : Math.round(x * 100) / 100;
}
/** A day (YYYY-MM-DD) for a date column: one of its examples, or (half the time) any day between its first and last. */
export function dayNear(rng: Rng, c: Col): string {
  const ds = c.values.map((v) => String(v).slice(0, 10)).filter((d) =>
    /^\d{4}-\d{2}-\d{2}$/.test(d) && Number.isFinite(Date.parse(d))
  );
  if (!ds.length) return String(c.values[0] ?? "2000-01-01").slice(0, 10);
  if (rng.next() < 0.5 || ds.length < 2) return pickOf(rng, ds);
  const t = ds.map((d) => Date.parse(d));
  const lo = Math.min(...t), hi = Math.max(...t);
  return new Date(lo + Math.floor(rng.next() * ((hi - lo) / 86400000 + 1)) * 86400000).toISOString().slice(0, 10);
}
/** A condition on a date column, as SQL and words: after a day, or inside a window of days up to one. */
function dateCondition(rng: Rng, c: Col): { sql: string; says: string } {
  const d = dayNear(rng, c);
  if (rng.next() < 0.5) return { sql: `${quoteIdent(c.c.name)} > ${lit(d)}`, says: `${c.w} after ${d}` };
  const days = windowDays(rng);
  return {
    sql: `${quoteIdent(c.c.name)} > date(${lit(d)}, '-${days} days')`,
    says: `${c.w} in the ${days} days up to ${d}`,
  };
}

/** The words for a table's rows in the plural (the demo's tables are named so; many of Spider's are singular). */
const rowsOf = (x: { w: string }) => plural(x.w);

/** A condition on `t`'s rows through one of its child tables (or on its own columns). */
export function conditionOn(rng: Rng, s: Ctx, table: string): Condition | null {
  const joins = s.joins.filter((j) => j.parent.name === table);
  const own = s.tables.find((x) => x.t.name === table);
  const kinds = joins.length
    ? ["has", "has", "none", "count", "count_where", "avg", "sum", "has_num", "after", "own", "has_and", "via"]
    : ["own"];
  const kind = pickOf(rng, kinds);
  if (kind === "own") {
    const f = own?.cols.filter((c) => c.kind !== "key" && c.values.length > 0) ?? [];
    if (!f.length) return null;
    const c = pickOf(rng, f);
    const on = `own:${c.c.name}`;
    if (c.kind === "date") {
      // Before or after a day (the demo's senior teacher: hired_on < '2012-01-01').
      const d = dayNear(rng, c), before = rng.next() < 0.5;
      return {
        sql: `${quoteIdent(c.c.name)} ${before ? "<" : ">"} ${lit(d)}`,
        says: `${c.w} ${before ? "before" : "after"} ${d}`,
        on,
      };
    }
    const v = pickOf(rng, c.values);
    if (c.kind === "number" && rng.next() < 0.5) {
      const gt = rng.next() < 0.5, n = numberNear(rng, c);
      return {
        sql: `${quoteIdent(c.c.name)} ${gt ? ">" : "<"} ${lit(n)}`,
        says: `${c.w} ${gt ? "above" : "below"} ${n}`,
        on,
      };
    }
    // One of two values, as the demo's own definitions sometimes are (status IN ('active', 'past_due')).
    const w = c.kind === "text" && c.values.length > 1 && rng.next() < 0.2
      ? pickOf(rng, c.values.filter((x) => x !== v))
      : null;
    if (w !== null) {
      return { sql: `${quoteIdent(c.c.name)} IN (${lit(v)}, ${lit(w)})`, says: `${c.w} ${v} or ${w}`, on };
    }
    return { sql: `${quoteIdent(c.c.name)} = ${lit(v)}`, says: `${c.w} ${v}`, on };
  }
  const j = pickOf(rng, joins);
  const pk = quoteIdent(j.pk), fk = quoteIdent(j.fk), child = quoteIdent(j.child.name);
  const sub = (where: string, tail = "") => `(SELECT ${fk} FROM ${child}${where ? ` WHERE ${where}` : ""}${tail})`;
  const texts = j.childCols.filter((c) => c.kind === "text" && c.values.length > 0);
  const nums = j.childCols.filter((c) => c.kind === "number" && c.values.length > 0);
  const dates = j.childCols.filter((c) => c.kind === "date" && c.values.length > 0);
  const at = `${j.child.name}.${j.fk}`;
  switch (kind) {
    case "has":
    case "none": {
      if (!texts.length) return null;
      const c = pickOf(rng, texts);
      const v = pickOf(rng, c.values);
      const sql = `${pk} ${kind === "has" ? "IN" : "NOT IN"} ${sub(`${quoteIdent(c.c.name)} = ${lit(v)}`)}`;
      return {
        sql,
        says: `${kind === "has" ? "at least one" : "no"} ${one(j.cw)} with ${c.w} ${v}`,
        on: `has:${at}:${c.c.name}=${v}`,
      };
    }
    case "has_and": {
      // Two conditions on the same child row (the demo's churn: a login event in the last 60 days).
      if (!texts.length) return null;
      const c = pickOf(rng, texts);
      const v = pickOf(rng, c.values);
      const first = `${quoteIdent(c.c.name)} = ${lit(v)}`;
      const others = [...texts.filter((x) => x !== c), ...nums, ...dates];
      if (!others.length) return null;
      const d = pickOf(rng, others);
      const u = pickOf(rng, d.values);
      let second: string, says: string;
      if (d.kind === "date") {
        // After a day or inside a window (the demo's churn: a login in the 60 days up to a day).
        ({ sql: second, says } = dateCondition(rng, d));
      } else if (d.kind === "number") {
        const gt = rng.next() < 0.5, n = numberNear(rng, d);
        second = `${quoteIdent(d.c.name)} ${gt ? ">" : "<"} ${lit(n)}`;
        says = `${d.w} ${gt ? "above" : "below"} ${n}`;
      } else {
        second = `${quoteIdent(d.c.name)} = ${lit(u)}`;
        says = `${d.w} ${u}`;
      }
      const neg = rng.next() < 0.25;
      return {
        sql: `${pk} ${neg ? "NOT IN" : "IN"} ${sub(`${first} AND ${second}`)}`,
        says: `${neg ? "no" : "at least one"} ${one(j.cw)} with ${c.w} ${v} and ${says}`,
        on: `has:${at}:${c.c.name}=${v}`,
      };
    }
    case "via": {
      // Through the child's key to another parent (the demo's paying user: a subscription whose plan is paid).
      const up = s.joins.filter((k) => k.child.name === j.child.name && k.parent.name !== table && k.fk !== j.fk);
      if (!up.length) return null;
      const k = pickOf(rng, up);
      const f = k.parentCols.filter((c) => c.kind === "text" && c.values.length > 0);
      if (!f.length) return null;
      const c = pickOf(rng, f);
      const v = pickOf(rng, c.values);
      const inner = `(SELECT ${quoteIdent(k.pk)} FROM ${quoteIdent(k.parent.name)} WHERE ${quoteIdent(c.c.name)} = ${
        lit(v)
      })`;
      // Sometimes with a condition on the child row too (the demo's paying user: an active or past-due subscription on a paid plan).
      const extra = texts.length && rng.next() < 0.4 ? pickOf(rng, texts) : null;
      if (extra) {
        const ev = pickOf(rng, extra.values);
        const ew = extra.values.length > 1 && rng.next() < 0.4
          ? pickOf(rng, extra.values.filter((x) => x !== ev))
          : null;
        const first = ew === null
          ? `${quoteIdent(extra.c.name)} = ${lit(ev)}`
          : `${quoteIdent(extra.c.name)} IN (${lit(ev)}, ${lit(ew)})`;
        return {
          sql: `${pk} IN ${sub(`${first} AND ${quoteIdent(k.fk)} IN ${inner}`)}`,
          says: `a ${one(j.cw)} with ${extra.w} ${ew === null ? ev : `${ev} or ${ew}`} whose ${
            one(k.pw)
          } has ${c.w} ${v}`,
          on: `via:${at}:${k.parent.name}.${c.c.name}=${v}`,
        };
      }
      return {
        sql: `${pk} IN ${sub(`${quoteIdent(k.fk)} IN ${inner}`)}`,
        says: `a ${one(j.cw)} whose ${one(k.pw)} has ${c.w} ${v}`,
        on: `via:${at}:${k.parent.name}.${c.c.name}=${v}`,
      };
    }
    case "count": {
      const n = atLeast(rng);
      return {
        sql: `${pk} IN ${sub("", ` GROUP BY ${fk} HAVING COUNT(*) >= ${n}`)}`,
        says: `at least ${n} ${j.cw}`,
        on: `count:${at}`,
      };
    }
    case "count_where": {
      // At least n child rows of one kind (the demo's full-load student: 3 enrolments in one term).
      if (!texts.length) return null;
      const c = pickOf(rng, texts);
      const v = pickOf(rng, c.values);
      const n = atLeast(rng);
      return {
        sql: `${pk} IN ${sub(`${quoteIdent(c.c.name)} = ${lit(v)}`, ` GROUP BY ${fk} HAVING COUNT(*) >= ${n}`)}`,
        says: `at least ${n} ${j.cw} with ${c.w} ${v}`,
        on: `count:${at}:${c.c.name}=${v}`,
      };
    }
    case "avg": {
      if (!nums.length) return null;
      const c = pickOf(rng, nums);
      const v = numberNear(rng, c);
      return {
        sql: `${pk} IN ${
          sub(`${quoteIdent(c.c.name)} IS NOT NULL`, ` GROUP BY ${fk} HAVING AVG(${quoteIdent(c.c.name)}) >= ${lit(v)}`)
        }`,
        says: `an average ${one(j.cw)} ${c.w} of at least ${v}`,
        on: `avg:${at}:${c.c.name}`,
      };
    }
    case "sum": {
      // A total over the child rows (the demo's big order: at least 6 items over its order lines).
      if (!nums.length) return null;
      const c = pickOf(rng, nums);
      const v = Math.max(1, Math.round(numberNear(rng, c) * (1 + rng.int(4))));
      return {
        sql: `${pk} IN ${sub("", ` GROUP BY ${fk} HAVING SUM(${quoteIdent(c.c.name)}) >= ${v}`)}`,
        says: `a total ${c.w} of at least ${v} over their ${j.cw}`,
        on: `sum:${at}:${c.c.name}`,
      };
    }
    case "has_num": {
      // Some child row above or below a number (the demo's at-risk student: a grade below 45).
      if (!nums.length) return null;
      const c = pickOf(rng, nums);
      const v = numberNear(rng, c), gt = rng.next() < 0.5;
      return {
        sql: `${pk} IN ${sub(`${quoteIdent(c.c.name)} ${gt ? ">" : "<"} ${lit(v)}`)}`,
        says: `a ${one(j.cw)} with ${c.w} ${gt ? "above" : "below"} ${v}`,
        on: `num:${at}:${c.c.name}`,
      };
    }
    case "after": {
      if (!dates.length) return null;
      const c = pickOf(rng, dates);
      const d = dateCondition(rng, c);
      return { sql: `${pk} IN ${sub(d.sql)}`, says: `a ${one(j.cw)} with ${d.says}`, on: `after:${at}:${c.c.name}` };
    }
  }
  return null;
}

/** Up to `k` conditions on `table`'s rows, each on another thing than the others and than `not`'s (null when fewer are found). */
export function distinctConditions(
  rng: Rng,
  s: Ctx,
  table: string,
  k: number,
  not: readonly Condition[] = [],
): Condition[] | null {
  const out: Condition[] = [];
  for (let tries = 0; out.length < k && tries < 8 * k; tries++) {
    const c = conditionOn(rng, s, table);
    if (c && ![...not, ...out].some((x) => x.on === c.on || x.sql === c.sql)) out.push(c);
  }
  return out.length === k ? out : null;
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

/** Columns a condition constrains itself (a second filter on one of them would contradict or repeat it). */
const constrained = (cond: Condition, c: Col) => cond.on.split("|").includes(`own:${c.c.name}`);

/** The questions a condition supports on its table: count, count with a filter, list, per group. */
function framed(
  rng: Rng,
  x: Ctx["tables"][number],
  cond: Condition,
  name: string | null,
): { question: string; sql: string } | null {
  const T = quoteIdent(x.t.name);
  const who = name ? `${name} ${rowsOf(x)}` : `${rowsOf(x)} with ${cond.says}`;
  const frame = pickOf(rng, ["count", "count", "filter", "list", "group"]);
  if (frame === "count") {
    return {
      question: pickOf(rng, [`How many ${who} are there?`, `Count the ${who}.`]),
      sql: `SELECT COUNT(*) FROM ${T} WHERE ${cond.sql}`,
    };
  }
  const f = x.cols.filter((c) => c.kind === "text" && c.values.length > 0 && !constrained(cond, c));
  if (!f.length) return null;
  const c = pickOf(rng, f);
  if (frame === "group") {
    return {
      question: pickOf(rng, [
        `How many ${who} are there per ${c.w}?`,
        `For each ${c.w}, count the ${who}.`,
        `Count the ${who} by ${c.w}.`,
      ]),
      sql: `SELECT ${quoteIdent(c.c.name)}, COUNT(*) FROM ${T} WHERE ${cond.sql} GROUP BY ${quoteIdent(c.c.name)}`,
    };
  }
  const v = pickOf(rng, c.values);
  if (frame === "filter") {
    return {
      question: `How many ${who} have ${c.w} ${v}?`,
      sql: `SELECT COUNT(*) FROM ${T} WHERE ${cond.sql} AND ${quoteIdent(c.c.name)} = ${lit(v)}`,
    };
  }
  const d = shown(rng, x.cols.filter((k) => k !== c)) ?? c;
  return {
    question: `List the ${d.w} of the ${who} with ${c.w} ${v}.`,
    sql: `SELECT ${quoteIdent(d.c.name)} FROM ${T} WHERE ${cond.sql} AND ${quoteIdent(c.c.name)} = ${lit(v)}`,
  };
}

/** A made-up term defined by one condition or the conjunction of several, and its evidence in the demo's form. */
interface Defined {
  term: string;
  cond: Condition;
  evidence: string;
}

function define(x: Ctx["tables"][number], term: string, conds: readonly Condition[]): Defined {
  const sql = conds.map((c) => c.sql).join(" AND ");
  return {
    term,
    cond: { sql, says: conds.map((c) => c.says).join(" and "), on: conds.map((c) => c.on).join("|") },
    // "<term> <row> refers to <rows> with <condition>[ AND <condition>]", as concepts.json writes the demo's.
    evidence: `${term} ${one(rowsOf(x))} refers to ${rowsOf(x)} with ${sql}`,
  };
}

/** Place-like columns, said "from <value>" as the demo says "users from CA". */
const PLACE = /\b(country|nation|city|state|region|location|hometown|place)\b/;

/** A plain filter on one of `x`'s own columns that `cond` does not constrain, as SQL and as the phrase after the row noun. */
function plainFilter(
  rng: Rng,
  x: Ctx["tables"][number],
  cond: Condition,
): { sql: string; phrase: string; col: Col } | null {
  const cols = x.cols.filter((c) => c.kind !== "key" && c.values.length > 0 && !constrained(cond, c));
  if (!cols.length) return null;
  const c = pickOf(rng, cols);
  const v = pickOf(rng, c.values);
  const col = quoteIdent(c.c.name);
  if (c.kind === "date") {
    const y = String(v).slice(0, 4);
    return {
      sql: `strftime('%Y', ${col}) = '${y}'`,
      phrase: pickOf(rng, [`with a ${c.w} in ${y}`, `whose ${c.w} is in ${y}`]),
      col: c,
    };
  }
  const says = [`with ${c.w} ${v}`, `whose ${c.w} is ${v}`];
  // "in the consumer segment": for a column of a few short categories, not names, codes or free text.
  if (
    c.kind === "text" && c.values.length <= 8 && /^[A-Za-z][A-Za-z -]{0,19}$/.test(String(v)) &&
    !/\b(name|names|title|email|login|address|description|details|code|id)\b/.test(c.w)
  ) says.push(`in the ${v} ${c.w}`);
  if (c.kind === "text" && PLACE.test(c.w)) says.push(`from ${v}`, `from ${v}`);
  return { sql: `${col} = ${lit(v)}`, phrase: pickOf(rng, says), col: c };
}

/** A column to list the rows by (a text column or the table's key), in the plural ("names", "user ids"). */
function display(rng: Rng, x: Ctx["tables"][number], not?: Col): { col: string; w: string } | null {
  const pk = x.t.primaryKey.length === 1 ? x.cols.find((c) => c.c.name === x.t.primaryKey[0]) : undefined;
  const xs = [
    ...x.cols.filter((c) => c.kind === "text" && c !== not && !/^(is|has) /.test(c.w)),
    ...(pk && pk !== not ? [pk] : []),
  ];
  if (!xs.length) return null;
  const c = pickOf(rng, xs);
  return { col: quoteIdent(c.c.name), w: plural(c.w) };
}

/** Two different made-up terms. */
function twoTerms(rng: Rng): [string, string] {
  const a = pickOf(rng, DEFINED_TERMS);
  return [a, pickOf(rng, DEFINED_TERMS.filter((t) => t !== a))];
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
    return { question: q.question, gold_sql: q.sql, pattern: "defined", evidence: define(x, term, [cond]).evidence };
  },
  // A term defined by two conditions on the same rows (the demo's activated user: ran a report AND invited someone).
  defined_and(rng, s) {
    const x = pickOf(rng, s.tables);
    const conds = distinctConditions(rng, s, x.t.name, 2);
    if (!conds) return null;
    const d = define(x, pickOf(rng, DEFINED_TERMS), conds);
    const q = framed(rng, x, d.cond, d.term);
    return q ? { question: q.question, gold_sql: q.sql, pattern: "defined_and", evidence: d.evidence } : null;
  },
  // Two terms in one question, both defined in the evidence (either may be a conjunction itself); the SQL ANDs them.
  defined_pair(rng, s) {
    const x = pickOf(rng, s.tables);
    const [t1, t2] = twoTerms(rng);
    const a = distinctConditions(rng, s, x.t.name, rng.next() < 0.25 ? 2 : 1);
    const b = a && distinctConditions(rng, s, x.t.name, rng.next() < 0.25 ? 2 : 1, a);
    if (!a || !b) return null;
    const d1 = define(x, t1, a), d2 = define(x, t2, b);
    const both: Condition = { sql: `${d1.cond.sql} AND ${d2.cond.sql}`, says: "", on: `${d1.cond.on}|${d2.cond.on}` };
    const T = quoteIdent(x.t.name);
    const rows = rowsOf(x);
    const evidence = d1.evidence + DEFINITION_SEPARATOR + d2.evidence;
    const out = (question: string, gold_sql: string): SyntheticQuestion => ({
      question,
      gold_sql,
      pattern: "defined_pair",
      evidence,
    });
    const frame = pickOf(rng, ["count", "count", "list", "filter", "group"]);
    if (frame === "count") {
      return out(
        pickOf(rng, [
          `How many ${t1} ${rows} are also ${t2}?`,
          `Count the ${t1} ${rows} that are ${t2} too.`,
          `How many ${rows} are both ${t1} and ${t2}?`,
          `Count the ${rows} that are both ${t1} and ${t2}.`,
        ]),
        `SELECT COUNT(*) FROM ${T} WHERE ${both.sql}`,
      );
    }
    if (frame === "list") {
      const d = display(rng, x);
      if (!d) return null;
      return out(
        pickOf(rng, [
          `List the ${d.w} of the ${t1} ${rows} that are also ${t2}.`,
          `Which ${rows} are both ${t1} and ${t2}? Give their ${d.w}.`,
          `Give the ${d.w} of all ${rows} that are ${t1} and ${t2}.`,
        ]),
        `SELECT ${d.col} FROM ${T} WHERE ${both.sql}`,
      );
    }
    if (frame === "filter") {
      const f = plainFilter(rng, x, both);
      if (!f) return null;
      return out(
        pickOf(rng, [
          `How many ${t1} ${rows} ${f.phrase} are also ${t2}?`,
          `Count the ${rows} ${f.phrase} that are both ${t1} and ${t2}.`,
        ]),
        `SELECT COUNT(*) FROM ${T} WHERE ${both.sql} AND ${f.sql}`,
      );
    }
    const g = x.cols.filter((c) => c.kind === "text" && !constrained(both, c));
    if (!g.length) return null;
    const gc = pickOf(rng, g), c = quoteIdent(gc.c.name);
    return out(
      pickOf(rng, [
        `For each ${gc.w}, count the ${rows} that are both ${t1} and ${t2}.`,
        `Count the ${t1} ${rows} that are also ${t2} per ${gc.w}.`,
      ]),
      `SELECT ${c}, COUNT(*) FROM ${T} WHERE ${both.sql} GROUP BY ${c}`,
    );
  },
  // A defined term and a plain filter on the rows' own column (the demo's "power users from CA", "active customers in the consumer segment").
  defined_filter(rng, s) {
    const x = pickOf(rng, s.tables);
    const conds = distinctConditions(rng, s, x.t.name, rng.next() < 0.3 ? 2 : 1);
    if (!conds) return null;
    const d = define(x, pickOf(rng, DEFINED_TERMS), conds);
    const f = plainFilter(rng, x, d.cond);
    if (!f) return null;
    const T = quoteIdent(x.t.name);
    const who = `${d.term} ${rowsOf(x)}`;
    const where = `${d.cond.sql} AND ${f.sql}`;
    const out = (question: string, gold_sql: string): SyntheticQuestion => ({
      question,
      gold_sql,
      pattern: "defined_filter",
      evidence: d.evidence,
    });
    if (rng.next() < 0.55) {
      return out(
        pickOf(rng, [
          `How many ${who} are there ${f.phrase}?`,
          `Count the ${who} ${f.phrase}.`,
          `How many ${who} ${f.phrase} are there?`,
          `Give the number of ${who} ${f.phrase}.`,
        ]),
        `SELECT COUNT(*) FROM ${T} WHERE ${where}`,
      );
    }
    const v = display(rng, x, f.col);
    if (!v) return null;
    return out(
      pickOf(rng, [
        `List the ${v.w} of the ${who} ${f.phrase}.`,
        `Give the ${v.w} of all ${who} ${f.phrase}.`,
        `Show the ${v.w} of the ${who} ${f.phrase}.`,
        `Which ${who} ${f.phrase} are there? Give their ${v.w}.`,
      ]),
      `SELECT ${v.col} FROM ${T} WHERE ${where}`,
    );
  },
  share(rng, s) {
    const x = pickOf(rng, s.tables);
    const cond = conditionOn(rng, s, x.t.name);
    if (!cond) return null;
    return {
      question: pickOf(rng, [
        `What fraction of ${rowsOf(x)} have ${cond.says}?`,
        `What share of the ${rowsOf(x)} have ${cond.says}?`,
      ]),
      gold_sql: `SELECT AVG(CASE WHEN ${cond.sql} THEN 1.0 ELSE 0.0 END) FROM ${quoteIdent(x.t.name)}`,
      pattern: "share",
    };
  },
  negation(rng, s) {
    const x = pickOf(rng, s.tables);
    const cond = conditionOn(rng, s, x.t.name);
    if (!cond) return null;
    return {
      question: pickOf(rng, [
        `How many ${rowsOf(x)} do not have ${cond.says}?`,
        `Count the ${rowsOf(x)} without ${cond.says}.`,
      ]),
      gold_sql: `SELECT COUNT(*) FROM ${quoteIdent(x.t.name)} WHERE NOT (${cond.sql})`,
      pattern: "negation",
    };
  },
};
