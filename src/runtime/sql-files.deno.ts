// Database files on disk (Deno): `<root>/<db_id>/<db_id>.sqlite`, the layout of BIRD and Spider.
import { join } from "node:path";

/** Path of database `dbId` under `root`. */
export function databasePath(root: string, dbId: string): string {
  return join(root, dbId, `${dbId}.sqlite`);
}

/** A `loadDatabase` for SqlPool reading `<root>/<db_id>/<db_id>.sqlite`, with errors that name the file. */
export function fileDatabaseLoader(root: string): (dbId: string) => Promise<Uint8Array> {
  return async (dbId) => {
    if (!/^[A-Za-z0-9_.-]+$/.test(dbId) || dbId.startsWith(".")) throw new Error(`"${dbId}" is not a plain database name`);
    const path = databasePath(root, dbId);
    try {
      return await Deno.readFile(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new Error(`no database file at ${path}`);
      throw new Error(`cannot read ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
}
