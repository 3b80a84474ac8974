// The SQL worker's API as a plain object, shared by the module Worker (workers/sql.worker.ts) and
// the Deno subprocess (workers/sql.process.ts): sql.js with a bounded cache of guarded databases.
import type { SqlWorkerApi, SqlWorkerInfo, WorkerReply } from "../../workers/sql.api.ts";
import { DatabaseCache } from "./sql-exec.ts";
import { loadSqlJs } from "./sql-wasm.ts";

/** A fresh service: nothing loaded until `init`. */
export function createSqlService(): SqlWorkerApi {
  let cache: Promise<DatabaseCache> | null = null;
  let info: SqlWorkerInfo = { interruptible: false, why: "not started" };
  const ready = (): Promise<DatabaseCache> => {
    if (!cache) throw new Error("sql worker: init() was not called");
    return cache;
  };
  return {
    init(opts) {
      cache ??= loadSqlJs(opts.wasmUrl).then((SQL) => {
        info = SQL.deadlines
          ? { interruptible: true }
          : { interruptible: false, why: SQL.noDeadlines ?? "no deadline support" };
        return new DatabaseCache(SQL, opts.maxDatabases, opts.maxCacheBytes);
      });
      return cache.then(() => info);
    },
    async open(dbId, bytes) {
      (await ready()).add(dbId, bytes);
    },
    async query(dbId, sql, limits, timeMs): Promise<WorkerReply> {
      const db = (await ready()).get(dbId);
      return db ? db.query(sql, limits, timeMs ?? Infinity) : { ok: "missing" };
    },
    async databases() {
      return (await ready()).ids();
    },
  };
}
