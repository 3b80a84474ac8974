// Synthetic pretraining questions: every query runs on its database, carries the question's value,
// the same seed gives the same questions, the decontamination filter holds, and in the corpus no
// synthetic question holds a demo concept.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { sharedDatasets } from "../../../tests/shared.ts";
import { Rng } from "../../core/rng.ts";
import { introspectSchema, type SqlQueryable } from "../../core/schema.ts";
import { loadSqlJsDeno } from "../sql-wasm.ts";
import { CONCEPTS, ENTITIES, ENTITY_CONCEPTS } from "../demo/concept-defs.ts";
import { FRAMES } from "../demo/concepts.ts";
import {
  contaminates,
  DEFAULT_DEFINED_SHARE,
  demoContamination,
  HELD_OUT_DB,
  loadCorpusSources,
  SYNTHETIC_VALUES,
} from "./corpus.deno.ts";
import {
  DEFINED_TERMS,
  DEFINITION_FORM,
  DEFINITION_SEPARATOR,
  one,
  parseDefinitions,
  plural,
} from "./synthetic-sub.ts";
import {
  EVIDENCE_PATTERNS,
  maskSql,
  PATTERNS,
  type SyntheticQuestion,
  syntheticQuestions,
  words,
} from "./synthetic.ts";

const demoDir = new URL("../../../public/demo", import.meta.url).pathname;

type Db = { exec(sql: string): { columns: string[]; values: unknown[][] }[] };

/** A condition split at its top-level ANDs (not inside parentheses or literals). */
function topLevelAnd(sql: string): string[] {
  const out: string[] = [];
  let depth = 0, quote = "", start = 0;
  for (let i = 0; i < sql.length; i++) {
    const ch = sql[i];
    if (quote) {
      if (ch === quote) quote = "";
    } else if (ch === "'" || ch === '"') quote = ch;
    else if (ch === "(") depth++;
    else if (ch === ")") depth--;
    else if (depth === 0 && sql.startsWith(" AND ", i)) {
      out.push(sql.slice(start, i));
      start = i + 5;
      i += 4;
    }
  }
  out.push(sql.slice(start));
  return out;
}

/** Rows of a query, each as JSON (a multiset, sorted). */
function rowsOf(db: Db, sql: string): string[] {
  return (db.exec(sql)[0]?.values ?? []).map((r) => JSON.stringify(r)).sort();
}

/**
 * An evidence question uses its evidence as the demo's do: the evidence is definitions in the demo's
 * form joined by the demo's separator, each term (its name and the row noun) is in the question, the
 * gold query filters its table by every definition ANDed, in order, and the rows that conjunction keeps
 * are exactly those every single condition of the definitions keeps (the intersection, from separate
 * queries). Returns the number of conditions and whether the conjunction keeps some rows but fewer
 * than its most selective condition alone (the definitions are not redundant there).
 */
function checkEvidence(
  db: Db,
  q: { question: string; gold_sql: string; evidence?: string },
): { conds: number; informative: boolean } {
  const what = `${q.question} / ${q.evidence} / ${q.gold_sql}`;
  const defs = parseDefinitions(q.evidence ?? "");
  assert(defs !== null && defs.length >= 1, `evidence in the demo's form: ${what}`);
  assertEquals(
    defs.map((d) => `${d.term} refers to ${d.rows} with ${d.sql}`).join(DEFINITION_SEPARATOR),
    q.evidence,
    what,
  );
  for (const d of defs) {
    assert(d.term.endsWith(` ${one(d.rows)}`), `"${d.term}" is a name and the row noun of "${d.rows}": ${what}`);
    const name = d.term.slice(0, -one(d.rows).length - 1);
    assert(
      DEFINED_TERMS.includes(name as (typeof DEFINED_TERMS)[number]) && q.question.includes(name),
      `the made-up name ${name} is in the question: ${what}`,
    );
  }
  const m = /^SELECT .+? FROM ("(?:[^"]|"")*"|[A-Za-z_][A-Za-z0-9_]*) WHERE /.exec(q.gold_sql);
  assert(m, `one table, filtered: ${what}`);
  const table = m[1];
  const where = defs.map((d) => d.sql).join(" AND ");
  assert(q.gold_sql.includes(` WHERE ${where}`), `the query ANDs every definition: ${what}`);
  db.exec(q.gold_sql);
  const conds = defs.flatMap((d) => topLevelAnd(d.sql));
  const all = rowsOf(db, `SELECT * FROM ${table}`);
  const each = conds.map((c) => new Set(rowsOf(db, `SELECT * FROM ${table} WHERE ${c}`)));
  const both = rowsOf(db, `SELECT * FROM ${table} WHERE ${where}`);
  assertEquals(
    both,
    all.filter((r) => each.every((s) => s.has(r))),
    `the conjunction keeps the rows every condition keeps: ${what}`,
  );
  if (q.gold_sql === `SELECT COUNT(*) FROM ${table} WHERE ${where}`) {
    assertEquals(Number(db.exec(q.gold_sql)[0].values[0][0]), both.length, what);
  }
  return { conds: conds.length, informative: both.length > 0 && both.length < Math.min(...each.map((s) => s.size)) };
}

Deno.test("maskSql: literals masked, case and spaces normalised; structure kept", () => {
  assertEquals(
    maskSql("SELECT COUNT(*) FROM customers WHERE country = 'DE'"),
    maskSql("select count(*)  from Customers where country='It''s' ;"),
  );
  assertEquals(maskSql("SELECT x FROM t WHERE n > 3.5 LIMIT 3"), "select x from t where n>? limit ?");
  assert(
    maskSql("SELECT x FROM t WHERE a = 1") !== maskSql("SELECT x FROM t WHERE b = 1"),
    "another column, another shape",
  );
  assertEquals(maskSql("SELECT t1.a FROM t1"), "select t1.a from t1", "digits inside identifiers stay");
});

Deno.test("words: natural names, snake_case and camelCase", () => {
  assertEquals(words("order_items"), "order items");
  assertEquals(words("Budget_in_Billions"), "budget in billions");
  assertEquals(words("headOfficeCity"), "head office city");
  assertEquals(words("stu_fname", "first name"), "first name");
});

Deno.test("syntheticQuestions: deterministic, all patterns, every query runs, filter values appear in the question, keep() rejects", async () => {
  const SQL = await loadSqlJsDeno();
  const db = new SQL.Database();
  db.run(`CREATE TABLE owners (owner_id INTEGER PRIMARY KEY, name TEXT, city TEXT, joined DATE);
    CREATE TABLE pets (pet_id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owners(owner_id), name TEXT, kind TEXT, age INTEGER, weight REAL);`);
  const cities = ["Lyon", "Oslo", "O'Fallon", "Kyoto"];
  for (let i = 1; i <= 12; i++) {
    db.run("INSERT INTO owners VALUES (?, ?, ?, ?)", [
      i,
      `Owner ${i}`,
      cities[i % 4],
      `202${i % 4}-0${1 + (i % 9)}-1${i % 10}`,
    ]);
  }
  for (let i = 1; i <= 40; i++) {
    db.run("INSERT INTO pets VALUES (?, ?, ?, ?, ?, ?)", [
      i,
      1 + (i % 12),
      `Pet ${i}`,
      ["dog", "cat", "fish"][i % 3],
      i % 15,
      1.5 * (i % 7),
    ]);
  }
  const q: SqlQueryable = { exec: (sql) => db.exec(sql) as { columns: string[]; values: unknown[][] }[] };
  const schema = introspectSchema(q, "pets", { maxExamples: 16 });
  const a = syntheticQuestions(schema, 200, new Rng(7));
  assertEquals(syntheticQuestions(schema, 200, new Rng(7)), a, "same seed, same questions");
  assert(a.length >= 150, `${a.length} distinct questions of 200 asked`);
  assertEquals(
    new Set(a.map((x) => x.pattern)).size,
    PATTERNS.length,
    `every pattern drawn: ${[...new Set(a.map((x) => x.pattern))].sort()}`,
  );
  for (const x of a) {
    db.exec(x.gold_sql); // throws on a bad query
    for (const m of x.gold_sql.matchAll(/= '((?:[^']|'')*)'/g)) {
      const v = m[1].replaceAll("''", "'");
      if (!/strftime/.test(x.gold_sql)) {
        assert(
          x.question.includes(v) || x.evidence?.includes(m[0]),
          `the value ${v} is in "${x.question}" (or its evidence)`,
        );
      }
    }
  }
  assert(a.some((x) => x.gold_sql.includes("'O''Fallon'")), "quotes in values are escaped");
  const noCounts = syntheticQuestions(schema, 100, new Rng(7), (x) => !x.gold_sql.startsWith("SELECT COUNT(*)"));
  assert(noCounts.length > 0 && noCounts.every((x) => !x.gold_sql.startsWith("SELECT COUNT(*)")), "keep() rejects");
  db.close();
});

Deno.test("corpus sources with --synthetic: demo databases get 4N, none holds a demo concept (question, masked SQL, definition, word), clinic never", async () => {
  const src = await loadCorpusSources({ demoDir, synthetic: 30 });
  const syn = src.questions.filter((q) => q.synthetic);
  const bad = await demoContamination(demoDir);
  const perDb = new Map<string, number>();
  for (const q of syn) perDb.set(q.db_id, (perDb.get(q.db_id) ?? 0) + 1);
  assertEquals([...perDb.keys()].sort(), ["school", "shop", "subscriptions"]);
  for (const [db, n] of perDb) assert(n > 60 && n <= 120, `${db}: ${n} synthetic questions (at most 4 x 30)`);
  assert(!syn.some((q) => q.db_id === HELD_OUT_DB), "the held-out database has none");
  for (const q of syn) assertEquals(contaminates(bad, q), null, `${q.question} / ${q.gold_sql}`);
  const dropped = (src.excluded.evalSql ?? 0) + (src.excluded.definition ?? 0) + (src.excluded.term ?? 0);
  assert(dropped > 0, `some candidates were dropped for a concept (${JSON.stringify(src.excluded)})`);
  assert(syn.some((q) => q.evidence?.includes(" refers to ")), "defined terms with evidence are in");
  assert(syn.some((q) => / IN \(SELECT /.test(q.gold_sql)), "subquery conditions are in");
  const plain = await loadCorpusSources({ demoDir });
  assertEquals(src.questions.filter((q) => !q.synthetic), plain.questions, "the gold questions are unchanged");
});

Deno.test("synthetic: the made-up names of defined conditions share no word with a demo concept (nor is one a prefix of the other)", () => {
  const words = CONCEPTS.flatMap((c) => (c.kind === "entity" ? [...c.term, c.state] : [c.term])).flatMap((w) =>
    w.toLowerCase().split(/[\s-]+/)
  );
  assertEquals(new Set(DEFINED_TERMS).size, DEFINED_TERMS.length, "no name twice");
  for (const t of DEFINED_TERMS) {
    for (const part of t.split(/[\s-]+/)) {
      assert(!words.includes(part), `${t} holds the concept word ${part}`);
      for (const w of words) {
        assert(
          w.length < 3 || (!part.startsWith(w) && !w.startsWith(part)),
          `${t}: ${part} and the concept word ${w} share a prefix`,
        );
      }
    }
  }
});

Deno.test("plural and one: table words in the plural and back", () => {
  for (
    const [a, b] of [
      ["department", "departments"],
      ["company", "companies"],
      ["match", "matches"],
      ["people", "people"],
      ["class", "classes"],
      ["bus", "buses"],
      ["order item", "order items"],
      ["key", "keys"],
      ["status", "statuses"],
    ]
  ) {
    assertEquals(plural(a), b, a);
    assertEquals(one(b), a, b);
    assertEquals(one(a), a, `${a} stays`);
  }
  assertEquals(plural("customers"), "customers", "a plural stays");
});

Deno.test("evidence form: the demo's definitions and its questions' evidence parse with DEFINITION_FORM and DEFINITION_SEPARATOR, as every synthetic evidence does", async () => {
  const entity = new Map(CONCEPTS.filter((c) => c.kind === "entity").map((c) => [c.id, c]));
  const defs: { id: string; term: string; definition: string; fragment: string }[] = JSON.parse(
    await Deno.readTextFile(`${demoDir}/concepts.json`),
  );
  let n = 0;
  for (const d of defs) {
    if (!entity.has(d.id)) continue;
    const m = DEFINITION_FORM.exec(d.definition);
    assert(m?.groups, d.definition);
    assertEquals([m.groups.term, m.groups.sql], [d.term, d.fragment], d.id);
    assert(d.term.endsWith(` ${one(m.groups.rows)}`), `${d.term}: a name and the row noun of ${m.groups.rows}`);
    n++;
  }
  assertEquals(n, entity.size, "every entity concept's definition");
  let multi = 0;
  for (const split of ["train", "test-concepts"]) {
    for (const line of (await Deno.readTextFile(`${demoDir}/${split}.jsonl`)).split("\n").filter((l) => l.trim())) {
      const o: { evidence: string; concepts: string[] } = JSON.parse(line);
      if (!o.concepts.every((c) => entity.has(c))) continue;
      const parsed = parseDefinitions(o.evidence);
      assert(parsed !== null, o.evidence);
      assertEquals(parsed.map((p) => p.term), o.concepts.map((c) => defs.find((d) => d.id === c)!.term), o.evidence);
      if (o.concepts.length > 1) multi++;
    }
  }
  assert(multi > 10, `${multi} two-concept questions of the demo parse into two definitions`);
  const src = await loadCorpusSources({ demoDir, synthetic: 30 });
  const ev = src.questions.filter((q) => q.synthetic && q.evidence);
  assert(ev.some((q) => q.evidence!.includes(DEFINITION_SEPARATOR)), "some synthetic evidence holds two definitions");
  for (const q of ev) assert(parseDefinitions(q.evidence!) !== null, q.evidence);
});

/** The demo's three training databases, open in sql.js, with the schema the synthetic questions draw values from. */
async function demoDbs(): Promise<
  { id: string; db: Db & { close(): void }; schema: ReturnType<typeof introspectSchema> }[]
> {
  const SQL = await loadSqlJsDeno();
  const out = [];
  for (const id of ["shop", "subscriptions", "school"]) {
    const db = new SQL.Database(await Deno.readFile(`${demoDir}/${id}/${id}.sqlite`));
    const q: SqlQueryable = { exec: (sql) => db.exec(sql) as { columns: string[]; values: unknown[][] }[] };
    out.push({ id, db: { exec: q.exec, close: () => db.close() }, schema: introspectSchema(q, id, SYNTHETIC_VALUES) });
  }
  return out;
}

Deno.test("evidence patterns on the demo databases: every query runs and uses its evidence; a conjunction keeps exactly the rows both conditions keep", async () => {
  const dbs = await demoDbs();
  try {
    const by = new Map<string, SyntheticQuestion[]>();
    let informative = 0, conjunctions = 0;
    for (const { db, schema } of dbs) {
      for (const q of syntheticQuestions(schema, 120, new Rng(11), () => true, EVIDENCE_PATTERNS)) {
        by.set(q.pattern, [...(by.get(q.pattern) ?? []), q]);
        const r = checkEvidence(db, q);
        const defs = parseDefinitions(q.evidence!)!;
        if (q.pattern === "defined_and") {
          assertEquals([defs.length, r.conds], [1, 2], `one definition of two conditions: ${q.evidence}`);
          conjunctions++;
          if (r.informative) informative++;
        } else if (q.pattern === "defined_pair") {
          assertEquals(defs.length, 2, q.evidence);
          assert(q.evidence!.split(DEFINITION_SEPARATOR).length >= 2, q.evidence);
        } else {
          assertEquals(defs.length, 1, q.evidence);
        }
        if (q.pattern === "defined_filter") {
          // The definition, then one plain filter on the rows' own column, whose value the question says.
          const rest = q.gold_sql.slice(
            q.gold_sql.indexOf(` WHERE ${defs[0].sql} AND `) + ` WHERE ${defs[0].sql} AND `.length,
          );
          assert(
            /^(strftime\('%Y', [A-Za-z_"][^)]*\) = '\d{4}'|[A-Za-z_"][^ ]* = ('(?:[^']|'')*'|-?[\d.]+))$/.test(rest),
            `one plain filter: ${rest}`,
          );
          const v = /'((?:[^']|'')*)'$|(-?[\d.]+)$/.exec(rest)!;
          assert(q.question.includes((v[1] ?? v[2]).replaceAll("''", "'")), `the filter's value is in "${q.question}"`);
        }
      }
    }
    assertEquals([...by.keys()].sort(), [...EVIDENCE_PATTERNS].sort(), "every evidence pattern drawn");
    // The wording a frame's test-concepts questions hold out (phrasing 0) is never an evidence question's.
    const heldOut = Object.values(FRAMES).map((ph) =>
      new RegExp(`^${ph[0].replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{\w+\}/g, ".+")}$`)
    );
    for (const q of [...by.values()].flat()) {
      assert(!heldOut.some((r) => r.test(q.question)), `a held-out demo wording: ${q.question}`);
    }
    for (const [p, qs] of by) assert(qs.length >= 40, `${p}: ${qs.length} questions`);
    console.log(
      `evidence patterns: ${
        [...by].map(([p, qs]) => `${p} ${qs.length}`).join(", ")
      }; ${informative} of ${conjunctions} conjunctions keep some rows but fewer than either condition alone`,
    );
    assert(informative >= conjunctions / 4, `${informative} of ${conjunctions} conjunctions informative`);
  } finally {
    for (const { db } of dbs) db.close();
  }
});

Deno.test("evidence conditions on the demo databases: every shape of a demo concept's condition, with constants drawn widely (a model must copy them)", async () => {
  const dbs = await demoDbs();
  try {
    const shapes = new Set<string>(), sqls = new Set<string>();
    for (const { schema } of dbs) {
      for (const q of syntheticQuestions(schema, 1500, new Rng(5), () => true, ["defined", "defined_and"])) {
        for (const d of parseDefinitions(q.evidence!)!) {
          sqls.add(d.sql);
          shapes.add(maskSql(d.sql));
          for (const c of topLevelAnd(d.sql)) shapes.add(maskSql(c));
        }
      }
    }
    // Every entity concept's condition has its shape here (literals masked), on the concept's own table: the SQL the
    // concepts are written in, not the concepts (whose exact fragments the corpus drops: the test above).
    for (const c of ENTITY_CONCEPTS.filter((c) => ENTITIES[c.entity].db !== HELD_OUT_DB)) {
      assert(shapes.has(maskSql(c.predicate)), `the shape of ${c.id}: ${maskSql(c.predicate)}`);
    }
    const nums = (re: RegExp) => new Set([...sqls].flatMap((x) => [...x.matchAll(re)].map((m) => Number(m[1]))));
    const counts = nums(/HAVING COUNT\(\*\) >= (\d+)/g), days = nums(/'-(\d+) days'/g);
    assert(
      [...counts].some((n) => n > 6) && counts.size >= 20,
      `HAVING COUNT(*) thresholds: ${[...counts].sort((a, b) => a - b)}`,
    );
    assert(days.size >= 40, `${days.size} distinct windows of days`);
    const dates = new Set([...sqls].flatMap((x) => [...x.matchAll(/'(\d{4}-\d{2}-\d{2})'/g)].map((m) => m[1])));
    assert(dates.size >= 200, `${dates.size} distinct days`);
    console.log(
      `${sqls.size} definitions, ${shapes.size} shapes; ${counts.size} count thresholds, ${days.size} windows, ${dates.size} days`,
    );
  } finally {
    for (const { db } of dbs) db.close();
  }
});

Deno.test("syntheticQuestions with definedShare: the evidence patterns make up that share, seeded; without it the draw is uniform as before", async () => {
  const dbs = await demoDbs();
  try {
    const { schema } = dbs[1];
    const a = syntheticQuestions(schema, 400, new Rng(3), () => true, PATTERNS, DEFAULT_DEFINED_SHARE);
    assertEquals(
      syntheticQuestions(schema, 400, new Rng(3), () => true, PATTERNS, DEFAULT_DEFINED_SHARE),
      a,
      "same seed, same questions",
    );
    const share = a.filter((q) => EVIDENCE_PATTERNS.includes(q.pattern)).length / a.length;
    assert(
      a.length === 400 && Math.abs(share - DEFAULT_DEFINED_SHARE) < 0.01,
      `${a.length} questions, evidence share ${share}`,
    );
    for (const q of a) assertEquals(q.evidence !== undefined, EVIDENCE_PATTERNS.includes(q.pattern), q.pattern);
    assert(
      syntheticQuestions(schema, 100, new Rng(3), () => true, PATTERNS, 0).every((q) => !q.evidence),
      "share 0: none",
    );
    assert(
      syntheticQuestions(schema, 100, new Rng(3), () => true, PATTERNS, 1).every((q) => q.evidence),
      "share 1: all",
    );
    const rejectAll = syntheticQuestions(schema, 50, new Rng(3), (q) => !q.evidence, PATTERNS, 0.5);
    assert(
      rejectAll.length === 50 && rejectAll.every((q) => !q.evidence),
      "a family whose every candidate is rejected is given up, the other fills the rest",
    );
    assertEquals(
      syntheticQuestions(schema, 60, new Rng(3)),
      syntheticQuestions(schema, 60, new Rng(3), () => true, PATTERNS),
      "uniform without a share",
    );
  } finally {
    for (const { db } of dbs) db.close();
  }
});

Deno.test({
  name:
    "synthetic questions on Spider's databases: every query runs; every evidence question uses its evidence (conjunctions: exactly the rows of both conditions)",
  ignore: sharedDatasets === null,
  async fn() {
    const spider = `${sharedDatasets}/spider-train`;
    const src = await loadCorpusSources({ demoDir, spiderDir: spider, synthetic: 10 });
    const syn = src.questions.filter((q) => q.synthetic && q.source === "spider");
    assert(syn.length > 1000, `${syn.length} synthetic Spider questions`);
    const SQL = await loadSqlJsDeno();
    const open = new Map<string, InstanceType<typeof SQL.Database>>();
    try {
      let evidence = 0;
      for (const q of syn) {
        let db = open.get(q.db_id);
        if (!db) {
          open.set(
            q.db_id,
            db = new SQL.Database(await Deno.readFile(`${spider}/database/${q.db_id}/${q.db_id}.sqlite`)),
          );
        }
        db.exec(q.gold_sql);
        if (q.evidence) {
          checkEvidence(db as unknown as Db, q);
          evidence++;
        }
      }
      const share = evidence / syn.length;
      console.log(
        `${syn.length} synthetic Spider questions, ${evidence} with evidence (${
          (100 * share).toFixed(1)
        }%), each checked`,
      );
      assert(Math.abs(share - DEFAULT_DEFINED_SHARE) < 0.03, `evidence share ${share}`);
    } finally {
      for (const db of open.values()) db.close();
    }
  },
});
