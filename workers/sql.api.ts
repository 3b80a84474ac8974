// The comlink contract of workers/sql.worker.ts, imported by both sides (src/runtime/sql-pool.ts).
import type { QueryReply, SqlLimits } from "../src/runtime/sql-exec.ts";

export type { QueryReply, SqlLimits };

/** How a worker starts: where its wasm is (browser) and how many databases it may keep open. */
export interface SqlWorkerInit {
  /** URL of sql.js's wasm matching the build the worker imports; omitted under Deno. */
  wasmUrl?: string;
  maxDatabases: number;
  maxCacheBytes: number;
}

/** What a started worker can do: whether its queries stop themselves at their time limit (and if not, why). */
export interface SqlWorkerInfo {
  interruptible: boolean;
  why?: string;
}

/** A query's reply, or "missing" when the worker does not hold that database (any more). */
export type WorkerReply = QueryReply | { ok: "missing" };

/**
 * The API one SQL worker exposes. It owns its SQLite handles; calls are serialized by the pool
 * (one in flight per worker). A query stops itself after `timeMs` where the worker is interruptible;
 * one that still does not return is ended by terminating the worker.
 */
export interface SqlWorkerApi {
  /** Loads sql.js (once). */
  init(opts: SqlWorkerInit): Promise<SqlWorkerInfo>;
  /** Opens `bytes` as database `dbId`, keeping the bytes to reload from. */
  open(dbId: string, bytes: Uint8Array): Promise<void>;
  /** Runs one read-only query on `dbId`, interrupted after `timeMs` (default: none). */
  query(dbId: string, sql: string, limits: SqlLimits, timeMs?: number): Promise<WorkerReply>;
  /** Ids of the open databases, least recently used first. */
  databases(): Promise<string[]>;
}
