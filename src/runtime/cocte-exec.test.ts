import { assert, assertEquals } from "../../tests/assert.ts";
import { extractSql } from "../core/extract.ts";
import { parseQuestions } from "../core/loaders.ts";
import { Rng } from "../core/rng.ts";
import { GoldConverter } from "./cocte-convert.ts";
import { cocteCompletion, cocteDatasetRecord } from "./cocte-dataset.ts";
import { executeChain, goldFor, sampleSteps } from "./cocte-exec.ts";
import { isSampleRecord } from "./records.ts";
import { SqlPool } from "./sql-pool.ts";
import { loadSqlJs } from "./sql-wasm.ts";

const SQL = await loadSqlJs();

function makeDb(): Uint8Array {
  const db = new SQL.Database();
  db.exec(`
    CREATE TABLE singer(id INTEGER PRIMARY KEY, name TEXT, age INTEGER, country TEXT);
    CREATE TABLE concert(cid INTEGER PRIMARY KEY, sid INTEGER REFERENCES singer(id), year INTEGER, venue TEXT);
    INSERT INTO singer VALUES (1,'Ann',30,'FR'),(2,'Bob',45,'US'),(3,'Cid',52,'US'),(4,'Dee',28,'DE');
    INSERT INTO concert VALUES (10,1,2014,'Hall'),(11,1,2014,'Park'),(12,2,2014,'Hall'),(13,3,2015,'Club'),(14,1,2015,'Hall'),(15,2,2014,'Dome');
  `);
  const bytes = (db as unknown as { export(): Uint8Array }).export();
  db.close();
  return bytes;
}

const DB = makeDb();
const pool = () => new SqlPool({ loadDatabase: () => Promise.resolve(DB.slice()), workers: 1, timeoutMs: 5000 });

const GOLDS = [
  "SELECT count(*) FROM singer WHERE age > 29",
  "SELECT name FROM singer ORDER BY age DESC LIMIT 2",
  "SELECT T1.name, count(*) FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid WHERE T2.year = 2014 GROUP BY T1.id HAVING count(*) > 1",
  "SELECT name FROM singer WHERE age > (SELECT avg(age) FROM singer)",
  "SELECT country FROM singer WHERE age < 40 INTERSECT SELECT country FROM singer WHERE age > 29",
  "SELECT name FROM singer WHERE id NOT IN (SELECT sid FROM concert)",
  "SELECT venue, count(*) AS n FROM concert GROUP BY venue ORDER BY n DESC LIMIT 1",
  "SELECT T1.name FROM singer AS T1 LEFT JOIN concert AS T2 ON T1.id = T2.sid WHERE T2.cid IS NULL",
  "SELECT avg(n) FROM (SELECT count(*) AS n FROM concert GROUP BY sid)",
  "SELECT DISTINCT T1.country FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid",
];

Deno.test({
  name: "GoldConverter: hand-made golds become chains with the gold's rows; a failing gold is a reason",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const p = pool();
    try {
      const conv = new GoldConverter(p);
      assertEquals(await conv.schemaOf("db"), {
        singer: ["id", "name", "age", "country"],
        concert: ["cid", "sid", "year", "venue"],
      });
      for (const gold of GOLDS) {
        const c = await conv.convert("db", gold);
        assert(c.ok, `${gold}: ${c.ok ? "" : c.reason}`);
        assertEquals(c.queries.length, c.steps.length + 1);
        // Every step query runs; the whole chain matches the gold.
        const exec = await executeChain(p, "db", cocteCompletion(c.cocte), { sql: gold });
        assert(exec.correct, gold);
        assert(exec.steps.every((s) => s.error === null), gold);
        assertEquals(exec.steps.map((s) => s.name), [...c.steps.map((s) => s.name), null]);
      }
      const bad = await conv.convert("db", "SELECT nope FROM singer");
      assertEquals(bad, { ok: false, reason: "gold failed: syntax: no such column: nope" });
    } finally {
      p.close();
    }
  },
});

Deno.test({
  name: "executeChain: per-step errors, rows and gold matches of a flawed model answer",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const p = pool();
    try {
      const gold = "SELECT name FROM singer WHERE country = 'US' AND age > 50";
      const answer =
        "Here you go:\n```sql\nWITH\n  -- US singers\n  us AS (SELECT * FROM singer WHERE country = 'US'),\n" +
        "  older AS (SELECT name FROM us WHERE agee > 50),\n  older2 AS (SELECT name FROM us WHERE age > 50)\nSELECT name FROM older2\n```";
      const exec = await executeChain(p, "db", answer, { sql: gold });
      assertEquals(exec.steps.map((s) => [s.name, s.error?.kind ?? null, s.matchesGold]), [
        ["us", null, false],
        ["older", "syntax", false],
        // SQLite compiles only the CTEs a query reads: a later step that does not read the broken one still runs.
        ["older2", null, true],
        [null, null, true],
      ]);
      assertEquals(exec.steps[0].result?.rows.length, 2);
      assertEquals(exec.correct, true);
      assert(answer.slice(exec.steps[0].end - 1, exec.steps[0].end) === ")", "end offset of step 1");
      const ss = sampleSteps(exec);
      assertEquals(ss[0].comment, "US singers");
      assertEquals(ss[0].result?.rowCount, 2);
      // A record with steps (and a PRM score) passes the sample-record guard.
      const rec = {
        v: 1,
        phase: "grpo",
        step: 0,
        taskId: "t",
        dbId: "db",
        question: "q",
        sampleIndex: 0,
        prompt: "",
        completion: answer,
        reasoning: null,
        extraction: { sql: null, reason: "no sql block" },
        predicted: null,
        gold: null,
        error: null,
        correct: false,
        execMs: 0,
        reward: { total: 0, components: {}, weighted: {} },
        advantage: null,
        completionTokens: 1,
        logprob: 0,
        finishReason: "eos",
        steps: ss.map((s, k) => ({ ...s, prmScore: k / 4 })),
      };
      assert(isSampleRecord(JSON.parse(JSON.stringify(rec))), "sample record with steps");
      assert(!isSampleRecord({ ...rec, steps: [{ name: 1 }] }), "bad steps rejected");

      // A correct chain; the gold comes indexed once for G samples.
      const g = await goldFor(p, "db", gold);
      assert(g.ok && g.index, "gold indexed");
      const good = await executeChain(
        p,
        "db",
        "WITH us AS (SELECT * FROM singer WHERE country = 'US') SELECT name FROM us WHERE age > 50",
        { index: g.index! },
      );
      assertEquals(good.correct, true);
      assertEquals(good.steps.map((s) => s.matchesGold), [false, true]);
      // A step whose own rows already are the answer matches the gold.
      const early = await executeChain(
        p,
        "db",
        "WITH a AS (SELECT name FROM singer WHERE country = 'US' AND age > 50) SELECT name FROM a",
        { index: g.index! },
      );
      assertEquals(early.steps.map((s) => s.matchesGold), [true, true]);
    } finally {
      p.close();
    }
  },
});

Deno.test({
  name: "executeChain: truncated and fuzzed answers always score, never reject",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const p = pool();
    try {
      const conv = new GoldConverter(p);
      const c = await conv.convert("db", GOLDS[2]);
      assert(c.ok, "convert");
      const text = cocteCompletion(c.cocte);
      const rng = new Rng(11);
      const g = await goldFor(p, "db", GOLDS[2]);
      for (let i = 0; i < 60; i++) {
        const cut = text.slice(0, Math.floor(rng.next() * text.length));
        const e = await executeChain(p, "db", cut, { index: g.index! });
        assertEquals(e.steps.length, e.chain.steps.length + (e.chain.final === null ? 0 : 1));
        if (e.chain.final === null) assertEquals(e.correct, false);
      }
      const full = await executeChain(p, "db", text, { index: g.index! });
      assertEquals(full.correct, true);
    } finally {
      p.close();
    }
  },
});

Deno.test("cocteDatasetRecord: the project's question format, and the answer chain-of-ctes@1 extracts back", () => {
  const cocte = "WITH\n  a AS (\n    SELECT * FROM singer\n  )\nSELECT name FROM a";
  const r = cocteDatasetRecord(
    { id: "7", db_id: "db", question: "Names?", gold_sql: "SELECT name FROM singer", difficulty: "easy" },
    cocte,
    [{ name: "a", sql: "SELECT * FROM singer" }],
  );
  const back = parseQuestions(JSON.stringify(r) + "\n");
  assertEquals(back.format, "rlvr");
  assertEquals(back.items[0].task, {
    id: "7/cocte",
    db_id: "db",
    question: "Names?",
    gold_sql: cocte,
    difficulty: "easy",
    completion: r.completion,
  });
  assertEquals(extractSql(r.completion, { mode: "sql-block" }), { sql: cocte, source: "sql-block" });
});
