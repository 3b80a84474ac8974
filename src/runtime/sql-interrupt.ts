// A per-query deadline inside sql.js: SQLite's progress callback, installed without the C API.
//
// sql.js 1.17 exports neither sqlite3_progress_handler nor sqlite3_interrupt, so a runaway query
// could only be stopped by killing its worker (and Deno cannot stop a Worker stuck in wasm:
// denoland/deno#35657). SQLite's VDBE still checks `db->xProgress` every `db->nProgressOps`
// opcodes (the check is compiled in: no SQLITE_OMIT_PROGRESS_CALLBACK in sql.js's build), so this
// module writes those three fields of `struct sqlite3` in the wasm memory itself:
//
// - where: `sqlite3_update_hook` (exported) stores its two arguments in `pUpdateArg` and
//   `xUpdateCallback`; sentinels passed through it locate that pair in the connection's struct, and
//   the fields up to `xProgress` follow it in an order that has not changed since SQLite 3.38
//   (sqlite3.c, `struct sqlite3`; no SQLITE_ENABLE_PREUPDATE_HOOK, no SQLITE_OMIT_WAL /
//   _AUTHORIZATION / _TWOSIZE_LOOKASIDE in sql.js's `PRAGMA compile_options`);
// - checks before any write: the sentinels sit exactly where expected and are cleared again, the
//   Lookaside struct between them reads as one (sz = szTrue, pStart <= pMiddle <= pEnd = pTrueEnd),
//   and the five words xAuth .. nProgressOps are all zero, as on a fresh connection;
// - proof once per module: on a scratch connection the callback must fire during a long query and
//   a non-zero return must end it with SQLITE_INTERRUPT, while a query under no deadline returns
//   its full answer. If anything fails the module reports no support and the pool falls back to
//   killing the worker.
//
// The callback is a JS function in the wasm table (sql.js exports Emscripten's addFunction), shared
// by every connection of the module; `pProgressArg` carries the connection's slot number.

/** What the deadline needs of the sql.js module, beyond its public Database class. */
export interface WasmHooks {
  memory: WebAssembly.Memory;
  addFunction(fn: (arg: number) => number, signature: string): number;
  _sqlite3_update_hook(db: number, callback: number, arg: number): number;
}

/** Byte offsets, from the start of `struct sqlite3`, of the fields this module reads or writes. */
interface Layout {
  pUpdateArg: number;
  lookaside: number;
  xProgress: number;
}

/** Opcodes between two looks at the clock: about 10-100 µs of SQLite work, a negligible overhead. */
export const PROGRESS_OPS = 4096;

// Distinct odd values no allocator returns as a pointer pair at these positions.
const SENTINEL_ARG = 0x5a17_c0d5;
const SENTINEL_CB = 0x3e91_a6b3;

function align(n: number, to: number): number {
  return Math.ceil(n / to) * to;
}

/** Offsets of the fields after `pUpdateArg`, as sqlite3.c lays them out on wasm32 (4-byte pointers). */
function layoutFrom(pUpdateArg: number): Layout {
  // pUpdateArg, xUpdateCallback, pAutovacPagesArg, xAutovacDestr, xAutovacPages, pParse,
  // xWalCallback, pWalArg, xCollNeeded, xCollNeeded16, pCollNeededArg, pErr: 12 words.
  const u1 = align(pUpdateArg + 12 * 4, 8); // union { int isInterrupted; double notUsed1; }
  const lookaside = u1 + 8;
  // Lookaside: bDisable u32, sz u16, szTrue u16, bMalloced u8 (+3), nSlot, anStat[3], pInit, pFree,
  // pSmallInit, pSmallFree, pMiddle, pStart, pEnd, pTrueEnd: 60 bytes; then xAuth, pAuthArg.
  return { pUpdateArg, lookaside, xProgress: lookaside + 60 + 8 };
}

/** The per-module state: the layout once found, the table slot of the callback, deadlines by connection. */
export class ProgressDeadlines {
  private layout: Layout | null = null;
  private callback = 0;
  private readonly deadline = new Map<number, number>();
  private readonly fired = new Set<number>();
  private next = 1;
  /** Times the callback ran (tests and the self-check read it). */
  calls = 0;

  private constructor(private readonly hooks: WasmHooks) {}

  /**
   * Deadlines for `hooks`' connections, or null with the reason when this build of sql.js does not
   * let the progress fields be found and proven (`probe` opens a scratch in-memory connection).
   */
  static create(
    hooks: WasmHooks,
    probe: () => { db: number; exec(sql: string): unknown; close(): void },
  ): ProgressDeadlines | string {
    const d = new ProgressDeadlines(hooks);
    const scratch = probe();
    try {
      const slot = d.attach(scratch.db);
      if (typeof slot === "string") return slot;
      const count =
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 100000) SELECT count(*) FROM c";
      d.calls = 0;
      scratch.exec(count);
      if (d.calls === 0) return "the progress callback never ran";
      d.arm(slot, 0);
      let stopped = false;
      try {
        scratch.exec(count);
      } catch (e) {
        stopped = /interrupt/i.test(e instanceof Error ? e.message : String(e)) && d.firedOn(slot);
      }
      d.disarm(slot);
      if (!stopped) return "a passed deadline did not interrupt the query";
      d.detach(slot);
      return d;
    } catch (e) {
      return `self-check failed: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      scratch.close();
    }
  }

  private words(): Uint32Array {
    // A fresh view each time: memory growth detaches the old buffer.
    return new Uint32Array(this.hooks.memory.buffer);
  }

  /** Finds the update-hook pair of connection `db` by sentinels; its byte offset, or null. */
  private findUpdateArg(db: number): number | null {
    const before = this.hooks._sqlite3_update_hook(db, SENTINEL_CB, SENTINEL_ARG);
    if (before !== 0) {
      this.hooks._sqlite3_update_hook(db, 0, before);
      return null;
    }
    const w = this.words();
    let found: number | null = null;
    for (let off = 0; off < 1024; off += 4) {
      if (w[(db + off) >>> 2] === SENTINEL_ARG && w[(db + off + 4) >>> 2] === SENTINEL_CB) {
        found = found === null ? off : -1;
      }
    }
    this.hooks._sqlite3_update_hook(db, 0, 0);
    if (found === null || found < 0) return null;
    const v = this.words();
    if (v[(db + found) >>> 2] !== 0 || v[(db + found + 4) >>> 2] !== 0) return null;
    return found;
  }

  /** Why the fields at `layout` do not look like a fresh connection's, or null when they do. */
  private mismatch(db: number, l: Layout): string | null {
    const w = this.words();
    const u32 = (off: number) => w[(db + off) >>> 2];
    const h = new Uint16Array(this.hooks.memory.buffer);
    const sz = h[(db + l.lookaside + 4) >>> 1], szTrue = h[(db + l.lookaside + 6) >>> 1];
    const pMiddle = u32(l.lookaside + 44),
      pStart = u32(l.lookaside + 48),
      pEnd = u32(l.lookaside + 52),
      pTrueEnd = u32(l.lookaside + 56);
    const enabled = sz > 0 && sz === szTrue && pStart !== 0 && pStart <= pMiddle && pMiddle <= pEnd &&
      pEnd === pTrueEnd;
    const disabled = u32(l.lookaside) !== 0 && pStart === pEnd;
    if (!enabled && !disabled) return "the bytes where the lookaside configuration should be do not read as one";
    for (let k = -8; k <= 8; k += 4) {
      if (u32(l.xProgress + k) !== 0) return "the authorizer and progress fields are not all zero";
    }
    return null;
  }

  /** Installs the callback on connection `db`; its slot number, or why it cannot. */
  attach(db: number): number | string {
    const pUpdateArg = this.findUpdateArg(db);
    if (pUpdateArg === null) return "could not locate the update-hook fields of the connection";
    const l = layoutFrom(pUpdateArg);
    if (this.layout && this.layout.pUpdateArg !== l.pUpdateArg) return "connections disagree on the struct layout";
    const why = this.mismatch(db, l);
    if (why) return why;
    this.layout = l;
    if (this.callback === 0) this.callback = this.hooks.addFunction((arg) => this.onProgress(arg), "ii");
    const slot = this.next++;
    const w = this.words();
    w[(db + l.xProgress + 4) >>> 2] = slot;
    w[(db + l.xProgress + 8) >>> 2] = PROGRESS_OPS;
    w[(db + l.xProgress) >>> 2] = this.callback;
    this.deadline.set(slot, Infinity);
    return slot;
  }

  /** Forgets a slot (its connection is closed or about to be). */
  detach(slot: number): void {
    this.deadline.delete(slot);
    this.fired.delete(slot);
  }

  /** Queries on `slot` are interrupted once `performance.now()` passes `at`. */
  arm(slot: number, at: number): void {
    this.fired.delete(slot);
    this.deadline.set(slot, at);
  }

  /** No deadline on `slot` (internal statements: fingerprint, EXPLAIN). */
  disarm(slot: number): void {
    this.deadline.set(slot, Infinity);
  }

  /** True when the deadline of `slot` interrupted a query since it was armed. */
  firedOn(slot: number): boolean {
    return this.fired.has(slot);
  }

  private onProgress(slot: number): number {
    this.calls++;
    const at = this.deadline.get(slot);
    if (at === undefined || performance.now() <= at) return 0;
    this.fired.add(slot);
    return 1;
  }
}
