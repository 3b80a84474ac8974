// A prompt schema from database bytes: sql.js introspection, plus tables.json's natural names
// when the dataset has one. Shared by the Deno and the browser environments.
import { applySpiderDescriptions, type SpiderTablesEntry } from "../../core/descriptions.ts";
import { type DbSchema, introspectSchema, type SqlQueryable } from "../../core/schema.ts";
import type { SqlJsModule } from "../sql-exec.ts";

function isExecResult(x: unknown): x is { columns: string[]; values: unknown[][] }[] {
  return Array.isArray(x) &&
    x.every((r) =>
      typeof r === "object" && r !== null && "columns" in r && "values" in r && Array.isArray(r.columns) &&
      Array.isArray(r.values)
    );
}

/** The schema of database `dbId` (its bytes), with natural names from `tables` when it has an entry for it. */
export function loadSchema(
  SQL: SqlJsModule,
  bytes: Uint8Array,
  dbId: string,
  tables: readonly SpiderTablesEntry[] | null,
): DbSchema {
  const db = new SQL.Database(bytes);
  try {
    const q: SqlQueryable = {
      exec: (sql) => {
        const r = db.exec(sql);
        if (!isExecResult(r)) throw new Error("sql.js exec returned an unexpected shape");
        return r;
      },
    };
    const schema = introspectSchema(q, dbId);
    const entry = tables?.find((e) => e.db_id === dbId);
    return entry ? applySpiderDescriptions(schema, entry).schema : schema;
  } finally {
    db.close();
  }
}
