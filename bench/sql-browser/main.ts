// Page of the browser check (run.ts): the SQL pool in Chromium, module Workers built by Vite.
import { browserSqlPool, fetchDatabaseLoader } from "../../src/runtime/sql-browser.ts";
const pool = browserSqlPool({ loadDatabase: fetchDatabaseLoader("db"), workers: 2, timeoutMs: 500 });
const out: unknown[] = [];
const show = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x instanceof Uint8Array ? [...x] : x));
out.push(await pool.query("flight_4", "SELECT count(*), 9007199254740993, 6.0, '6', x'00ff', NULL FROM airports"));
out.push(await pool.query("flight_4", "DROP TABLE airports"));
out.push(await pool.query("flight_4", "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c) SELECT max(i) FROM c"));
out.push(await pool.query("flight_4", "SELECT count(*) FROM airports"));
out.push(await pool.query("nope", "SELECT 1").catch((e) => String(e)));
// interrupts 1, respawns 0: the runaway query was stopped inside its worker (sql-interrupt.ts).
out.push(pool.stats());
document.getElementById("out")!.textContent = show(out);
document.title = "done";
