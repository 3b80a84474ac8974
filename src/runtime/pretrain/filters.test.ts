// Filter phrasings (issue #49): each form is offered for a column it suits and never for one it does not, every
// phrase keeps the value the SQL quotes as quoted, and rewording never changes the SQL.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { ColumnInfo, TableInfo } from "../../core/schema.ts";
import { dateVerb, filteredRows, sayFilter, scopeOf } from "./filters.ts";
import { SUB_MAKERS } from "./synthetic-sub.ts";
import { type Col, type Ctx, syntheticQuestions } from "./synthetic.ts";
import { schemaOfFile, SYNTHETIC_VALUES } from "./corpus.deno.ts";
import { vary } from "./surface.ts";

const T: TableInfo = {
  name: "customers",
  columns: [],
  primaryKey: ["customer_id"],
  foreignKeys: [],
} as unknown as TableInfo;
function col(name: string, kind: Col["kind"], values: (string | number)[], w = name.replace(/_/g, " ")): Col {
  return { t: T, c: { name } as ColumnInfo, kind, values, w };
}
const segment = col("segment", "text", ["vip", "business", "consumer"]);
const country = col("country", "text", ["DE", "PL", "New York"]);
const email = col("email", "text", ["a@x.io", "b@y.io"]);
const name = col("name", "text", ["Priya Patel", "Omar"]);
const sex = col("sex", "text", ["M", "F"]);
const flag = col("is_member", "text", ["yes", "no"]);
const status = col("status", "text", ["active", "past_due"]); // not place-like, has "_": no modifier
const age = col("age", "number", [31, 42]);
const signup = col("signup_date", "date", ["2025-03-01", "2024-11-20"]);
const hired = col("hired_on", "date", ["2011-08-01"]);
const firstOrder = col("first_order_date", "date", ["2025-01-01"]);
const shipped = col("ship_date", "date", ["2025-01-01"]);

Deno.test("filters: a short category is said before the noun and as 'in the <v> <col>'; names, codes, flags, numbers and places never", () => {
  const f = sayFilter("customers", [segment], segment, "vip");
  assertEquals(f.sql, `segment = 'vip'`);
  assert(f.pre.includes("vip") && f.post.includes("in the vip segment") && f.scope.includes("In the vip segment"));
  for (const p of ["with a segment of vip", "whose segment is vip", "where segment = vip", "having segment vip"]) {
    assert(f.post.includes(p), p);
  }
  for (
    const [c, v] of [[email, "a@x.io"], [name, "Omar"], [sex, "M"], [flag, "yes"], [status, "past_due"], [
      age,
      31,
    ]] as const
  ) {
    const g = sayFilter("customers", [c], c, v);
    assertEquals(g.pre, [], `${c.w} = ${v}: nothing before the noun`);
    assert(!g.post.some((p) => p.startsWith("in the ")), `${c.w}: no 'in the <v> <col>'`);
  }
  assertEquals(sayFilter("customers", [country], country, "DE").post.includes("in the DE country"), false);
});

Deno.test("filters: place-like columns get 'in', 'located in', 'based in', 'that are in', 'from', '<v>-based'; other columns none", () => {
  const f = sayFilter("customers", [country], country, "DE");
  for (const p of ["in DE", "located in DE", "based in DE", "that are in DE", "from DE"]) assert(f.post.includes(p), p);
  assert(f.pre.includes("DE-based") && f.scope.includes("In DE"));
  assert(sayFilter("customers", [country], country, "New York").post.includes("based in New York"));
  for (const [c, v] of [[segment, "vip"], [email, "a@x.io"], [age, 42]] as const) {
    const g = sayFilter("customers", [c], c, v);
    assert(
      !g.post.some((p) => /^(in|located in|based in|from) /.test(p) && !p.startsWith("in the ")),
      `${c.w}: ${g.post}`,
    );
    assert(!g.pre.some((p) => p.endsWith("-based")), c.w);
  }
  // A place-like column whose value does not read as a place ("state" = "active") gets the generic forms only.
  const state = col("state", "text", ["active"]);
  assert(!sayFilter("accounts", [state], state, "active").post.includes("in active"));
});

Deno.test("filters: a date's year with the column's verb, alone where the table has one date, comparisons with before/after", () => {
  assertEquals(dateVerb(signup)?.verb, "signed up");
  assertEquals(dateVerb(hired)?.verb, "hired");
  assertEquals(dateVerb(shipped)?.verb, "shipped");
  assertEquals(dateVerb(firstOrder), null, "another thing's day has no verb");
  assertEquals(dateVerb(col("event_time", "date", ["2025-01-01"])), null);
  const f = sayFilter("customers", [signup, segment], signup, "2025-03-01");
  assertEquals(f.sql, `strftime('%Y', signup_date) = '2025'`);
  for (const p of ["who signed up in 2025", "in 2025", "during 2025", "from 2025", "with a signup date in 2025"]) {
    assert(f.post.includes(p), p);
  }
  assertEquals([f.pre, f.scope], [["2025"], ["In 2025", "For 2025"]]);
  // Hired before a year: passive verb, "before", no bare year (it would not say the comparison).
  const h = sayFilter("teachers", [hired], hired, "2011-08-01", "<");
  assert(h.sql.endsWith(`< '2011'`), h.sql);
  for (const p of ["hired before 2011", "that were hired before 2011", "whose hired on is before 2011"]) {
    assert(h.post.includes(p), p);
  }
  assertEquals([h.pre, h.scope], [[], []]);
  assert(!h.post.some((p) => /^(in|during|from) /.test(p)));
  // Two date columns: the year alone would not say which; rows that are not people: "that", not "who".
  const two = sayFilter("subscriptions", [col("start_date", "date", ["2025-01-01"]), shipped], shipped, "2025-01-01");
  assertEquals(two.pre, []);
  assert(!two.post.includes("in 2025") && two.post.includes("shipped in 2025"), `${two.post}`);
  const start = col("start_date", "date", ["2025-01-01"]);
  assert(sayFilter("subscriptions", [start], start, "2025-01-01").post.includes("that started in 2025"));
  assert(!sayFilter("subscriptions", [start], start, "2025-01-01").post.some((p) => p.startsWith("who ")));
});

Deno.test("filters: every phrase and noun phrase keeps the quoted value as quoted", () => {
  const rng = new Rng(3);
  const cases: [Col, string | number][] = [[segment, "vip"], [country, "New York"], [name, "Priya Patel"], [age, 42], [
    signup,
    "2024-11-20",
  ]];
  for (const [c, v] of cases) {
    const f = sayFilter("customers", [c, segment], c, v);
    const quoted = /'((?:[^']|'')*)'$|(-?[\d.]+)$/.exec(f.sql)!;
    const said = (quoted[1] ?? quoted[2]).replaceAll("''", "'");
    for (const p of [...f.pre, ...f.post, ...f.scope]) assert(p.includes(said), `"${p}" says ${said}`);
    for (let i = 0; i < 50; i++) {
      assert(filteredRows(rng, f, "customers", "flagged").includes(said));
      const s = scopeOf(rng, f);
      assert(s === null || s.includes(said));
    }
  }
});

/** One table of customers (no children: its definitions are on its own columns). */
function ctx(): Ctx {
  const cols = [col("customer_id", "key", [1, 2]), col("name", "text", ["Ana", "Bo"]), segment, country, signup];
  return { tables: [{ t: { ...T, columns: cols.map((c) => c.c) } as TableInfo, w: "customers", cols }], joins: [] };
}

Deno.test("defined_filter: the definition and the filter ANDed once each, the filter said every new way, values kept", () => {
  const rng = new Rng(9), s = ctx();
  const seen = { pre: 0, after: 0, first: 0, scope: 0, verb: 0 };
  for (let i = 0; i < 600; i++) {
    const q = SUB_MAKERS.defined_filter(rng, s);
    if (!q) continue;
    const def = /with (.+)$/.exec(q.evidence!)![1];
    const where = q.gold_sql.slice(q.gold_sql.indexOf(" WHERE ") + 7);
    assert(where.startsWith(`${def} AND `), q.gold_sql);
    const filter = where.slice(def.length + 5);
    assert(!filter.includes(def) && q.gold_sql.split(def).length === 2, `the definition once: ${q.gold_sql}`);
    assert(!/ AND /.test(filter.replace(/'[^']*'/g, "")), `one filter: ${filter}`);
    for (const m of filter.replace("'%Y'", "").matchAll(/'((?:[^']|'')*)'/g)) {
      assert(q.question.includes(m[1]), `${q.question} / ${filter}`);
    }
    if (/\b(vip|business|consumer|DE-based|PL-based|2024|2025) customers/.test(q.question)) seen.pre++;
    if (/ (based in|located in|who signed up|that are in) /.test(q.question)) seen.after++;
    if (/^(Of the|Among) /.test(q.question)) seen.first++;
    if (/^In (the|DE|PL|New York|20)/.test(q.question)) seen.scope++;
    if (/signed up (in|before|after) /.test(q.question)) seen.verb++;
  }
  for (const [k, n] of Object.entries(seen)) assert(n >= 5, `${k}: ${n} (${JSON.stringify(seen)})`);
});

Deno.test("plain questions (knowledge mode) say filters the new ways; the SQL is the filter's whatever the wording, values kept through vary()", async () => {
  const schema = await schemaOfFile(
    new URL("../../../public/demo/shop/shop.sqlite", import.meta.url).pathname,
    "shop",
    SYNTHETIC_VALUES,
  );
  const qs = syntheticQuestions(schema, 600, new Rng(4), () => true, [
    "count_where",
    "list_where",
    "aggregate_where",
    "year",
  ]);
  const rng = new Rng(8);
  for (const q of qs) {
    // One filter, on one column: "<col> = <value>" or a year's comparison.
    assert(
      / WHERE ("?\w+"? = ('(?:[^']|'')*'|-?[\d.]+)|strftime\('%Y', "?\w+"?\) [=<>] '\d{4}')$/.test(q.gold_sql),
      q.gold_sql,
    );
    const said = /'((?:[^']|'')*)'$|(-?[\d.]+)$/.exec(q.gold_sql)!;
    const v = (said[1] ?? said[2]).replaceAll("''", "'");
    assert(q.question.includes(v), `${q.question} / ${q.gold_sql}`);
    // A quoted value stays as quoted (a bare number may become a word: surface.ts).
    if (said[1] !== undefined) {
      for (let i = 0; i < 5; i++) assert(vary(q.question, q.gold_sql, rng).includes(v), `vary kept ${v}`);
    }
  }
  const text = qs.map((q) => q.question).join("\n");
  for (
    const re of [
      /\bvip customers\b/,
      / (in|based in|located in|that are in|from) [A-Z]{2}\b/,
      /^In the \w+ segment, /m,
      /-based \w+/,
      /signed up (in|before|after) \d{4}/,
      /placed (in|before|after) \d{4}/,
    ]
  ) {
    assert(re.test(text), `a plain question matches ${re}`);
  }
  // The same column and value give the same SQL in every wording.
  const sqls = new Map<string, Set<string>>();
  for (const q of qs) sqls.set(q.gold_sql, (sqls.get(q.gold_sql) ?? new Set()).add(q.question));
  assert([...sqls.values()].some((s) => s.size >= 3), "one query, several wordings");
});
