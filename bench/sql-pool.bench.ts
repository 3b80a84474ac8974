// Benchmark (not a test): queries per second of the SQL pool on Spider-train gold queries, with 1
// and 2 workers (module Workers, and Deno subprocesses), next to sql.js in-process (no worker) and
// native SQLite in-process (Deno's node:sqlite), in interleaved rounds so that the shared machine's
// changing load hits every engine alike; plus the cost of a timeout (from the timeout to the next
// query answered), with the query interrupted inside its worker (the default) and by killing the
// worker (interrupts: false). "in_process_no_callback" is the in-process engine without the
// progress callback that enforces time limits (sql-interrupt.ts): the callback's cost.
// bench/sql-native.mjs measures better-sqlite3 under Node on the same queries.
// Usage: deno run -A bench/sql-pool.bench.ts [../shared/datasets/spider-train] [rounds=3] [timeouts]
//        (`timeouts`: only the timeout costs)
import { readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { DEFAULT_LIMITS, GuardedDatabase } from "../src/runtime/sql-exec.ts";
import { fileDatabaseLoader } from "../src/runtime/sql-files.deno.ts";
import { SqlPool, type SqlWorkerHandle } from "../src/runtime/sql-pool.ts";
import { spawnSqlProcess } from "../src/runtime/sql-process.deno.ts";
import { loadSqlJs } from "../src/runtime/sql-wasm.ts";

const root = Deno.args[0] ?? new URL("../../shared/datasets/spider-train", import.meta.url).pathname;
const rounds = Number(Deno.args[1] ?? 3);
const all: { db_id: string; query: string }[] = readFileSync(`${root}/questions.jsonl`, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));
// The subset native SQLite (better-sqlite3, SQLITE_DQS=0) can run: no double-quoted literals.
const items = all.filter((q) => !q.query.includes('"'));
const loader = fileDatabaseLoader(`${root}/database`);

/** One engine: runs every query once, returns how many ran. */
type Engine = () => Promise<number>;

/** Native SQLite in this process, every row read with 64-bit integers as bigint. */
function nativeEngine(): Engine {
  const dbs = new Map<string, DatabaseSync>();
  return () => {
    let ok = 0;
    for (const q of items) {
      let db = dbs.get(q.db_id);
      if (!db) dbs.set(q.db_id, (db = new DatabaseSync(`${root}/database/${q.db_id}/${q.db_id}.sqlite`, { readOnly: true })));
      try {
        const st = db.prepare(q.query);
        st.setReadBigInts(true);
        st.all();
        ok++;
      } catch {
        // The 3 golds that fail to run anywhere.
      }
    }
    return Promise.resolve(ok);
  };
}

/** sql.js on the main thread through the same guard as the workers: the pool's per-core ceiling. */
async function inProcessEngine(callback = true): Promise<Engine> {
  const loaded = await loadSqlJs();
  const SQL = callback ? loaded : { ...loaded, Database: loaded.Database, deadlines: null };
  const dbs = new Map<string, GuardedDatabase>();
  for (const q of items) if (!dbs.has(q.db_id)) dbs.set(q.db_id, new GuardedDatabase(SQL, await loader(q.db_id)));
  return () => {
    let ok = 0;
    for (const q of items) if (dbs.get(q.db_id)?.query(q.query, DEFAULT_LIMITS, 30_000).ok) ok++;
    return Promise.resolve(ok);
  };
}

/** The pool, 4 queries in flight per worker, in file order (grouped by database). */
function poolEngine(pool: SqlPool): Engine {
  return async () => {
    let ok = 0;
    let next = 0;
    await Promise.all(Array.from({ length: 4 * pool.size }, async () => {
      while (next < items.length) {
        const q = items[next++];
        if ((await pool.query(q.db_id, q.query)).ok) ok++;
      }
    }));
    return ok;
  };
}

/** Time from a query's timeout to the next query on the same (only) worker being answered. */
async function timeoutCost(trials: number, createWorker?: () => SqlWorkerHandle, interrupts = true) {
  const timeoutMs = 200;
  const pool = new SqlPool({ loadDatabase: loader, workers: 1, timeoutMs, createWorker, interrupts });
  await pool.ready();
  const probe = items.find((q) => q.db_id === "flight_4") ?? items[0];
  await pool.query(probe.db_id, probe.query, { timeoutMs: 60_000 });
  const recover: number[] = [];
  for (let i = 0; i < trials; i++) {
    const r = await pool.query(probe.db_id, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT max(i) FROM c");
    const t = performance.now();
    if (r.ok || r.error.kind !== "timeout") throw new Error("expected a timeout");
    const next = await pool.query(probe.db_id, probe.query, { timeoutMs: 60_000 });
    if (!next.ok) throw new Error(`query after timeout failed: ${next.error.message}`);
    recover.push(Math.round(performance.now() - t));
  }
  pool.close();
  // CPU this process burns in the next second while idle: Deno's terminated Workers keep spinning.
  const c0 = cpuSeconds();
  const w0 = performance.now();
  await new Promise((r) => setTimeout(r, 1000));
  const idle = (cpuSeconds() - c0) / ((performance.now() - w0) / 1000);
  const sorted = [...recover].sort((a, b) => a - b);
  return { timeout_ms: timeoutMs, recover_ms: recover, median_recover_ms: sorted[Math.floor(sorted.length / 2)], idle_cpu_s_per_s_after: Number(idle.toFixed(2)) };
}

/** CPU seconds of this process (all threads), its reaped children and its live children (subprocess workers). */
function cpuSeconds(): number {
  const fields = (pid: string) => Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ").map(Number);
  const f = fields("self");
  let ticks = f[11] + f[12] + f[13] + f[14];
  for (const t of Deno.readDirSync("/proc/self/task")) {
    for (const pid of Deno.readTextFileSync(`/proc/self/task/${t.name}/children`).split(" ").filter(Boolean)) {
      try {
        const c = fields(pid);
        ticks += c[11] + c[12];
      } catch {
        // Exited in between: counted in the reaped children's time once waited for.
      }
    }
  }
  return ticks / 100;
}

const cores = navigator.hardwareConcurrency;
if (Deno.args[2] === "timeouts") {
  // Interrupts first: the kill trials with module Workers leave spinning threads behind.
  const out: Record<string, unknown> = { load_average: Deno.loadavg() };
  out.interrupt_worker = await timeoutCost(5);
  out.interrupt_process = await timeoutCost(5, spawnSqlProcess);
  out.kill_process = await timeoutCost(5, spawnSqlProcess, false);
  out.kill_worker = await timeoutCost(5, undefined, false);
  console.log(JSON.stringify(out));
  Deno.exit(0);
}
console.error(`sql-pool bench: ${items.length} Spider-train gold queries (of ${all.length}), ${cores} cores, ${rounds} rounds`);
// Enough cache for every Spider database, so the timed rounds measure queries, not loads.
const mkPool = (workers: number, createWorker?: () => SqlWorkerHandle) => new SqlPool({ loadDatabase: loader, workers, maxDatabases: 200, createWorker });
const pools = { worker_1: mkPool(1), worker_2: mkPool(2), process_1: mkPool(1, spawnSqlProcess), process_2: mkPool(2, spawnSqlProcess) };
const engines: Record<string, Engine> = { native: nativeEngine(), in_process: await inProcessEngine(), in_process_no_callback: await inProcessEngine(false) };
for (const [k, p] of Object.entries(pools)) engines[`pool_${k}`] = poolEngine(p);
for (const [name, run] of Object.entries(engines)) {
  const ok = await run(); // warm: loads every database, compiles the hot paths
  if (ok !== 5411) console.error(`warning: ${name} ran ${ok} queries, expected 5411`);
}
const runs: Record<string, { qps: number; qps_per_cpu_s: number }[]> = {};
for (let r = 0; r < rounds; r++) {
  for (const [name, run] of Object.entries(engines)) {
    const t0 = performance.now();
    const c0 = cpuSeconds();
    await run();
    const wall = (performance.now() - t0) / 1000;
    const cpu = cpuSeconds() - c0;
    (runs[name] ??= []).push({ qps: Math.round(items.length / wall), qps_per_cpu_s: Math.round(items.length / cpu) });
  }
  console.error(`round ${r + 1}`, JSON.stringify(Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, v[r]]))));
}
for (const p of Object.values(pools)) p.close();
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const result: Record<string, unknown> = { queries: items.length, cores, rounds, load_average: Deno.loadavg() };
for (const [name, v] of Object.entries(runs)) {
  result[name] = {
    best_qps: Math.max(...v.map((x) => x.qps)),
    best_qps_per_cpu_s: Math.max(...v.map((x) => x.qps_per_cpu_s)),
    // Same-round ratios to native: wall time, and CPU time (per core).
    ratio_wall_median: Number(median(v.map((x, i) => x.qps / runs.native[i].qps)).toFixed(2)),
    ratio_cpu_median: Number(median(v.map((x, i) => x.qps_per_cpu_s / runs.native[i].qps_per_cpu_s)).toFixed(2)),
  };
}
// Interrupts, then kills of processes, then of Workers: killed Workers leave spinning threads behind.
result.timeout_interrupt_worker = await timeoutCost(5);
result.timeout_interrupt_process = await timeoutCost(5, spawnSqlProcess);
result.timeout_kill_process = await timeoutCost(5, spawnSqlProcess, false);
console.error("timeouts", JSON.stringify([result.timeout_interrupt_worker, result.timeout_interrupt_process, result.timeout_kill_process]));
result.timeout_kill_worker = await timeoutCost(5, undefined, false);
console.error("timeout kill worker", JSON.stringify(result.timeout_kill_worker));
console.log(JSON.stringify(result));
// Deno does not stop a worker stuck in a loop on terminate() (see docs/evaluator.md): exit explicitly.
Deno.exit(0);
