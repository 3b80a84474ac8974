// What the dataset view needs from a dataset: its questions per split (fetched question files)
// and, per database, tables with columns, keys and sample rows — read through the SQL worker
// pool, never by opening SQLite in the page.
import type { ResultSet, SqlValue, Task } from "../core/types.ts";
import { browserSqlPool, fetchDatabaseLoader } from "../runtime/sql-browser.ts";
import type { SqlPool } from "../runtime/sql-pool.ts";
import { uploads } from "./dataset-upload.ts";

export { uploadedDataset, uploads } from "./dataset-upload.ts";
export { type DatasetQuestions, loadQuestionFiles } from "./question-files.ts";

/** One table as the dataset view shows it. */
export interface TableView {
  name: string;
  columns: { name: string; type: string; pk: boolean; fk: string | null }[];
  rowCount: number;
  sample: ResultSet;
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

function text(v: SqlValue): string {
  return v === null ? "" : typeof v === "bigint" ? v.toString() : String(v);
}

async function rows(pool: SqlPool, dbId: string, sql: string): Promise<ResultSet> {
  const r = await pool.query(dbId, sql, { timeoutMs: 10_000 });
  if (!r.ok) throw new Error(`${dbId}: ${r.error.kind}: ${r.error.message}`);
  return r.result;
}

/** A database's tables with columns, primary and foreign keys, row counts and `sampleRows` rows. */
export async function describeDatabase(pool: SqlPool, dbId: string, sampleRows = 5): Promise<TableView[]> {
  const tables = await rows(
    pool,
    dbId,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
  );
  const out: TableView[] = [];
  for (const [nameValue] of tables.rows) {
    const name = text(nameValue);
    const q = name.replace(/'/g, "''");
    const cols = await rows(pool, dbId, `SELECT name, type, pk FROM pragma_table_info('${q}')`);
    const fks = await rows(pool, dbId, `SELECT "from", "table", "to" FROM pragma_foreign_key_list('${q}')`);
    const fkOf = new Map(fks.rows.map((r) => [text(r[0]), `${text(r[1])}.${text(r[2])}`]));
    const count = await rows(pool, dbId, `SELECT COUNT(*) FROM ${ident(name)}`);
    out.push({
      name,
      columns: cols.rows.map((r) => ({
        name: text(r[0]),
        type: text(r[1]),
        pk: Number(r[2]) > 0,
        fk: fkOf.get(text(r[0])) ?? null,
      })),
      rowCount: Number(count.rows[0]?.[0] ?? 0),
      sample: await rows(pool, dbId, `SELECT * FROM ${ident(name)} LIMIT ${sampleRows}`),
    });
  }
  return out;
}

const pools = new Map<string, SqlPool>();

/** The page's SQL pool for databases under `dbRoot` (one worker each: browsing needs no more). */
export function datasetPool(dbRoot: string): SqlPool {
  let pool = pools.get(dbRoot);
  if (!pool) {
    pools.set(
      dbRoot,
      pool = browserSqlPool({ loadDatabase: fetchDatabaseLoader(dbRoot), workers: 1, timeoutMs: 10_000 }),
    );
  }
  return pool;
}

let uploadPoolOf: { version: number; pool: SqlPool } | null = null;

/** The page's SQL pool over the uploaded databases (dataset-upload.ts); a new one after each upload change. */
export function uploadPool(): SqlPool {
  if (uploadPoolOf?.version === uploads.version) return uploadPoolOf.pool;
  uploadPoolOf?.pool.close();
  const loadDatabase = (dbId: string): Promise<Uint8Array> => {
    const db = uploads.databases.get(dbId);
    return db
      ? Promise.resolve(db.bytes.slice())
      : Promise.reject(new Error(`database ${dbId} was not uploaded: add its .sqlite file`));
  };
  uploadPoolOf = { version: uploads.version, pool: browserSqlPool({ loadDatabase, workers: 1, timeoutMs: 10_000 }) };
  return uploadPoolOf.pool;
}
