// One SQL worker of the reward pool (src/runtime/sql-pool.ts): sql.js with a bounded cache of
// open databases, each guarded so that no query changes what a later one sees.
import * as Comlink from "comlink";
import { DatabaseCache } from "../src/runtime/sql-exec.ts";
import { loadSqlJs } from "../src/runtime/sql-wasm.ts";
import type { SqlWorkerApi, WorkerReply } from "./sql.api.ts";

let cache: Promise<DatabaseCache> | null = null;

function ready(): Promise<DatabaseCache> {
  if (!cache) throw new Error("sql worker: init() was not called");
  return cache;
}

const api: SqlWorkerApi = {
  init(opts) {
    cache ??= loadSqlJs(opts.wasmUrl).then((SQL) => new DatabaseCache(SQL, opts.maxDatabases, opts.maxCacheBytes));
    return cache.then(() => undefined);
  },
  async open(dbId, bytes) {
    (await ready()).add(dbId, bytes);
  },
  async query(dbId, sql, limits): Promise<WorkerReply> {
    const db = (await ready()).get(dbId);
    return db ? db.query(sql, limits) : { ok: "missing" };
  },
  async databases() {
    return (await ready()).ids();
  },
};

Comlink.expose(api);
