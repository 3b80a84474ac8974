// Starts sql.js where it runs: under Deno the wasm is read from node_modules next to this file;
// in a browser the page passes the URL Vite gave the wasm (see sql-browser.ts). This is the only
// environment-specific bit of the SQL side. The wasm is instantiated here (Emscripten's
// `instantiateWasm` hook) so that its memory is at hand for the per-query deadline (sql-interrupt.ts).
import initSqlJs, { type SqlJsStatic } from "sql.js";
import { connectionPointer, type SqlJsModule } from "./sql-exec.ts";
import { ProgressDeadlines, type WasmHooks } from "./sql-interrupt.ts";

/** sql.js with the deadline support its wasm allowed (`deadlines` null: `noDeadlines` says why). */
export type LoadedSqlJs = SqlJsStatic & SqlJsModule;

/** Loads sql.js: from `wasmUrl` when given (browser), else from node_modules under Deno. */
export async function loadSqlJs(wasmUrl?: string): Promise<LoadedSqlJs> {
  if (wasmUrl !== undefined) return await instantiate(new Uint8Array(await (await fetch(wasmUrl)).arrayBuffer()));
  return await loadSqlJsDeno();
}

/** sql.js under Deno with its full typings (wasm from node_modules), for code that builds databases. */
export async function loadSqlJsDeno(): Promise<LoadedSqlJs> {
  if (!("Deno" in globalThis)) throw new Error("sql.js: no wasm URL given and not running under Deno");
  // Not a literal inside `new URL(...)`, so that Vite does not copy this wasm into browser builds.
  const path = "../../node_modules/sql.js/dist/sql-wasm.wasm";
  const bytes = await Deno.readFile(new URL(path, import.meta.url));
  return await instantiate(bytes);
}

function isHooks(x: unknown): x is Omit<WasmHooks, "memory"> {
  if (typeof x !== "object" || x === null) return false;
  return "addFunction" in x && typeof x.addFunction === "function" && "_sqlite3_update_hook" in x &&
    typeof x._sqlite3_update_hook === "function";
}

async function instantiate(wasm: Uint8Array<ArrayBuffer>): Promise<LoadedSqlJs> {
  let memory: WebAssembly.Memory | null = null;
  const SQL = await initSqlJs(
    {
      instantiateWasm(imports: WebAssembly.Imports, done: (instance: WebAssembly.Instance) => void) {
        WebAssembly.compile(wasm).then((m) => WebAssembly.instantiate(m, imports)).then((instance) => {
          for (const v of Object.values(instance.exports)) if (v instanceof WebAssembly.Memory) memory = v;
          for (const mod of Object.values(imports)) {
            for (const v of Object.values(mod)) if (v instanceof WebAssembly.Memory) memory ??= v;
          }
          done(instance);
        });
        return {};
      },
    } as Parameters<typeof initSqlJs>[0],
  );
  const loaded: LoadedSqlJs = Object.assign(SQL, { deadlines: null, noDeadlines: "" });
  const mem: WebAssembly.Memory | null = memory;
  if (mem === null) loaded.noDeadlines = "the wasm has no memory export";
  else if (!isHooks(SQL)) loaded.noDeadlines = "this sql.js exports no addFunction or sqlite3_update_hook";
  else {
    const hooks: WasmHooks = {
      memory: mem,
      addFunction: SQL.addFunction,
      _sqlite3_update_hook: SQL._sqlite3_update_hook,
    };
    const d = ProgressDeadlines.create(hooks, () => {
      const db = new SQL.Database();
      return { db: connectionPointer(db), exec: (sql: string) => db.exec(sql), close: () => db.close() };
    });
    if (typeof d === "string") loaded.noDeadlines = d;
    else loaded.deadlines = d;
  }
  return loaded;
}
