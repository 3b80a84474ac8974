import { assert, assertEquals } from "../../tests/assert.ts";
import { DatabaseCache, DEFAULT_LIMITS, GuardedDatabase, type QueryReply, type SqlJsModule } from "./sql-exec.ts";
import { isEmptyTail, leadingKeyword, writeReason } from "./sql-guard.ts";
import { loadSqlJs } from "./sql-wasm.ts";

const SQL: SqlJsModule = await loadSqlJs();

/** A small database: t(id INTEGER, name TEXT, score REAL) with 100 rows, an index and a view. */
function fixtureBytes(): Uint8Array {
  const db = new SQL.Database();
  db.exec(
    "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);" +
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 100) " +
      "INSERT INTO t SELECT i, 'n' || i, i / 4.0 FROM c;" +
      "CREATE INDEX t_name ON t(name); CREATE VIEW v AS SELECT id FROM t WHERE id <= 10;" +
      "CREATE TABLE big(x INTEGER); INSERT INTO big VALUES (9007199254740993), (-9223372036854775808), (9223372036854775807);",
  );
  const bytes = (db as unknown as { export(): Uint8Array }).export();
  db.close();
  return bytes;
}

const FIXTURE = fixtureBytes();

function rows(r: QueryReply): unknown[][] {
  if (!r.ok) throw new Error(`query failed: ${r.error.kind}: ${r.error.message}`);
  return r.result.rows;
}

/** The proof that nothing changed: contents, schema, attached databases, temp objects, query_only. */
function state(g: GuardedDatabase): unknown[][] {
  return rows(g.query(
    "SELECT (SELECT count(*) || ':' || sum(id) || ':' || sum(score) FROM t), (SELECT count(*) FROM sqlite_master), " +
      "(SELECT group_concat(name) FROM pragma_database_list), (SELECT count(*) FROM sqlite_temp_master), " +
      "(SELECT query_only FROM pragma_query_only), (SELECT count(*) FROM v)",
    DEFAULT_LIMITS,
  ));
}

Deno.test("sql-exec: values come back typed as SQLite stored them (bigint, real, text, blob, NULL)", () => {
  const g = new GuardedDatabase(SQL, FIXTURE);
  const r = rows(g.query("SELECT 9007199254740993, 6.0, 6, '6', x'00ff', NULL", DEFAULT_LIMITS));
  assertEquals(r, [[9007199254740993n, 6, 6n, "6", new Uint8Array([0, 255]), null]]);
  assertEquals(rows(g.query("SELECT x FROM big ORDER BY rowid", DEFAULT_LIMITS)), [
    [9007199254740993n],
    [-(2n ** 63n)],
    [2n ** 63n - 1n],
  ]);
  const named = g.query("SELECT id AS a, name FROM t WHERE id = 3", DEFAULT_LIMITS);
  assert(named.ok && named.result.columns.join() === "a,name" && !named.result.capped);
  g.close();
});

Deno.test("sql-exec: syntax, runtime and empty errors are told apart", () => {
  const g = new GuardedDatabase(SQL, FIXTURE);
  const kind = (sql: string) => {
    const r = g.query(sql, DEFAULT_LIMITS);
    return r.ok ? "ok" : r.error.kind;
  };
  assertEquals(kind("SELEC 1"), "forbidden");
  assertEquals(kind("SELECT FROM"), "syntax");
  assertEquals(kind("SELECT nope FROM t"), "syntax");
  assertEquals(kind("SELECT * FROM missing_table"), "syntax");
  assertEquals(kind("   "), "empty");
  assertEquals(kind("-- only a comment"), "empty");
  assertEquals(kind("SELECT abs(-9223372036854775807 - 1)"), "runtime");
  assertEquals(kind("SELECT 1 -- ; DROP TABLE t"), "ok");
  assertEquals(kind("SELECT 1;;  /* trailing */ ;\n-- end"), "ok");
  assertEquals(kind("VALUES (1), (2)"), "ok");
  assertEquals(kind("(SELECT 1)"), "syntax");
  g.close();
});

Deno.test("sql-exec: each write/DROP/ATTACH/PRAGMA/multi-statement attack is refused and the DB is unchanged", () => {
  const g = new GuardedDatabase(SQL, FIXTURE);
  const before = state(g);
  assertEquals(before[0][0], "100:5050:1262.5");
  const attacks = [
    "INSERT INTO t VALUES (101, 'x', 1.0)",
    "UPDATE t SET score = 0",
    "DELETE FROM t",
    "REPLACE INTO t VALUES (1, 'y', 2.0)",
    "DROP TABLE t",
    "DROP VIEW v",
    "DROP INDEX t_name",
    "CREATE TABLE u(a)",
    "CREATE TEMP TABLE u(a)",
    "CREATE TEMP VIEW t AS SELECT 1 AS id, 2 AS score",
    "ALTER TABLE t RENAME TO t2",
    "ATTACH ':memory:' AS evil",
    "ATTACH DATABASE 'file:other?mode=memory' AS evil",
    "DETACH main",
    "PRAGMA query_only = 0",
    "PRAGMA writable_schema = 1",
    "PRAGMA journal_mode = OFF",
    "VACUUM",
    "REINDEX",
    "ANALYZE",
    "BEGIN",
    "SAVEPOINT s",
    "SELECT 1; DELETE FROM t",
    "SELECT 1; SELECT 2",
    "SELECT 1; ATTACH ':memory:' AS evil",
    "SELECT 1; PRAGMA query_only=0",
    "(SELECT 1); DROP TABLE t",
    "/* hi */ DELETE FROM t",
    "-- hi\nDROP TABLE t",
    "WITH x AS (SELECT 1) DELETE FROM t",
    "WITH x AS (SELECT 1) INSERT INTO t SELECT 200, 'z', 0.0 FROM x",
    "WITH x AS (SELECT 1) UPDATE t SET score = 0",
    "WITH x(a) AS (SELECT 1) REPLACE INTO t SELECT 1, 'r', 0.0 FROM x",
    "SELECT sqlite_attach(':memory:', 'evil', NULL)",
    "SELECT load_extension('x')",
  ];
  for (const sql of attacks) {
    const r = g.query(sql, DEFAULT_LIMITS);
    assert(!r.ok, `attack ran: ${sql}`);
    assert(
      ["forbidden", "syntax"].includes(r.error.kind),
      `${sql}: unexpected kind ${r.error.kind} (${r.error.message})`,
    );
    assertEquals(state(g), before, `state after ${sql}`);
    assert(g.isPristine(), `fingerprint after ${sql}`);
  }
  assertEquals(g.reloads, 0, "no attack got far enough to need the reload");
  g.close();
});

Deno.test("sql-exec: deeper defences hold on their own (bytecode scan, query_only)", () => {
  // The bytecode scan flags every write even when the keyword check is not consulted.
  const raw = new SQL.Database(FIXTURE);
  const explainWrites = (sql: string): string | null => {
    const st = raw.prepare(`EXPLAIN ${sql}`);
    try {
      while (st.step()) {
        const r = st.get(null, { useBigInt: true });
        const why = writeReason(String(r[1]), Number(r[3]), r[5]);
        if (why) return why;
      }
      return null;
    } finally {
      st.free();
    }
  };
  for (
    const sql of [
      "INSERT INTO t VALUES (1000, 'a', 1)",
      "DELETE FROM t",
      "UPDATE t SET score=1",
      "DROP TABLE t",
      "CREATE TABLE u(a)",
      "ATTACH ':memory:' AS e",
      "DETACH e",
      "PRAGMA query_only=0",
      "VACUUM",
      "CREATE TEMP TABLE u(a)",
    ]
  ) {
    assert(explainWrites(sql) !== null, `bytecode scan missed: ${sql}`);
  }
  for (
    const sql of [
      "SELECT * FROM t",
      "SELECT DISTINCT name FROM t UNION SELECT 'x'",
      "WITH RECURSIVE c(i) AS (SELECT 1 UNION SELECT i+1 FROM c WHERE i<5) SELECT * FROM c",
      "SELECT * FROM t ORDER BY score LIMIT 3",
      "SELECT count(*) FROM (SELECT name FROM t GROUP BY name)",
    ]
  ) {
    assertEquals(explainWrites(sql), null, `read flagged as write: ${sql}`);
  }
  // query_only blocks writes to the main and the temp schema alike.
  raw.exec("PRAGMA query_only=1");
  for (const sql of ["DELETE FROM t", "CREATE TEMP TABLE u(a)", "INSERT INTO t VALUES (1000, 'a', 1)"]) {
    let threw = false;
    try {
      raw.exec(sql);
    } catch (e) {
      threw = /readonly/.test(String(e));
    }
    assert(threw, `query_only let through: ${sql}`);
  }
  raw.close();
});

Deno.test("sql-exec: results are capped by rows and by bytes, stepping row by row", () => {
  const g = new GuardedDatabase(SQL, FIXTURE);
  const byRows = g.query("SELECT * FROM t", { maxRows: 10, maxBytes: 1e9 });
  assert(!byRows.ok && byRows.error.kind === "capped", "row cap");
  const exact = g.query("SELECT * FROM t", { maxRows: 100, maxBytes: 1e9 });
  assert(exact.ok && exact.result.rows.length === 100, "exactly at the row cap is not capped");
  const byBytes = g.query("SELECT name FROM t", { maxRows: 1e9, maxBytes: 500 });
  assert(!byBytes.ok && byBytes.error.kind === "capped", "byte cap");
  // An endless result stops at the cap instead of running out of memory.
  const endless = g.query(
    "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT i, printf('%.100c', 'x') FROM c",
    { maxRows: 1e9, maxBytes: 1 << 20 },
  );
  assert(!endless.ok && endless.error.kind === "capped", "endless result capped");
  g.close();
});

Deno.test("sql-exec: leadingKeyword and isEmptyTail", () => {
  assertEquals(leadingKeyword("  /* x */ -- y\n ((select 1))"), "SELECT");
  assertEquals(leadingKeyword("with a as (select 1) select * from a"), "WITH");
  assertEquals(leadingKeyword("/* unterminated"), "");
  assert(isEmptyTail(" ; -- x\n /* y */ ;"));
  assert(!isEmptyTail("; SELECT 2"));
});

Deno.test("sql-exec: the cache is bounded and evicts the least recently used", () => {
  const cache = new DatabaseCache(SQL, 2, 1e9);
  cache.add("a", FIXTURE);
  cache.add("b", FIXTURE);
  cache.get("a");
  cache.add("c", FIXTURE);
  assertEquals(cache.ids(), ["a", "c"]);
  const small = new DatabaseCache(SQL, 10, 3 * FIXTURE.byteLength);
  small.add("a", FIXTURE);
  small.add("b", FIXTURE);
  assertEquals(small.ids(), ["b"]);
  cache.clear();
  small.clear();
});

Deno.test("sql-exec: last line of defence — a change that got past the checks is undone by reloading the original bytes", () => {
  const g = new GuardedDatabase(SQL, FIXTURE);
  const before = state(g);
  // Simulate a breach by reaching the private connection (no query through `query` can do this).
  const conn = (g as unknown as { db: { exec(sql: string): unknown } }).db;
  for (
    const breach of [
      "PRAGMA query_only=0; DELETE FROM t",
      "ATTACH ':memory:' AS evil",
      "PRAGMA query_only=0; CREATE TEMP TABLE x(a)",
      "PRAGMA query_only=0; DROP VIEW v",
      "PRAGMA query_only=0",
    ]
  ) {
    const reloads = g.reloads;
    (g as unknown as { db: { exec(sql: string): unknown } }).db.exec(breach);
    assert(!g.isPristine(), `fingerprint missed: ${breach}`);
    const r = g.query("SELECT 1", DEFAULT_LIMITS);
    assert(r.ok, "the query itself still answers");
    assertEquals(g.reloads, reloads + 1, `reloaded after ${breach}`);
    assertEquals(state(g), before, `state restored after ${breach}`);
  }
  assert(conn !== (g as unknown as { db: unknown }).db, "a fresh connection replaced the breached one");
  g.close();
});
