// Text-level checks on SQL before SQLite sees it: the leading keyword and the trailing text after
// the first statement. They are the first of several defences (see sql-exec.ts); the keyword check
// alone would not be enough (`WITH ... DELETE` is valid SQLite), so it is paired with a bytecode scan.

/** Statements that may start a read-only query. */
export const READ_KEYWORDS = ["SELECT", "WITH", "VALUES"] as const;

/**
 * Skips whitespace and comments from `i`; returns the index of the next significant character
 * (or `s.length`). An unterminated block comment runs to the end, as in SQLite.
 */
export function skipTrivia(s: string, i = 0): number {
  while (i < s.length) {
    const c = s.charCodeAt(i);
    if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0c) {
      i++;
    } else if (c === 0x2d && s.charCodeAt(i + 1) === 0x2d) {
      const nl = s.indexOf("\n", i + 2);
      i = nl < 0 ? s.length : nl + 1;
    } else if (c === 0x2f && s.charCodeAt(i + 1) === 0x2a) {
      const end = s.indexOf("*/", i + 2);
      i = end < 0 ? s.length : end + 2;
    } else {
      break;
    }
  }
  return i;
}

/** The first keyword of `sql` in upper case, skipping comments and opening parentheses ("" if none). */
export function leadingKeyword(sql: string): string {
  let i = skipTrivia(sql);
  while (sql[i] === "(") i = skipTrivia(sql, i + 1);
  const m = /^[A-Za-z_]+/.exec(sql.slice(i, i + 32));
  return m ? m[0].toUpperCase() : "";
}

/** True when `tail` holds nothing but whitespace, comments and semicolons. */
export function isEmptyTail(tail: string): boolean {
  let i = skipTrivia(tail);
  while (tail[i] === ";") i = skipTrivia(tail, i + 1);
  return i >= tail.length;
}

/**
 * Opcodes of SQLite's bytecode that write a database, its schema or the connection's state.
 * `Insert`/`Delete`/`IdxInsert` are absent on purpose: queries use them on ephemeral tables
 * (DISTINCT, UNION, recursive CTEs); writes to real tables need `OpenWrite` or a write
 * `Transaction`, which are here.
 */
export const WRITE_OPCODES: ReadonlySet<string> = new Set([
  "OpenWrite",
  "Clear",
  "Destroy",
  "CreateBtree",
  "ParseSchema",
  "DropTable",
  "DropIndex",
  "DropTrigger",
  "Vacuum",
  "JournalMode",
  "Checkpoint",
  "VCreate",
  "VDestroy",
  "VUpdate",
  "Expire",
  "SqlExec",
  "LoadAnalysis",
]);

/**
 * Why one row of `EXPLAIN` output (opcode, p2, p4) makes a statement not read-only, or null.
 * `Transaction` with p2 != 0 opens a write transaction; `Function` calling sqlite_attach/detach
 * is how ATTACH and DETACH compile.
 */
export function writeReason(opcode: string, p2: number, p4: unknown): string | null {
  if (opcode === "Transaction" && p2 !== 0) return "opens a write transaction";
  if (WRITE_OPCODES.has(opcode)) return `uses opcode ${opcode}`;
  if (
    (opcode === "Function" || opcode === "PureFunc") && typeof p4 === "string" && /^sqlite_(attach|detach)\b/.test(p4)
  ) {
    return "attaches or detaches a database";
  }
  return null;
}

// Functions whose value can differ between two runs of the same text on the same database, and
// the 'now' of the date functions.
const VOLATILE = /\b(?:random|randomblob|changes|total_changes|last_insert_rowid)\s*\(|['"]now['"]/i;

/**
 * True when two runs of `sql` on one database can be trusted to return the same result, so one
 * run may answer both. Conservative: a volatile name anywhere, even in a string, says no.
 */
export function isRepeatable(sql: string): boolean {
  return !VOLATILE.test(sql);
}
