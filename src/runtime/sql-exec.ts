// Runs one query on a sql.js database under the isolation rules, row by row within limits.
// Used inside workers/sql.worker.ts (one engine per worker) and directly by tests.
//
// Defences, in order: (1) the first keyword must be SELECT, WITH or VALUES; (2) exactly one
// statement: what follows the first one may only be comments and semicolons; (3) for WITH, the
// bytecode (EXPLAIN) must not write; (4) the connection runs with PRAGMA query_only=1; (5) after
// every query a fingerprint (total_changes, schema versions, attached databases, query_only, temp
// objects) is compared with the one taken at load, and the database is reloaded from its original
// bytes if anything moved.
//
// Time: a query given `timeMs` is interrupted inside SQLite once that much wall time has passed
// since it started (sql-interrupt.ts), and answers `timeout`; the worker stays usable. Where the
// wasm does not allow it (`SqlJsModule.deadlines` null) only the pool's kill remains.
import type { ExecErrorKind, ResultSet, SqlValue } from "../core/types.ts";
import { isEmptyTail, leadingKeyword, READ_KEYWORDS, writeReason } from "./sql-guard.ts";
import type { ProgressDeadlines } from "./sql-interrupt.ts";

/** Caps on one result: rows, and bytes as counted by `valueBytes`. */
export interface SqlLimits {
  maxRows: number;
  maxBytes: number;
}

/** Defaults: generous enough for BIRD's largest gold results, small enough for a browser tab. */
export const DEFAULT_LIMITS: SqlLimits = { maxRows: 1_000_000, maxBytes: 64 * 2 ** 20 };

/** What one query produced: a result (possibly capped) or why not; `ms` is its wall time in the worker. */
export type QueryReply =
  | { ok: true; result: ResultSet; ms: number }
  | { ok: false; error: { kind: ExecErrorKind; message: string }; ms: number };

/** The slice of sql.js's Statement this module uses (the installed typings lack `get`'s config). */
export interface SqlJsStatement {
  step(): boolean;
  get(params: null, config: { useBigInt: boolean }): unknown[];
  getColumnNames(): string[];
  getSQL(): string;
  free(): boolean;
}

/** The slice of sql.js's StatementIterator this module uses. */
export interface SqlJsIterator {
  next(): { done?: boolean; value: SqlJsStatement };
  getRemainingSQL(): string;
  return?(): unknown;
}

/** The slice of sql.js's Database this module uses. */
export interface SqlJsDatabase {
  prepare(sql: string): SqlJsStatement;
  iterateStatements(sql: string): SqlJsIterator;
  exec(sql: string): unknown;
  close(): void;
}

/** What `initSqlJs` resolves to, as far as this module is concerned. */
export interface SqlJsModule {
  Database: new (data?: Uint8Array) => SqlJsDatabase;
  /** Per-query deadlines (sql-wasm.ts sets them where the wasm allows); absent or null: none. */
  deadlines?: ProgressDeadlines | null;
  /** Why there are no deadlines, when there are none. */
  noDeadlines?: string;
}

// Cheapest forms first measured: plain PRAGMAs cost a few microseconds, their table-valued
// pragma_* forms several times more.
const FINGERPRINT_SQL = [
  "SELECT total_changes(), (SELECT count(*) FROM sqlite_temp_master)",
  "PRAGMA schema_version",
  "PRAGMA database_list",
  "PRAGMA query_only",
] as const;

const BIGINT = { useBigInt: true } as const;

/** Bytes charged for one value: 8 per number, 2 per UTF-16 unit of text, blob length, 1 for NULL. */
export function valueBytes(v: SqlValue): number {
  if (v === null) return 1;
  if (typeof v === "string") return 2 * v.length;
  if (typeof v === "object") return v.byteLength;
  return 8;
}

function toSqlValue(v: unknown): SqlValue {
  if (
    v === null || typeof v === "bigint" || typeof v === "number" || typeof v === "string" || v instanceof Uint8Array
  ) return v;
  throw new Error(`sql.js returned an unexpected value of type ${typeof v}`);
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** One open database: the connection, its original bytes (for reloads) and its fingerprint. */
export class GuardedDatabase {
  private db: SqlJsDatabase;
  private fingerprint: SqlJsStatement[];
  private baseline: string;
  /** The connection's deadline slot (sql-interrupt.ts), or null when queries cannot be interrupted. */
  private slot: number | null = null;
  /** How many times a query changed the database and it was reloaded (should stay 0). */
  reloads = 0;

  constructor(private readonly sql: SqlJsModule, readonly bytes: Uint8Array) {
    [this.db, this.fingerprint, this.baseline] = this.load();
  }

  /** True when a query's `timeMs` is enforced inside SQLite. */
  get interruptible(): boolean {
    return this.slot !== null;
  }

  private load(): [SqlJsDatabase, SqlJsStatement[], string] {
    const db = new this.sql.Database(this.bytes);
    try {
      db.exec("PRAGMA query_only=1");
      const fp = FINGERPRINT_SQL.map((q) => db.prepare(q));
      const d = this.sql.deadlines;
      const slot = d ? d.attach(connectionPointer(db)) : null;
      this.slot = typeof slot === "number" ? slot : null;
      return [db, fp, readFingerprint(fp)];
    } catch (e) {
      db.close();
      throw new Error(`not a usable SQLite database: ${message(e)}`);
    }
  }

  /**
   * Runs `sql` if it is a single read-only query; never lets it change what a later query sees.
   * With `timeMs` (and an interruptible connection) SQLite stops it after that many milliseconds.
   */
  query(sql: string, limits: SqlLimits, timeMs = Infinity): QueryReply {
    const t0 = performance.now();
    const ms = () => performance.now() - t0;
    const fail = (kind: ExecErrorKind, msg: string): QueryReply => ({
      ok: false,
      error: { kind, message: msg },
      ms: ms(),
    });
    const keyword = leadingKeyword(sql);
    if (isEmptyTail(sql)) return fail("empty", "no SQL");
    if (keyword === "") return fail("syntax", "does not start with a keyword");
    if (!(READ_KEYWORDS as readonly string[]).includes(keyword)) {
      return fail("forbidden", `only a single read-only query is allowed, got ${keyword}`);
    }
    const d = this.sql.deadlines;
    const slot = this.slot;
    const arm = () => d && slot !== null && d.arm(slot, t0 + timeMs);
    const disarm = () => d && slot !== null && d.disarm(slot);
    const late = (): QueryReply | null =>
      d && slot !== null && d.firedOn(slot)
        ? fail("timeout", `interrupted after ${Math.round(ms())} ms (limit ${timeMs} ms)`)
        : null;
    let it: SqlJsIterator;
    let stmt: SqlJsStatement;
    try {
      // Preparing counts too: SQLite calls the progress callback while parsing very long text.
      arm();
      it = this.db.iterateStatements(sql);
      const first = it.next();
      if (first.done) return fail("empty", "no statement");
      stmt = first.value;
    } catch (e) {
      return late() ?? fail("syntax", message(e));
    } finally {
      disarm();
    }
    try {
      if (!isEmptyTail(it.getRemainingSQL())) return fail("forbidden", "more than one statement");
      if (keyword === "WITH") {
        const why = this.writes(stmt.getSQL());
        if (why !== null) return fail("forbidden", `not read-only: ${why}`);
      }
      arm();
      const r = this.collect(stmt, limits, t0);
      return r.ok ? r : late() ?? r;
    } finally {
      // The fingerprint and any reload run with no deadline.
      disarm();
      stmt.free();
      it.return?.();
      this.verify();
    }
  }

  private collect(stmt: SqlJsStatement, limits: SqlLimits, t0: number): QueryReply {
    const rows: SqlValue[][] = [];
    let bytes = 0;
    let capped = false;
    try {
      while (stmt.step()) {
        if (rows.length >= limits.maxRows) {
          capped = true;
          break;
        }
        const raw = stmt.get(null, BIGINT);
        const row = new Array<SqlValue>(raw.length);
        let b = 16;
        for (let i = 0; i < raw.length; i++) b += valueBytes(row[i] = toSqlValue(raw[i]));
        if (bytes + b > limits.maxBytes) {
          capped = true;
          break;
        }
        bytes += b;
        rows.push(row);
      }
    } catch (e) {
      const msg = message(e);
      const kind: ExecErrorKind = /readonly|read-only/i.test(msg) ? "forbidden" : "runtime";
      return { ok: false, error: { kind, message: msg }, ms: performance.now() - t0 };
    }
    const ms = performance.now() - t0;
    const result: ResultSet = { columns: stmt.getColumnNames(), rows, capped };
    if (capped) {
      return {
        ok: false,
        error: { kind: "capped", message: `result exceeds ${limits.maxRows} rows or ${limits.maxBytes} bytes` },
        ms,
      };
    }
    return { ok: true, result, ms };
  }

  /** Why the bytecode of `sql` writes, or null when it only reads. */
  private writes(sql: string): string | null {
    const ex = this.db.prepare(`EXPLAIN ${sql}`);
    try {
      while (ex.step()) {
        // EXPLAIN columns: addr, opcode, p1, p2, p3, p4, p5, comment.
        const r = ex.get(null, BIGINT);
        const why = writeReason(String(r[1]), Number(r[3]), r[5]);
        if (why !== null) return why;
      }
      return null;
    } finally {
      ex.free();
    }
  }

  /** Last line of defence: reload from the original bytes if the connection's state moved. */
  private verify(): void {
    let same = false;
    try {
      same = readFingerprint(this.fingerprint) === this.baseline;
    } catch {
      same = false;
    }
    if (same) return;
    this.reloads++;
    this.close();
    [this.db, this.fingerprint, this.baseline] = this.load();
  }

  /** True when the last query left the database as loaded (exposed for tests). */
  isPristine(): boolean {
    return readFingerprint(this.fingerprint) === this.baseline;
  }

  /** Frees the connection. */
  close(): void {
    if (this.slot !== null) this.sql.deadlines?.detach(this.slot);
    try {
      for (const st of this.fingerprint) st.free();
    } finally {
      this.db.close();
    }
  }
}

/** The `sqlite3*` of a sql.js Database: its `db` field (sql.js keeps the name in its build). */
export function connectionPointer(db: object): number {
  const p: unknown = Reflect.get(db, "db");
  if (typeof p !== "number") throw new Error("sql.js Database has no numeric db pointer");
  return p;
}

function readFingerprint(fp: SqlJsStatement[]): string {
  let s = "";
  // Stepping each statement to completion leaves it ready to run again (SQLite resets on the next step).
  for (const st of fp) while (st.step()) s += st.get(null, BIGINT).join(",") + ";";
  return s;
}

/** Open databases of one worker, least recently used first out, bounded in count and bytes. */
export class DatabaseCache {
  private readonly open = new Map<string, GuardedDatabase>();
  private bytes = 0;

  constructor(private readonly sql: SqlJsModule, readonly maxDatabases: number, readonly maxBytes: number) {}

  /** The database, marked most recently used, or undefined when it is not loaded. */
  get(dbId: string): GuardedDatabase | undefined {
    const g = this.open.get(dbId);
    if (g) {
      this.open.delete(dbId);
      this.open.set(dbId, g);
    }
    return g;
  }

  /** Loads `bytes` as `dbId` (replacing any previous one), evicting the least recently used. */
  add(dbId: string, bytes: Uint8Array): GuardedDatabase {
    this.drop(dbId);
    const g = new GuardedDatabase(this.sql, bytes);
    // Each database costs its bytes twice: the kept original and sql.js's in-memory file.
    const cost = 2 * bytes.byteLength;
    for (const [id] of this.open) {
      if (this.open.size < this.maxDatabases && this.bytes + cost <= this.maxBytes) break;
      this.drop(id);
    }
    this.open.set(dbId, g);
    this.bytes += cost;
    return g;
  }

  private drop(dbId: string): void {
    const g = this.open.get(dbId);
    if (!g) return;
    this.open.delete(dbId);
    this.bytes -= 2 * g.bytes.byteLength;
    g.close();
  }

  /** Ids of the loaded databases, least recently used first. */
  ids(): string[] {
    return [...this.open.keys()];
  }

  /** Closes every database. */
  clear(): void {
    for (const id of [...this.open.keys()]) this.drop(id);
  }
}
