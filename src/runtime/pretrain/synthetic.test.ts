// Synthetic pretraining questions: every query runs on its database, carries the question's value,
// the same seed gives the same questions, the decontamination filter holds, and in the corpus no
// synthetic question holds a demo concept.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { sharedDatasets } from "../../../tests/shared.ts";
import { Rng } from "../../core/rng.ts";
import { introspectSchema, type SqlQueryable } from "../../core/schema.ts";
import { loadSqlJsDeno } from "../sql-wasm.ts";
import { CONCEPTS } from "../demo/concept-defs.ts";
import { contaminates, demoContamination, HELD_OUT_DB, loadCorpusSources } from "./corpus.deno.ts";
import { DEFINED_TERMS } from "./synthetic-sub.ts";
import { maskSql, PATTERNS, syntheticQuestions, words } from "./synthetic.ts";

const demoDir = new URL("../../../public/demo", import.meta.url).pathname;

Deno.test("maskSql: literals masked, case and spaces normalised; structure kept", () => {
  assertEquals(maskSql("SELECT COUNT(*) FROM customers WHERE country = 'DE'"), maskSql("select count(*)  from Customers where country='It''s' ;"));
  assertEquals(maskSql("SELECT x FROM t WHERE n > 3.5 LIMIT 3"), "select x from t where n>? limit ?");
  assert(maskSql("SELECT x FROM t WHERE a = 1") !== maskSql("SELECT x FROM t WHERE b = 1"), "another column, another shape");
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
  for (let i = 1; i <= 12; i++) db.run("INSERT INTO owners VALUES (?, ?, ?, ?)", [i, `Owner ${i}`, cities[i % 4], `202${i % 4}-0${1 + (i % 9)}-1${i % 10}`]);
  for (let i = 1; i <= 40; i++) db.run("INSERT INTO pets VALUES (?, ?, ?, ?, ?, ?)", [i, 1 + (i % 12), `Pet ${i}`, ["dog", "cat", "fish"][i % 3], i % 15, 1.5 * (i % 7)]);
  const q: SqlQueryable = { exec: (sql) => db.exec(sql) as { columns: string[]; values: unknown[][] }[] };
  const schema = introspectSchema(q, "pets", { maxExamples: 16 });
  const a = syntheticQuestions(schema, 200, new Rng(7));
  assertEquals(syntheticQuestions(schema, 200, new Rng(7)), a, "same seed, same questions");
  assert(a.length >= 150, `${a.length} distinct questions of 200 asked`);
  assertEquals(new Set(a.map((x) => x.pattern)).size, PATTERNS.length, `every pattern drawn: ${[...new Set(a.map((x) => x.pattern))].sort()}`);
  for (const x of a) {
    db.exec(x.gold_sql); // throws on a bad query
    for (const m of x.gold_sql.matchAll(/= '((?:[^']|'')*)'/g)) {
      const v = m[1].replaceAll("''", "'");
      if (!/strftime/.test(x.gold_sql)) assert(x.question.includes(v) || x.evidence?.includes(m[0]), `the value ${v} is in "${x.question}" (or its evidence)`);
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

Deno.test("synthetic: the made-up names of defined conditions share no word with a demo concept", () => {
  const words = CONCEPTS.flatMap((c) => (c.kind === "entity" ? [...c.term, c.state] : [c.term])).flatMap((w) => w.toLowerCase().split(/[\s-]+/));
  for (const t of DEFINED_TERMS) assert(!words.includes(t), `${t} is a concept word`);
});

Deno.test({
  name: "synthetic questions on Spider's databases: every query runs",
  ignore: sharedDatasets === null,
  async fn() {
    const spider = `${sharedDatasets}/spider-train`;
    const src = await loadCorpusSources({ demoDir, spiderDir: spider, synthetic: 10 });
    const syn = src.questions.filter((q) => q.synthetic && q.source === "spider");
    assert(syn.length > 1000, `${syn.length} synthetic Spider questions`);
    const SQL = await loadSqlJsDeno();
    const open = new Map<string, InstanceType<typeof SQL.Database>>();
    try {
      for (const q of syn) {
        let db = open.get(q.db_id);
        if (!db) open.set(q.db_id, db = new SQL.Database(await Deno.readFile(`${spider}/database/${q.db_id}/${q.db_id}.sqlite`)));
        db.exec(q.gold_sql);
      }
    } finally {
      for (const db of open.values()) db.close();
    }
  },
});
