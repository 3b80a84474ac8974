// Database files on disk (Deno): `<root>/<db_id>/<db_id>.sqlite`, the layout of BIRD and Spider.
import { join } from "node:path";
import { FILE_LIMITS, FileRefusedError, readFileBounded } from "../model/files.deno.ts";

/** Path of database `dbId` under `root`. */
export function databasePath(root: string, dbId: string): string {
  return join(root, dbId, `${dbId}.sqlite`);
}

/** The 16 bytes every SQLite database file starts with. */
const SQLITE_MAGIC = "SQLite format 3\0";

/** Why `bytes` (read from `path`) is not a SQLite database, or null when its header says it is one. */
export function notSqlite(bytes: Uint8Array, path: string): string | null {
  if (bytes.length === 0) return `${path} is empty (0 bytes), not a SQLite database`;
  const head = new TextDecoder("latin1").decode(bytes.subarray(0, 16));
  return head === SQLITE_MAGIC ? null : `${path} is not a SQLite database (it does not start with "SQLite format 3")`;
}

/**
 * A `loadDatabase` for SqlPool reading `<root>/<db_id>/<db_id>.sqlite`, with errors that name the
 * file: a regular file within the database cap (never a FIFO or a device), non-empty, with
 * SQLite's header (an empty file would otherwise open as an empty database: "no such table").
 */
export function fileDatabaseLoader(root: string): (dbId: string) => Promise<Uint8Array> {
  return async (dbId) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(dbId) || dbId.startsWith(".")) {
      throw new Error(`"${dbId}" is not a plain database name`);
    }
    const path = databasePath(root, dbId);
    let bytes: Uint8Array;
    try {
      bytes = await readFileBounded(path, { maxBytes: FILE_LIMITS.database, what: "database" });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new Error(`no database file at ${path}`);
      if (e instanceof FileRefusedError) throw e;
      throw new Error(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const bad = notSqlite(bytes, path);
    if (bad) throw new Error(bad);
    return bytes;
  };
}
