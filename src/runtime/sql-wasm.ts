// Starts sql.js where it runs: under Deno the wasm is read from node_modules next to this file;
// in a browser the page passes the URL Vite gave the wasm (see sql-browser.ts). This is the only
// environment-specific bit of the SQL side.
import initSqlJs, { type SqlJsStatic } from "sql.js";
import type { SqlJsModule } from "./sql-exec.ts";

/** Loads sql.js: from `wasmUrl` when given (browser), else from node_modules under Deno. */
export async function loadSqlJs(wasmUrl?: string): Promise<SqlJsModule> {
  if (wasmUrl !== undefined) {
    const wasmBinary = await (await fetch(wasmUrl)).arrayBuffer();
    return await initSqlJs({ wasmBinary });
  }
  return await loadSqlJsDeno();
}

/** sql.js under Deno with its full typings (wasm from node_modules), for code that builds databases. */
export async function loadSqlJsDeno(): Promise<SqlJsStatic> {
  if (!("Deno" in globalThis)) throw new Error("sql.js: no wasm URL given and not running under Deno");
  // Not a literal inside `new URL(...)`, so that Vite does not copy this wasm into browser builds.
  const path = "../../node_modules/sql.js/dist/sql-wasm.wasm";
  const bytes = await Deno.readFile(new URL(path, import.meta.url));
  return await initSqlJs({ wasmBinary: bytes.buffer });
}
