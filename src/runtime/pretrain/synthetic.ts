// Synthetic questions for the pretraining corpus: simple text-to-SQL pairs made from a database's
// own schema and values ("How many customers have segment vip?" -> SELECT COUNT(*) FROM customers
// WHERE segment = 'vip'), in several phrasings each. They teach what the few hundred gold questions
// of the demo cannot: reading the table and column from the schema and copying the question's
// value into the query, on many databases. Correct by construction (the SQL is built with the
// question); pure (the values come in through the schema's examples, read by corpus.deno.ts).
//
// Decontamination: `maskSql` replaces literals by "?" and normalises case and spaces; the caller
// drops every synthetic question whose masked SQL equals an evaluation question's, so no
// evaluation query appears in the corpus even with other values.
import type { Rng } from "../../core/rng.ts";
import { type ColumnInfo, type DbSchema, quoteIdent, quoteLiteral, type TableInfo } from "../../core/schema.ts";
import { SUB_MAKERS } from "./synthetic-sub.ts";

/** One synthetic question with its gold SQL and the pattern that made it. */
export interface SyntheticQuestion {
  question: string;
  gold_sql: string;
  pattern: string;
  /** The made-up definitions the question relies on (synthetic-sub.ts's EVIDENCE_PATTERNS), "; "-separated. */
  evidence?: string;
}

/** A query with its literals replaced by "?", keywords and identifiers lower-cased, spaces collapsed. */
export function maskSql(sql: string): string {
  return sql
    .replace(/'(?:[^']|'')*'/g, "?")
    .replace(/"(?:[^"]|"")*"/g, (m) => m.toLowerCase())
    .replace(/\b\d+(?:\.\d+)?\b/g, "?")
    .replace(/\s+/g, " ")
    .replace(/\s*([(),=<>])\s*/g, "$1")
    .replace(/;\s*$/, "")
    .trim()
    .toLowerCase();
}

/** Words for a table or column name: its natural name when known, else the name with _ and camelCase split. */
export function words(name: string, natural?: string): string {
  const base = natural?.trim() || name;
  return base.replace(/([a-z])([A-Z])/g, "$1 $2").replace(/[_\s]+/g, " ").trim().toLowerCase();
}

type Kind = "key" | "text" | "number" | "date";

function kindOf(c: ColumnInfo, t: TableInfo): Kind {
  const fk = t.foreignKeys.some((f) => f.column === c.name);
  if (c.primaryKey || fk || /(^|_)id$/i.test(c.name) || /[a-z]Id$/.test(c.name)) return "key";
  const ex = c.examples;
  if (ex.length && ex.every((v) => typeof v === "number")) return "number";
  if (ex.length && ex.every((v) => typeof v === "string" && /^\d{4}-\d{2}-\d{2}/.test(v))) return "date";
  return "text";
}

/** Values usable as literals: no truncated text, no quotes or newlines that would make odd questions. */
function usable(c: ColumnInfo): (string | number)[] {
  return c.examples.filter((v) =>
    typeof v === "number"
      ? Number.isFinite(v)
      : v.length > 0 && v.length <= 40 && !v.endsWith("…") && !/["\n\r]/.test(v)
  );
}

function lit(v: string | number): string {
  return typeof v === "number" ? String(v) : quoteLiteral(v);
}

/** A value as the question says it: text as is, numbers as written. */
function say(v: string | number): string {
  return String(v);
}

/** A column as the patterns see it: its kind, usable values and words. */
export interface Col {
  t: TableInfo;
  c: ColumnInfo;
  kind: Kind;
  values: (string | number)[];
  w: string;
}

function pickOf<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)];
}

type Maker = (rng: Rng, s: Ctx) => SyntheticQuestion | null;

/** A schema as the patterns see it: tables with their columns, and foreign-key joins. */
export interface Ctx {
  tables: { t: TableInfo; w: string; cols: Col[] }[];
  joins: {
    child: TableInfo;
    cw: string;
    fk: string;
    parent: TableInfo;
    pw: string;
    pk: string;
    parentCols: Col[];
    childCols: Col[];
  }[];
}

const AGG: { fn: string; say: string[] }[] = [
  { fn: "AVG", say: ["average", "mean"] },
  { fn: "MAX", say: ["maximum", "highest"] },
  { fn: "MIN", say: ["minimum", "lowest"] },
  { fn: "SUM", say: ["total"] },
];

function filterCol(rng: Rng, cols: Col[]): Col | null {
  const xs = cols.filter((c) => (c.kind === "text" || c.kind === "number") && c.values.length > 0);
  return xs.length ? pickOf(rng, xs) : null;
}

function shownCol(rng: Rng, cols: Col[], not?: Col): Col | null {
  const xs = cols.filter((c) => c !== not && c.kind !== "key");
  return xs.length ? pickOf(rng, xs) : null;
}

function id(c: Col, alias?: string): string {
  return `${alias ? alias + "." : ""}${quoteIdent(c.c.name)}`;
}

const MAKERS: Record<string, Maker> = {
  count_all(rng, s) {
    const { t, w } = pickOf(rng, s.tables);
    const q = pickOf(rng, [`How many ${w} are there?`, `Count the ${w}.`, `What is the number of ${w}?`]);
    return { question: q, gold_sql: `SELECT COUNT(*) FROM ${quoteIdent(t.name)}`, pattern: "count_all" };
  },
  count_where(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const f = filterCol(rng, cols);
    if (!f) return null;
    const v = pickOf(rng, f.values);
    const q = pickOf(rng, [
      `How many ${w} have ${f.w} ${say(v)}?`,
      `Count the ${w} whose ${f.w} is ${say(v)}.`,
      `Number of ${w} with ${f.w} equal to ${say(v)}?`,
    ]);
    return {
      question: q,
      gold_sql: `SELECT COUNT(*) FROM ${quoteIdent(t.name)} WHERE ${id(f)} = ${lit(v)}`,
      pattern: "count_where",
    };
  },
  list_where(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const f = filterCol(rng, cols);
    const c = f && shownCol(rng, cols, f);
    if (!f || !c) return null;
    const v = pickOf(rng, f.values);
    const q = pickOf(rng, [
      `List the ${c.w} of ${w} whose ${f.w} is ${say(v)}.`,
      `What are the ${c.w} of the ${w} with ${f.w} ${say(v)}?`,
      `Give the ${c.w} of every ${w} where ${f.w} is ${say(v)}.`,
    ]);
    return {
      question: q,
      gold_sql: `SELECT ${id(c)} FROM ${quoteIdent(t.name)} WHERE ${id(f)} = ${lit(v)}`,
      pattern: "list_where",
    };
  },
  group_count(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const g = cols.filter((c) => c.kind === "text");
    if (!g.length) return null;
    const c = pickOf(rng, g);
    const q = pickOf(rng, [
      `How many ${w} are there for each ${c.w}?`,
      `Count the ${w} per ${c.w}.`,
      `Give each ${c.w} and its number of ${w}.`,
    ]);
    return {
      question: q,
      gold_sql: `SELECT ${id(c)}, COUNT(*) FROM ${quoteIdent(t.name)} GROUP BY ${id(c)}`,
      pattern: "group_count",
    };
  },
  most_common(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const g = cols.filter((c) => c.kind === "text");
    if (!g.length) return null;
    const c = pickOf(rng, g);
    const q = pickOf(rng, [`Which ${c.w} is the most common among ${w}?`, `What ${c.w} do the most ${w} have?`]);
    return {
      question: q,
      gold_sql: `SELECT ${id(c)} FROM ${quoteIdent(t.name)} GROUP BY ${id(c)} ORDER BY COUNT(*) DESC LIMIT 1`,
      pattern: "most_common",
    };
  },
  aggregate(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const n = cols.filter((c) => c.kind === "number");
    if (!n.length) return null;
    const c = pickOf(rng, n);
    const a = pickOf(rng, AGG);
    const q = pickOf(rng, [
      `What is the ${pickOf(rng, a.say)} ${c.w} of ${w}?`,
      `Give the ${pickOf(rng, a.say)} ${c.w} over all ${w}.`,
    ]);
    return { question: q, gold_sql: `SELECT ${a.fn}(${id(c)}) FROM ${quoteIdent(t.name)}`, pattern: "aggregate" };
  },
  aggregate_where(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const n = cols.filter((c) => c.kind === "number");
    const f = filterCol(rng, cols.filter((c) => c.kind === "text"));
    if (!n.length || !f) return null;
    const c = pickOf(rng, n);
    const a = pickOf(rng, AGG);
    const v = pickOf(rng, f.values);
    const q = pickOf(rng, [
      `What is the ${pickOf(rng, a.say)} ${c.w} of ${w} whose ${f.w} is ${say(v)}?`,
      `For ${w} with ${f.w} ${say(v)}, what is the ${pickOf(rng, a.say)} ${c.w}?`,
    ]);
    return {
      question: q,
      gold_sql: `SELECT ${a.fn}(${id(c)}) FROM ${quoteIdent(t.name)} WHERE ${id(f)} = ${lit(v)}`,
      pattern: "aggregate_where",
    };
  },
  compare(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const n = cols.filter((c) => c.kind === "number" && c.values.length > 0);
    if (!n.length) return null;
    const f = pickOf(rng, n);
    const c = shownCol(rng, cols, f);
    if (!c) return null;
    const v = pickOf(rng, f.values);
    const gt = rng.next() < 0.5;
    const q = gt
      ? pickOf(rng, [
        `List the ${c.w} of ${w} with ${f.w} greater than ${say(v)}.`,
        `Which ${w} have ${f.w} above ${say(v)}? Give their ${c.w}.`,
      ])
      : pickOf(rng, [
        `List the ${c.w} of ${w} with ${f.w} less than ${say(v)}.`,
        `Which ${w} have ${f.w} below ${say(v)}? Give their ${c.w}.`,
      ]);
    return {
      question: q,
      gold_sql: `SELECT ${id(c)} FROM ${quoteIdent(t.name)} WHERE ${id(f)} ${gt ? ">" : "<"} ${lit(v)}`,
      pattern: "compare",
    };
  },
  top(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const n = cols.filter((c) => c.kind === "number");
    if (!n.length) return null;
    const f = pickOf(rng, n);
    const c = shownCol(rng, cols, f);
    if (!c) return null;
    const desc = rng.next() < 0.7;
    const k = pickOf(rng, [1, 1, 3, 5]);
    const most = desc ? "highest" : "lowest";
    const q = k === 1
      ? pickOf(rng, [
        `What is the ${c.w} of the ${w} with the ${most} ${f.w}?`,
        `Which ${w} has the ${most} ${f.w}? Give its ${c.w}.`,
      ])
      : pickOf(rng, [
        `List the ${c.w} of the ${k} ${w} with the ${most} ${f.w}.`,
        `Name the top ${k} ${w} by ${desc ? "" : "lowest "}${f.w}, by ${c.w}.`,
      ]);
    return {
      question: q,
      gold_sql: `SELECT ${id(c)} FROM ${quoteIdent(t.name)} ORDER BY ${id(f)} ${desc ? "DESC" : "ASC"} LIMIT ${k}`,
      pattern: "top",
    };
  },
  distinct(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const g = cols.filter((c) => c.kind === "text");
    if (!g.length) return null;
    const c = pickOf(rng, g);
    const q = pickOf(rng, [
      `List the distinct ${c.w} values of ${w}.`,
      `What different ${c.w} values do the ${w} have?`,
    ]);
    return { question: q, gold_sql: `SELECT DISTINCT ${id(c)} FROM ${quoteIdent(t.name)}`, pattern: "distinct" };
  },
  year(rng, s) {
    const { t, w, cols } = pickOf(rng, s.tables);
    const d = cols.filter((c) => c.kind === "date" && c.values.length > 0);
    if (!d.length) return null;
    const c = pickOf(rng, d);
    const y = String(pickOf(rng, c.values)).slice(0, 4);
    const q = pickOf(rng, [`How many ${w} have a ${c.w} in ${y}?`, `Count the ${w} whose ${c.w} falls in ${y}.`]);
    return {
      question: q,
      gold_sql: `SELECT COUNT(*) FROM ${quoteIdent(t.name)} WHERE strftime('%Y', ${id(c)}) = '${y}'`,
      pattern: "year",
    };
  },
  join_count(rng, s) {
    if (!s.joins.length) return null;
    const j = pickOf(rng, s.joins);
    const f = filterCol(rng, j.parentCols.filter((c) => c.kind === "text"));
    if (!f) return null;
    const v = pickOf(rng, f.values);
    const q = pickOf(rng, [
      `How many ${j.cw} belong to ${j.pw} whose ${f.w} is ${say(v)}?`,
      `Count the ${j.cw} of ${j.pw} with ${f.w} ${say(v)}.`,
    ]);
    return {
      question: q,
      gold_sql: `SELECT COUNT(*) FROM ${quoteIdent(j.child.name)} AS a JOIN ${quoteIdent(j.parent.name)} AS b ON a.${
        quoteIdent(j.fk)
      } = b.${quoteIdent(j.pk)} WHERE b.${quoteIdent(f.c.name)} = ${lit(v)}`,
      pattern: "join_count",
    };
  },
  join_list(rng, s) {
    if (!s.joins.length) return null;
    const j = pickOf(rng, s.joins);
    const f = filterCol(rng, j.parentCols.filter((c) => c.kind === "text"));
    const c = shownCol(rng, j.childCols);
    if (!f || !c) return null;
    const v = pickOf(rng, f.values);
    const q = pickOf(rng, [
      `List the ${c.w} of ${j.cw} whose ${j.pw.replace(/s$/, "")} has ${f.w} ${say(v)}.`,
      `Give the ${c.w} of the ${j.cw} linked to ${j.pw} with ${f.w} ${say(v)}.`,
    ]);
    return {
      question: q,
      gold_sql: `SELECT a.${quoteIdent(c.c.name)} FROM ${quoteIdent(j.child.name)} AS a JOIN ${
        quoteIdent(j.parent.name)
      } AS b ON a.${quoteIdent(j.fk)} = b.${quoteIdent(j.pk)} WHERE b.${quoteIdent(f.c.name)} = ${lit(v)}`,
      pattern: "join_list",
    };
  },
  group_join(rng, s) {
    if (!s.joins.length) return null;
    const j = pickOf(rng, s.joins);
    const c = shownCol(rng, j.parentCols.filter((x) => x.kind === "text"));
    if (!c) return null;
    // Per parent row (grouped by its key), or per value of the parent's column (grouped by it).
    const perRow = rng.next() < 0.5;
    const one = j.pw.replace(/s$/, "");
    const q = perRow
      ? `How many ${j.cw} does each ${one} have? Give the ${c.w} and the count.`
      : `Count the ${j.cw} per ${one} ${c.w}.`;
    const by = perRow ? `b.${quoteIdent(j.pk)}` : `b.${quoteIdent(c.c.name)}`;
    return {
      question: q,
      gold_sql: `SELECT b.${quoteIdent(c.c.name)}, COUNT(*) FROM ${quoteIdent(j.child.name)} AS a JOIN ${
        quoteIdent(j.parent.name)
      } AS b ON a.${quoteIdent(j.fk)} = b.${quoteIdent(j.pk)} GROUP BY ${by}`,
      pattern: "group_join",
    };
  },
};

/** The first kind's patterns (the corpus of the shipped model used these alone). */
export const BASIC_PATTERNS = Object.keys(MAKERS).sort();

/** Every pattern, in a fixed order (the seeded draw indexes this list). */
export const PATTERNS = [...BASIC_PATTERNS, ...Object.keys(SUB_MAKERS).sort()];

/** The patterns whose questions carry evidence (made-up terms defined BIRD-style), in PATTERNS' order. */
export const EVIDENCE_PATTERNS = PATTERNS.filter((p) => p.startsWith("defined"));

const ALL_MAKERS: Record<string, Maker> = { ...MAKERS, ...SUB_MAKERS };

function context(schema: DbSchema): Ctx {
  const tables = schema.tables.filter((t) => (t.rowCount ?? 1) > 0).map((t) => {
    const cols: Col[] = t.columns.map((c) => ({
      t,
      c,
      kind: kindOf(c, t),
      values: usable(c),
      w: words(c.name, c.naturalName),
    }));
    return { t, w: words(t.name, t.naturalName), cols };
  });
  const byName = new Map(tables.map((x) => [x.t.name.toLowerCase(), x]));
  const joins: Ctx["joins"] = [];
  for (const x of tables) {
    for (const f of x.t.foreignKeys) {
      const p = byName.get(f.refTable.toLowerCase());
      const pk = f.refColumn ?? p?.t.primaryKey[0];
      if (!p || !pk || p === x) continue;
      joins.push({
        child: x.t,
        cw: x.w,
        fk: f.column,
        parent: p.t,
        pw: p.w,
        pk,
        parentCols: p.cols,
        childCols: x.cols,
      });
    }
  }
  return { tables, joins };
}

/**
 * Up to `n` distinct synthetic questions on `schema` (whose column examples are the values drawn
 * from), patterns (default: all) drawn uniformly with `rng`; `keep` rejects a candidate (decontamination).
 * With `definedShare` F, the evidence patterns (EVIDENCE_PATTERNS among `patterns`) make up a share
 * F of the questions returned (each next question comes from them while fewer than F of those so far
 * do), each family's patterns drawn uniformly; a family that keeps failing on the schema (n * 10
 * misses) is given up. Fewer than `n` come back when the schema offers fewer distinct queries.
 */
export function syntheticQuestions(
  schema: DbSchema,
  n: number,
  rng: Rng,
  keep: (q: SyntheticQuestion) => boolean = () => true,
  patterns: readonly string[] = PATTERNS,
  definedShare?: number,
): SyntheticQuestion[] {
  const ctx = context(schema);
  if (!ctx.tables.length || n <= 0) return [];
  const out: SyntheticQuestion[] = [];
  const seen = new Set<string>();
  const ev = patterns.filter((p) => EVIDENCE_PATTERNS.includes(p));
  const rest = patterns.filter((p) => !EVIDENCE_PATTERNS.includes(p));
  const share = definedShare ?? 0;
  const split = definedShare !== undefined && ev.length > 0 && rest.length > 0;
  const misses = [0, 0];
  let fromEv = 0;
  for (let tries = 0; out.length < n && tries < n * 30; tries++) {
    let fam = -1, pattern: string;
    if (!split) pattern = patterns[rng.int(patterns.length)];
    else {
      const open = misses.map((m) => m < n * 10);
      if (!open[0] && !open[1]) break;
      fam = !open[1] || (open[0] && fromEv < share * (out.length + 1)) ? 0 : 1;
      const from = fam === 0 ? ev : rest;
      pattern = from[rng.int(from.length)];
    }
    const q = ALL_MAKERS[pattern](rng, ctx);
    const key = q ? q.question + "\u0000" + q.gold_sql : "";
    if (!q || seen.has(key) || !keep(q)) {
      if (fam >= 0) misses[fam]++;
      continue;
    }
    seen.add(key);
    out.push(q);
    if (fam === 0) fromEv++;
  }
  return out;
}
