// Schema introspection of a SQLite database: tables, columns, keys, example values, row counts.
// Works on anything with sql.js's `exec` shape, so the same code runs in a worker, Deno or Node.

/** The part of sql.js's `Database` that introspection needs. */
export interface SqlQueryable {
  exec(sql: string): { columns: string[]; values: unknown[][] }[];
}

/** An example value as shown in a prompt: numbers stay numbers, everything else is text. */
export type ExampleValue = number | string;

/** One column, with what introspection found and what descriptions add. */
export interface ColumnInfo {
  name: string;
  /** Declared type as written in CREATE TABLE ("" when none was declared). */
  type: string;
  notNull: boolean;
  /** Part of the table's primary key. */
  primaryKey: boolean;
  /** A few distinct non-null values, long text truncated. */
  examples: ExampleValue[];
  /** Natural-language name (Spider `column_names`, BIRD `column_name`) when it says more than `name`. */
  naturalName?: string;
  /** Free-text description (BIRD `column_description`). */
  description?: string;
  /** Meaning of values (BIRD `value_description`). */
  valueDescription?: string;
  /** Format note (BIRD `data_format`). */
  dataFormat?: string;
}

/** A foreign key from one column of this table to a column of another. */
export interface ForeignKey {
  column: string;
  refTable: string;
  /** Null when the key names only the table (SQLite then refers to its primary key). */
  refColumn: string | null;
}

/** One table of the database. */
export interface TableInfo {
  name: string;
  columns: ColumnInfo[];
  /** Primary key columns in key order. */
  primaryKey: string[];
  foreignKeys: ForeignKey[];
  /** Null when counting was switched off. */
  rowCount: number | null;
  /** Natural-language table name when it says more than `name`. */
  naturalName?: string;
}

/** The schema of one database. */
export interface DbSchema {
  dbId: string;
  tables: TableInfo[];
}

/** Bounds on what introspection reads. */
export interface IntrospectOptions {
  /** Distinct example values per column (default 3). */
  maxExamples?: number;
  /** Longer text examples are cut to this many characters plus "…" (default 60). */
  maxExampleChars?: number;
  /** Rows scanned per column when looking for distinct examples (default 1000). */
  exampleScanRows?: number;
  /** Count rows of every table (default true). */
  rowCounts?: boolean;
}

/** Reads the schema of `db` (user tables only, in `sqlite_master` order). */
export function introspectSchema(db: SqlQueryable, dbId: string, opts: IntrospectOptions = {}): DbSchema {
  const maxExamples = opts.maxExamples ?? 3;
  const maxChars = opts.maxExampleChars ?? 60;
  const scan = opts.exampleScanRows ?? 1000;
  const names = rows(
    db,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid",
  )
    .map((r) => String(r[0]));
  const tables = names.map((name): TableInfo => {
    const t = quoteIdent(name);
    const lit = quoteLiteral(name);
    const info = rows(db, `SELECT name, type, "notnull", pk FROM pragma_table_info(${lit}) ORDER BY cid`);
    const pkOrder = info.filter((r) => Number(r[3]) > 0).sort((a, b) => Number(a[3]) - Number(b[3]));
    const columns = info.map((r): ColumnInfo => {
      const col = String(r[0]);
      return {
        name: col,
        type: r[1] === null ? "" : String(r[1]),
        notNull: Number(r[2]) === 1,
        primaryKey: Number(r[3]) > 0,
        examples: maxExamples > 0 ? examplesOf(db, t, quoteIdent(col), maxExamples, maxChars, scan) : [],
      };
    });
    // SQLite numbers foreign keys from the last declared one: descending id is declaration order.
    const foreignKeys = rows(
      db,
      `SELECT "from", "table", "to" FROM pragma_foreign_key_list(${lit}) ORDER BY id DESC, seq`,
    )
      .map((r): ForeignKey => ({
        column: String(r[0]),
        refTable: String(r[1]),
        refColumn: r[2] === null ? null : String(r[2]),
      }));
    const rowCount = opts.rowCounts === false ? null : Number(rows(db, `SELECT count(*) FROM ${t}`)[0][0]);
    return { name, columns, primaryKey: pkOrder.map((r) => String(r[0])), foreignKeys, rowCount };
  });
  return { dbId, tables };
}

/** Quotes an identifier for SQLite only when it needs it (spaces, symbols, keywords, leading digit). */
export function quoteIdent(name: string): string {
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !SQL_KEYWORDS.has(name.toUpperCase())) return name;
  return `"${name.replaceAll('"', '""')}"`;
}

/** A SQLite string literal. */
export function quoteLiteral(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** Finds a table by name, case-insensitively as SQLite does. */
export function findTable(schema: DbSchema, name: string): TableInfo | undefined {
  const key = name.toLowerCase();
  return schema.tables.find((t) => t.name.toLowerCase() === key);
}

/** Converts a value from the database into a prompt example, or null when it should not be shown. */
export function toExample(v: unknown, maxChars: number): ExampleValue | null {
  if (v === null || v === undefined) return null;
  if (typeof v === "number") return v;
  if (typeof v === "bigint") {
    return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  }
  if (typeof v === "string") {
    const s = v.replace(/\s+/g, " ").trim();
    if (s === "") return null;
    // Cut by code points so a surrogate pair is never split.
    const cps = Array.from(s);
    return cps.length > maxChars ? cps.slice(0, maxChars).join("") + "…" : s;
  }
  // BLOBs (Uint8Array) say nothing useful in a prompt.
  return null;
}

function examplesOf(db: SqlQueryable, t: string, c: string, n: number, maxChars: number, scan: number): ExampleValue[] {
  // The inner LIMIT bounds the scan on large tables; DISTINCT then works on at most `scan` rows.
  const sql = `SELECT DISTINCT ${c} FROM (SELECT ${c} FROM ${t} WHERE ${c} IS NOT NULL LIMIT ${scan}) LIMIT ${n * 3}`;
  const out: ExampleValue[] = [];
  const seen = new Set<string>();
  for (const r of rows(db, sql)) {
    const ex = toExample(r[0], maxChars);
    if (ex === null) continue;
    const key = typeof ex + ":" + String(ex);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(ex);
    if (out.length >= n) break;
  }
  return out;
}

function rows(db: SqlQueryable, sql: string): unknown[][] {
  const res = db.exec(sql);
  return res.length === 0 ? [] : res[0].values;
}

// Words that cannot stand as a bare identifier in SQLite DDL (the reserved subset that matters).
const SQL_KEYWORDS = new Set([
  "ABORT",
  "ACTION",
  "ADD",
  "AFTER",
  "ALL",
  "ALTER",
  "ANALYZE",
  "AND",
  "AS",
  "ASC",
  "ATTACH",
  "AUTOINCREMENT",
  "BEFORE",
  "BEGIN",
  "BETWEEN",
  "BY",
  "CASCADE",
  "CASE",
  "CAST",
  "CHECK",
  "COLLATE",
  "COLUMN",
  "COMMIT",
  "CONFLICT",
  "CONSTRAINT",
  "CREATE",
  "CROSS",
  "CURRENT_DATE",
  "CURRENT_TIME",
  "CURRENT_TIMESTAMP",
  "DATABASE",
  "DEFAULT",
  "DEFERRABLE",
  "DEFERRED",
  "DELETE",
  "DESC",
  "DETACH",
  "DISTINCT",
  "DROP",
  "EACH",
  "ELSE",
  "END",
  "ESCAPE",
  "EXCEPT",
  "EXCLUSIVE",
  "EXISTS",
  "EXPLAIN",
  "FAIL",
  "FOR",
  "FOREIGN",
  "FROM",
  "FULL",
  "GLOB",
  "GROUP",
  "HAVING",
  "IF",
  "IGNORE",
  "IMMEDIATE",
  "IN",
  "INDEX",
  "INDEXED",
  "INITIALLY",
  "INNER",
  "INSERT",
  "INSTEAD",
  "INTERSECT",
  "INTO",
  "IS",
  "ISNULL",
  "JOIN",
  "KEY",
  "LEFT",
  "LIKE",
  "LIMIT",
  "MATCH",
  "NATURAL",
  "NO",
  "NOT",
  "NOTNULL",
  "NULL",
  "OF",
  "OFFSET",
  "ON",
  "OR",
  "ORDER",
  "OUTER",
  "PLAN",
  "PRAGMA",
  "PRIMARY",
  "QUERY",
  "RAISE",
  "RECURSIVE",
  "REFERENCES",
  "REGEXP",
  "REINDEX",
  "RELEASE",
  "RENAME",
  "REPLACE",
  "RESTRICT",
  "RIGHT",
  "ROLLBACK",
  "ROW",
  "SAVEPOINT",
  "SELECT",
  "SET",
  "TABLE",
  "TEMP",
  "TEMPORARY",
  "THEN",
  "TO",
  "TRANSACTION",
  "TRIGGER",
  "UNION",
  "UNIQUE",
  "UPDATE",
  "USING",
  "VACUUM",
  "VALUES",
  "VIEW",
  "VIRTUAL",
  "WHEN",
  "WHERE",
  "WITH",
  "WITHOUT",
]);
