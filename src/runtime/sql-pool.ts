// A pool of sql.js workers (workers/sql.worker.ts) answering read-only queries with a time limit.
// The limit is enforced inside the worker: SQLite's progress callback interrupts the query
// (sql-interrupt.ts) and the worker answers "timeout" and stays. Where that is not available, or a
// query still does not come back (one long call inside an SQL function checks nothing), the pool
// terminates the worker after a grace period and starts a fresh one; jobs go only to workers that
// have started, so a replacement does not hold up the queue. One query in flight per worker, so
// the timer measures that query alone; queued queries go preferably to a worker that already holds
// their database.
import * as Comlink from "comlink";
import type { SqlWorkerApi, SqlWorkerInfo, WorkerReply } from "../../workers/sql.api.ts";
import { DEFAULT_LIMITS, type QueryReply, type SqlLimits } from "./sql-exec.ts";

export type { QueryReply, SqlLimits };

/**
 * The platform's Worker as it was when this module loaded. onnxruntime-web's threaded wasm is
 * Emscripten code that, where it sees Node (Deno's Node compatibility counts), replaces
 * `globalThis.Worker` with `worker_threads.Worker`, which has no `addEventListener`: a worker spawned
 * after the first ORT session (a respawn after a query timeout) must not pick that one up.
 */
const PlatformWorker: typeof Worker | undefined = globalThis.Worker;

/** How to build a pool. Only `loadDatabase` is required. */
export interface SqlPoolOptions {
  /** The bytes of a database file, by id; a rejection becomes a `DatabaseLoadError`. */
  loadDatabase: (dbId: string) => Promise<Uint8Array>;
  /** Number of workers; default `navigator.hardwareConcurrency`. */
  workers?: number;
  /** Per-query time limit in milliseconds; default 30000 as in BIRD's scripts. */
  timeoutMs?: number;
  /**
   * Let workers interrupt a query at its limit (default true). False restores the kill-only
   * behaviour (the worker is terminated at the limit): benchmarks compare the two.
   */
  interrupts?: boolean;
  limits?: Partial<SqlLimits>;
  /** Databases each worker keeps open (default 16) and their bytes (default 1 GiB, counted twice). */
  maxDatabases?: number;
  maxCacheBytes?: number;
  /** URL of sql.js's wasm for the browser build (see sql-browser.ts); omitted under Deno. */
  wasmUrl?: string;
  /**
   * Makes a worker; the default is the module Worker workers/sql.worker.ts. Under Deno pass
   * `spawnSqlProcess` (sql-process.deno.ts): Deno cannot stop a Worker stuck in a query.
   */
  createWorker?: () => SqlWorkerHandle;
}

/** What the pool needs of a worker: a comlink endpoint it can terminate, reporting death as an "error" event. */
export interface SqlWorkerHandle extends Comlink.Endpoint {
  terminate(): void;
}

/** Per-call overrides of the pool's time limit and result caps. */
export interface QueryOptions {
  timeoutMs?: number;
  limits?: Partial<SqlLimits>;
}

/** A database could not be read (missing file, not SQLite): a setup problem, not a wrong answer. */
export class DatabaseLoadError extends Error {
  constructor(readonly dbId: string, cause: unknown) {
    super(`database "${dbId}": ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = "DatabaseLoadError";
  }
}

/** Counters since the pool started. */
export interface SqlPoolStats {
  queries: number;
  /** Queries that ran out of time: stopped inside their worker (`interrupts`) or by killing it. */
  timeouts: number;
  interrupts: number;
  respawns: number;
  loads: number;
}

/** How long past its limit a query may run in an interruptible worker before the worker is killed. */
export function killAfterMs(timeoutMs: number): number {
  return 2 * timeoutMs + 1000;
}

interface Job {
  dbId: string;
  sql: string;
  limits: SqlLimits;
  timeoutMs: number;
  resolve: (r: QueryReply) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: SqlWorkerHandle;
  remote: Comlink.Remote<SqlWorkerApi>;
  ready: Promise<void>;
  /** Rejects when the worker dies on its own (uncaught error, out of memory). */
  died: Promise<never>;
  /** "starting" until init answers; only started (or failed, to report it) workers take jobs. */
  state: "starting" | "ready" | "failed";
  interruptible: boolean;
  busy: boolean;
  dead: boolean;
  /** Databases this worker is believed to hold, most recent last (a hint: misses are handled). */
  held: string[];
}

function defaultWorker(): SqlWorkerHandle {
  if (!PlatformWorker) throw new Error("SqlPool: this runtime has no Worker; pass createWorker");
  const w = spawnSqlWorker(PlatformWorker);
  if (typeof w.addEventListener !== "function") {
    throw new Error("SqlPool: the runtime's Worker is not a web Worker (no addEventListener)");
  }
  return w;
}

/**
 * Keeps the literal `new Worker(new URL(...), ...)` form that Vite recognises to bundle the worker
 * for the page; `Worker` here is the parameter, the constructor captured at module load.
 */
function spawnSqlWorker(Worker: typeof globalThis.Worker): Worker {
  return new Worker(new URL("../../workers/sql.worker.ts", import.meta.url), { type: "module", name: "sql" });
}

/** Pool of SQL workers; `query` never throws for a bad query, only for a database that cannot load. */
export class SqlPool {
  readonly size: number;
  readonly timeoutMs: number;
  readonly limits: SqlLimits;
  private readonly slots: Slot[] = [];
  private queue: Job[] = [];
  private closed = false;
  private readonly counters: SqlPoolStats = { queries: 0, timeouts: 0, interrupts: 0, respawns: 0, loads: 0 };

  constructor(private readonly opts: SqlPoolOptions) {
    this.size = Math.max(1, Math.floor(opts.workers ?? globalThis.navigator?.hardwareConcurrency ?? 1));
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.limits = { ...DEFAULT_LIMITS, ...opts.limits };
    for (let i = 0; i < this.size; i++) this.slots.push(this.spawn());
  }

  /** Runs one read-only query on database `dbId`. */
  query(dbId: string, sql: string, o: QueryOptions = {}): Promise<QueryReply> {
    if (this.closed) return Promise.reject(new Error("SqlPool is closed"));
    return new Promise((resolve, reject) => {
      this.queue.push({
        dbId,
        sql,
        limits: { ...this.limits, ...o.limits },
        timeoutMs: o.timeoutMs ?? this.timeoutMs,
        resolve,
        reject,
      });
      this.pump();
    });
  }

  /** Waits until every worker has loaded sql.js (useful before timing). */
  async ready(): Promise<void> {
    await Promise.all(this.slots.map((s) => s.ready));
  }

  /** Counters since the pool started. */
  stats(): SqlPoolStats {
    return { ...this.counters };
  }

  /** Terminates the workers; queued queries reject. */
  close(): void {
    this.closed = true;
    for (const s of this.slots) this.kill(s);
    for (const j of this.queue.splice(0)) j.reject(new Error("SqlPool closed"));
  }

  private spawn(): Slot {
    const worker = this.opts.createWorker?.() ?? defaultWorker();
    const remote = Comlink.wrap<SqlWorkerApi>(worker);
    const died = new Promise<never>((_, reject) => {
      worker.addEventListener("error", (ev: Event) => {
        ev.preventDefault();
        reject(new Error(`sql worker died: ${(ev instanceof ErrorEvent && ev.message) || "unknown error"}`));
      });
    });
    const init: Promise<SqlWorkerInfo> = Promise.race([
      remote.init({
        wasmUrl: this.opts.wasmUrl,
        maxDatabases: this.opts.maxDatabases ?? 16,
        maxCacheBytes: this.opts.maxCacheBytes ?? 2 ** 30,
      }),
      died,
    ]);
    const slot: Slot = {
      worker,
      remote,
      ready: init.then(() => undefined),
      died,
      state: "starting",
      interruptible: false,
      busy: false,
      dead: false,
      held: [],
    };
    slot.ready.catch(() => undefined);
    died.catch(() => (slot.dead = true));
    init.then(
      (info) => {
        slot.state = "ready";
        slot.interruptible = info.interruptible === true && this.opts.interrupts !== false;
      },
      () => (slot.state = "failed"),
    ).finally(() => this.pump());
    return slot;
  }

  private kill(s: Slot): void {
    s.remote[Comlink.releaseProxy]();
    s.worker.terminate();
  }

  private respawn(i: number): void {
    this.kill(this.slots[i]);
    this.counters.respawns++;
    this.slots[i] = this.spawn();
  }

  /** Gives idle workers work: first jobs whose database they hold, then the oldest jobs. */
  private pump(): void {
    if (this.closed) return;
    for (let i = 0; i < this.slots.length && this.queue.length > 0; i++) {
      const s = this.slots[i];
      if (s.busy || s.state === "starting") continue;
      const window = Math.min(this.queue.length, 256);
      let k = 0;
      for (let j = 0; j < window; j++) {
        if (s.held.includes(this.queue[j].dbId)) {
          k = j;
          break;
        }
      }
      const [job] = this.queue.splice(k, 1);
      void this.run(i, job);
    }
  }

  private async run(i: number, job: Job): Promise<void> {
    const s = this.slots[i];
    s.busy = true;
    this.counters.queries++;
    try {
      job.resolve(await this.execute(i, s, job));
    } catch (e) {
      job.reject(e instanceof Error ? e : new Error(String(e)));
    } finally {
      // After a respawn the slot holds a new worker, which is idle.
      s.busy = false;
      this.pump();
    }
  }

  private async execute(i: number, s: Slot, job: Job): Promise<QueryReply> {
    try {
      await s.ready;
      for (let attempt = 0; attempt < 2; attempt++) {
        if (!s.held.includes(job.dbId)) await this.open(s, job.dbId);
        const reply = await this.timed(i, s, job);
        if (reply.ok !== "missing") return reply;
        s.held = s.held.filter((d) => d !== job.dbId);
      }
      throw new Error(`worker lost database "${job.dbId}" right after opening it`);
    } catch (e) {
      // A dead worker is replaced whatever the cause.
      if (s.dead && this.slots[i] === s) this.respawn(i);
      if (e instanceof DatabaseLoadError) throw e;
      // The worker misbehaved: replace it; the query gets the blame only as "worker".
      if (this.slots[i] === s) this.respawn(i);
      return { ok: false, error: { kind: "worker", message: e instanceof Error ? e.message : String(e) }, ms: 0 };
    }
  }

  private async open(s: Slot, dbId: string): Promise<void> {
    let bytes: Uint8Array;
    try {
      bytes = await this.opts.loadDatabase(dbId);
    } catch (e) {
      throw new DatabaseLoadError(dbId, e);
    }
    this.counters.loads++;
    // Copied, not transferred: the loader may hand out bytes it keeps (a browser cache).
    try {
      await Promise.race([s.remote.open(dbId, bytes), s.died]);
    } catch (e) {
      // Not SQLite, or so large the worker died loading it: the database is unusable either way.
      throw new DatabaseLoadError(dbId, e);
    }
    s.held = [...s.held.filter((d) => d !== dbId), dbId].slice(-(this.opts.maxDatabases ?? 16));
  }

  /**
   * The query with its limits: the worker interrupts it at `timeoutMs` where it can; the pool kills
   * the worker at `timeoutMs` (not interruptible) or `killAfterMs(timeoutMs)` and says so.
   */
  private timed(i: number, s: Slot, job: Job): Promise<WorkerReply> {
    const t0 = performance.now();
    const killAt = s.interruptible ? killAfterMs(job.timeoutMs) : job.timeoutMs;
    return new Promise<WorkerReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.counters.timeouts++;
        this.respawn(i);
        resolve({
          ok: false,
          error: { kind: "timeout", message: `no answer within ${Math.round(killAt)} ms (worker replaced)` },
          ms: performance.now() - t0,
        });
      }, killAt);
      Promise.race([s.remote.query(job.dbId, job.sql, job.limits, s.interruptible ? job.timeoutMs : Infinity), s.died])
        .then(
          (r) => {
            clearTimeout(timer);
            if (r.ok === false && r.error.kind === "timeout") {
              this.counters.timeouts++;
              this.counters.interrupts++;
            }
            resolve(r);
          },
          (e) => {
            clearTimeout(timer);
            reject(e);
          },
        );
    });
  }
}
