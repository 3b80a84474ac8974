// The per-query deadline inside sql.js (sql-interrupt.ts through GuardedDatabase): runaway SQL of
// the kinds a policy writes is stopped inside SQLite at its limit, the connection keeps answering,
// a query within its limit returns exactly what it returns with no limit, and the support survives
// a reload of the connection.
import { assert, assertEquals } from "../../tests/assert.ts";
import { DEFAULT_LIMITS, GuardedDatabase, type QueryReply } from "./sql-exec.ts";
import { PROGRESS_OPS } from "./sql-interrupt.ts";
import { loadSqlJs } from "./sql-wasm.ts";

const SQL = await loadSqlJs();

/** a(i) 1..2000 and b(j, s) 1..3000: a x b is 6 million rows, enough to run for seconds. */
function fixture(): Uint8Array {
  const db = new SQL.Database();
  db.exec(
    "CREATE TABLE a(i INTEGER PRIMARY KEY); CREATE TABLE b(j INTEGER PRIMARY KEY, s TEXT);" +
      "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n+1 FROM c WHERE n < 3000) INSERT INTO b SELECT n, 'row ' || n FROM c;" +
      "INSERT INTO a SELECT j FROM b WHERE j <= 2000;",
  );
  const bytes = db.export();
  db.close();
  return bytes;
}
const BYTES = fixture();

// What the demo policy's samples run into (docs/evaluator.md, "Time limits").
const RUNAWAY: Record<string, string> = {
  "endless recursive CTE": "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT max(i) FROM c",
  "cartesian count": "SELECT count(*) FROM a, b, a AS a2",
  "cartesian result": "SELECT a.i, b.s, a2.i FROM a, b, a AS a2",
  "join on itself (c.id = c.id)": "SELECT count(*) FROM a JOIN b ON b.j = b.j JOIN a AS a2 ON a2.i = a2.i",
  "correlated subquery per row": "SELECT i, (SELECT count(*) FROM b AS x, b AS y WHERE x.j < y.j AND y.j > a.i) FROM a",
  "ORDER BY over a product": "SELECT a.i, b.j FROM a, b ORDER BY b.s DESC, a.i",
};

function kind(r: QueryReply): string {
  return r.ok ? "ok" : r.error.kind;
}

Deno.test("sql-interrupt: this sql.js build passes the deadline self-check", () => {
  assert(SQL.deadlines !== null, `no deadlines: ${SQL.noDeadlines}`);
  const g = new GuardedDatabase(SQL, BYTES);
  assert(g.interruptible, "a guarded connection takes the progress callback");
  g.close();
});

Deno.test("sql-interrupt: runaway queries stop inside SQLite at their limit; the same connection answers next, unchanged", () => {
  const g = new GuardedDatabase(SQL, BYTES);
  const limit = 150;
  for (const [name, sql] of Object.entries(RUNAWAY)) {
    const t0 = performance.now();
    const r = g.query(sql, DEFAULT_LIMITS, limit);
    const wall = performance.now() - t0;
    assertEquals(kind(r), "timeout", name);
    assert(!r.ok && /interrupted after \d+ ms \(limit 150 ms\)/.test(r.error.message), `${name}: ${JSON.stringify(r)}`);
    // Timings are not asserted in tests beyond "it came back at all": a bound far above the limit.
    assert(wall < 60_000, `${name} came back after ${wall} ms`);
    assert(g.isPristine(), `${name} left the connection changed`);
    const next = g.query("SELECT count(*), sum(i) FROM a", DEFAULT_LIMITS, limit);
    assert(next.ok, `query after ${name}`);
    assertEquals(next.result.rows, [[2000n, 2001000n]]);
  }
  assertEquals(g.reloads, 0);
  g.close();
});

Deno.test("sql-interrupt: within its limit a query returns what it returns with no limit; no limit means none", () => {
  const g = new GuardedDatabase(SQL, BYTES);
  for (
    const sql of [
      "SELECT b.j, b.s FROM b ORDER BY s",
      "SELECT count(*) FROM a, b WHERE a.i = b.j",
      "SELECT group_concat(s) FROM b",
    ]
  ) {
    const free = g.query(sql, DEFAULT_LIMITS);
    const limited = g.query(sql, DEFAULT_LIMITS, 60_000);
    assert(free.ok && limited.ok, sql);
    assertEquals(limited.result, free.result, sql);
  }
  // Many progress callbacks, none of which stops a query with no limit.
  const before = SQL.deadlines?.calls ?? 0;
  const long = g.query("SELECT count(*) FROM a, b WHERE (a.i + b.j) % 7 = 0", DEFAULT_LIMITS);
  assert(long.ok, "a long query with no limit finishes");
  assert(
    (SQL.deadlines?.calls ?? 0) - before > 1000,
    `the callback ran ${(SQL.deadlines?.calls ?? 0) - before} times (every ${PROGRESS_OPS} opcodes)`,
  );
  g.close();
});

Deno.test("sql-interrupt: a reloaded connection (after a breach) is interruptible again", () => {
  const g = new GuardedDatabase(SQL, BYTES);
  (g as unknown as { db: { exec(sql: string): unknown } }).db.exec("PRAGMA query_only=0");
  assert(g.query("SELECT 1", DEFAULT_LIMITS).ok);
  assertEquals(g.reloads, 1);
  assert(g.interruptible, "the fresh connection took the callback");
  assertEquals(kind(g.query(RUNAWAY["cartesian count"], DEFAULT_LIMITS, 100)), "timeout");
  g.close();
});
