import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { DatabaseLoadError, SqlPool } from "./sql-pool.ts";
import { encodeFrame, FrameDecoder, spawnSqlProcess } from "./sql-process.deno.ts";
import { loadSqlJs } from "./sql-wasm.ts";

const SQL = await loadSqlJs();

function makeDb(rows: number): Uint8Array {
  const db = new SQL.Database();
  db.exec(
    `CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < ${rows}) INSERT INTO t SELECT i, 'v' || i FROM c;`,
  );
  const bytes = (db as unknown as { export(): Uint8Array }).export();
  db.close();
  return bytes;
}

const DBS: Record<string, Uint8Array> = {
  a: makeDb(10),
  b: makeDb(20),
  junk: new TextEncoder().encode("this is not a database, just text of some length ".repeat(20)),
};
const loader = (
  id: string,
) => (id in DBS ? Promise.resolve(DBS[id].slice()) : Promise.reject(new Error(`no database file for ${id}`)));

const RUNAWAY = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT max(i) FROM c";

Deno.test({
  name:
    "sql-pool: a runaway recursive CTE is interrupted inside its worker at the limit; the same worker answers the next query",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const pool = new SqlPool({ loadDatabase: loader, workers: 1, timeoutMs: 300 });
    try {
      const first = await pool.query("a", "SELECT count(*) FROM t");
      assert(first.ok, "first query");
      assertEquals(first.result.rows, [[10n]]);
      const t = await pool.query("a", RUNAWAY);
      assert(!t.ok && t.error.kind === "timeout", `expected a timeout, got ${JSON.stringify(t)}`);
      assert(t.ms >= 290, `timed out after ${t.ms} ms`);
      const after = await pool.query("a", "SELECT sum(id) FROM t");
      assert(after.ok, "query after the timeout");
      assertEquals(after.result.rows, [[55n]]);
      // A query that is merely slow but within a per-call limit still answers.
      const slow = await pool.query(
        "b",
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < 200000) SELECT count(*) FROM c",
        { timeoutMs: 20_000 },
      );
      assert(slow.ok, "slow query within its limit");
      assertEquals(slow.result.rows, [[200000n]]);
      const st = pool.stats();
      assertEquals([st.timeouts, st.interrupts, st.respawns], [1, 1, 0]);
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name:
    "sql-pool: with interrupts off a runaway recursive CTE times out by replacing the worker; the next query is answered",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const pool = new SqlPool({
      loadDatabase: loader,
      workers: 1,
      timeoutMs: 300,
      interrupts: false,
      createWorker: spawnSqlProcess,
    });
    try {
      const t = await pool.query("a", RUNAWAY);
      assert(!t.ok && t.error.kind === "timeout", `expected a timeout, got ${JSON.stringify(t)}`);
      assert(t.ms >= 290, `timed out after ${t.ms} ms`);
      const after = await pool.query("a", "SELECT sum(id) FROM t");
      assert(after.ok, "query after the timeout");
      assertEquals(after.result.rows, [[55n]]);
      const st = pool.stats();
      assertEquals([st.timeouts, st.interrupts, st.respawns], [1, 0, 1]);
    } finally {
      pool.close();
    }
  },
});

// One long C call (replace() over 100 MB): SQLite checks no progress callback inside it, so only
// the pool's kill can end it. Several seconds of CPU, far past the kill at killAfterMs(100) = 1.2 s.
// One C call of sqlite's (no VDBE step for the interrupt to land on), long past killAfterMs(100) = 1.2 s: one replace
// of 100M characters alone ended in 1.07 s on a fast machine, so the string is replaced twice.
const STUCK_IN_C = "SELECT length(replace(replace(printf('%.*c', 100000000, 'a'), 'a', 'bb'), 'b', 'c'))";

Deno.test({
  name:
    "sql-pool: a query the interrupt cannot reach is ended by killing its worker; the other worker keeps answering meanwhile",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // Subprocesses: a killed one stops for real (a Deno Worker would spin on until the C call ends).
    const pool = new SqlPool({ loadDatabase: loader, workers: 2, timeoutMs: 100, createWorker: spawnSqlProcess });
    try {
      await pool.ready();
      const order: string[] = [];
      const stuck = pool.query("a", STUCK_IN_C).then((r) => {
        order.push("stuck");
        return r;
      });
      const quick = Array.from(
        { length: 40 },
        (_, i) =>
          pool.query(i % 2 ? "a" : "b", "SELECT sum(id) FROM t").then((r) => {
            order.push("quick");
            return r.ok ? r.result.rows[0][0] : r.error.kind;
          }),
      );
      const sums = await Promise.all(quick);
      assertEquals(sums, Array.from({ length: 40 }, (_, i) => (i % 2 ? 55n : 210n)));
      const t = await stuck;
      assert(
        !t.ok && t.error.kind === "timeout" && /worker replaced/.test(t.error.message),
        `expected a kill, got ${JSON.stringify(t, (_k, v) => typeof v === "bigint" ? String(v) : v)}`,
      );
      assertEquals(order.indexOf("stuck"), 40, "the quick queries did not wait behind the stuck one");
      const after = await Promise.all([
        pool.query("a", "SELECT count(*) FROM t"),
        pool.query("b", "SELECT count(*) FROM t"),
      ]);
      assertEquals(after.map((r) => (r.ok ? r.result.rows : r.error.kind)), [[[10n]], [[20n]]]);
      const st = pool.stats();
      assertEquals([st.timeouts, st.interrupts, st.respawns], [1, 0, 1]);
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name:
    "sql-pool: a respawn after a timeout still makes a web Worker when globalThis.Worker was replaced (as onnxruntime-web's Emscripten code does under Deno)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // Interrupts off: the respawn path is what this pins.
    const pool = new SqlPool({ loadDatabase: loader, workers: 1, timeoutMs: 300, interrupts: false });
    const original = globalThis.Worker;
    // What Emscripten's Node path installs: worker_threads' Worker, an EventEmitter without addEventListener.
    const { Worker: NodeWorker } = await import("node:worker_threads");
    (globalThis as { Worker: unknown }).Worker = NodeWorker;
    try {
      assert((await pool.query("a", "SELECT count(*) FROM t")).ok, "first query");
      const t = await pool.query("a", RUNAWAY);
      assert(!t.ok && t.error.kind === "timeout", `expected a timeout, got ${JSON.stringify(t)}`);
      // Generous limit: the timed-out worker may still spin (Deno cannot stop a Worker inside a query).
      const after = await pool.query("a", "SELECT sum(id) FROM t", { timeoutMs: 20_000 });
      assert(
        after.ok,
        `query on the respawned worker: ${after.ok ? "" : after.error.kind + ": " + after.error.message}`,
      );
      assertEquals(after.result.rows, [[55n]]);
      assertEquals(pool.stats().respawns, 1);
    } finally {
      (globalThis as { Worker: unknown }).Worker = original;
      pool.close();
    }
  },
});

Deno.test({
  name: "sql-pool: two workers answer concurrent queries on several databases; a timeout on one spares the others",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const pool = new SqlPool({ loadDatabase: loader, workers: 2, timeoutMs: 400 });
    try {
      const jobs: Promise<unknown>[] = [];
      const want: [string, bigint][] = [];
      for (let i = 0; i < 60; i++) {
        const db = i % 3 === 0 ? "b" : "a";
        want.push([db, db === "a" ? 55n : 210n]);
        jobs.push(pool.query(db, "SELECT sum(id) FROM t").then((r) => (r.ok ? r.result.rows[0][0] : r.error.kind)));
        if (i === 30) jobs.push(pool.query("a", RUNAWAY).then((r) => (r.ok ? "ok" : r.error.kind)));
      }
      const got = await Promise.all(jobs);
      const timeout = got.splice(31, 1);
      assertEquals(timeout, ["timeout"]);
      assertEquals(got, want.map(([, v]) => v));
      assertEquals(pool.stats().timeouts, 1);
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name: "sql-pool: a missing or non-SQLite database is a DatabaseLoadError naming it; other queries go on",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const pool = new SqlPool({ loadDatabase: loader, workers: 1, timeoutMs: 5000 });
    try {
      const e = await assertRejects(() => pool.query("nope", "SELECT 1"), /database "nope": no database file/);
      assert(e instanceof DatabaseLoadError && e.dbId === "nope");
      await assertRejects(() => pool.query("junk", "SELECT 1"), /database "junk".*not a usable SQLite database/);
      const ok = await pool.query("a", "SELECT count(*) FROM t");
      assert(ok.ok);
      assertEquals(ok.result.rows, [[10n]]);
      const bad = await pool.query("a", "DROP TABLE t");
      assert(!bad.ok && bad.error.kind === "forbidden");
      const still = await pool.query("a", "SELECT count(*) FROM t");
      assert(still.ok);
      assertEquals(still.result.rows, [[10n]]);
    } finally {
      pool.close();
    }
  },
});

Deno.test({
  name: "sql-pool: subprocess workers (Deno) interrupt a runaway query too; values keep their types across the pipe",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const pool = new SqlPool({ loadDatabase: loader, workers: 1, timeoutMs: 300, createWorker: spawnSqlProcess });
    try {
      const typed = await pool.query("a", "SELECT 9007199254740993, 6.0, '6', x'00ff', NULL, v FROM t WHERE id = 2");
      assert(typed.ok);
      assertEquals(typed.result.rows, [[9007199254740993n, 6, "6", new Uint8Array([0, 255]), null, "v2"]]);
      const t = await pool.query("a", RUNAWAY);
      assert(!t.ok && t.error.kind === "timeout", `expected a timeout, got ${JSON.stringify(t)}`);
      const after = await pool.query("a", "SELECT sum(id) FROM t");
      assert(after.ok);
      assertEquals(after.result.rows, [[55n]]);
      await assertRejects(() => pool.query("nope", "SELECT 1"), /database "nope"/);
    } finally {
      pool.close();
    }
  },
});

Deno.test("sql-process: frames survive arbitrary chunking", () => {
  const msgs = [{ id: "1", value: [1n, "x", new Uint8Array([7])] }, "two", { big: "y".repeat(100_000) }];
  const bytes = new Uint8Array(msgs.map(encodeFrame).reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of msgs.map(encodeFrame)) {
    bytes.set(f, at);
    at += f.length;
  }
  const dec = new FrameDecoder();
  const got: unknown[] = [];
  for (let i = 0; i < bytes.length;) {
    const n = 1 + ((i * 7919) % 5000);
    got.push(...dec.push(bytes.subarray(i, i + n)));
    i += n;
  }
  assertEquals(got, msgs);
});

Deno.test("sql-process: a 64 MiB frame in 64 KiB chunks decodes whole", () => {
  // The database bytes of a large Spider/BIRD file reach a child this way. Merging every chunk into
  // the buffered rest (the old decoder) copied ~1,000 x 32 MiB on average here: tens of seconds;
  // queued chunks copy each byte once.
  const big = new Uint8Array(64 << 20);
  for (let i = 0; i < big.length; i += 4099) big[i] = i & 255;
  const frame = encodeFrame({ db: "x", bytes: big });
  const dec = new FrameDecoder();
  const got: unknown[] = [];
  const t0 = performance.now();
  for (let i = 0; i < frame.length; i += 65536) got.push(...dec.push(frame.subarray(i, i + 65536)));
  const ms = performance.now() - t0;
  assertEquals(got.length, 1);
  const m = got[0] as { db: string; bytes: Uint8Array };
  assertEquals(m.db, "x");
  assertEquals(m.bytes.length, big.length);
  for (let i = 0; i < big.length; i += 4099) if (m.bytes[i] !== (i & 255)) throw new Error(`byte ${i} differs`);
  console.log(`64 MiB frame in ${frame.length / 65536 | 0} chunks: ${ms.toFixed(0)} ms`);
});
