// The SQL pool in a browser page: Vite gives the URL of the wasm that matches sql.js's browser
// build (package.json "exports" maps `sql.js` to dist/sql-wasm-browser.js there), and databases
// come from URLs (or from files the user dropped, through a custom loader).
import wasmUrl from "sql.js/dist/sql-wasm-browser.wasm?url";
import { SqlPool, type SqlPoolOptions } from "./sql-pool.ts";

/** A pool of module Workers for the page; options as for SqlPool, the wasm URL filled in. */
export function browserSqlPool(opts: Omit<SqlPoolOptions, "wasmUrl">): SqlPool {
  return new SqlPool({ ...opts, wasmUrl });
}

/** A `loadDatabase` fetching `<base>/<db_id>/<db_id>.sqlite`, with errors that name the URL. */
export function fetchDatabaseLoader(base: string): (dbId: string) => Promise<Uint8Array> {
  return async (dbId) => {
    const dir = new URL(base.endsWith("/") ? base : `${base}/`, globalThis.location?.href);
    const url = new URL(`${encodeURIComponent(dbId)}/${encodeURIComponent(dbId)}.sqlite`, dir);
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    return new Uint8Array(await res.arrayBuffer());
  };
}
