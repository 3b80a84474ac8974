// Column and table descriptions merged into an introspected schema: Spider's tables.json natural
// names and BIRD's database_description/<table>.csv files (often latin-1, sometimes with a BOM).
import type { ColumnInfo, DbSchema, TableInfo } from "./schema.ts";
import { findTable } from "./schema.ts";

/** One database entry of Spider's (and BIRD's) `tables.json`. */
export interface SpiderTablesEntry {
  db_id: string;
  table_names: string[];
  table_names_original: string[];
  column_names: [number, string][];
  column_names_original: [number, string][];
  column_types?: string[];
  /** Column indices; a composite key is a nested list. */
  primary_keys?: (number | number[])[];
  /** [from column, to column] index pairs. */
  foreign_keys?: [number, number][];
}

/** One row of a BIRD `database_description/<table>.csv` file. */
export interface BirdColumnDescription {
  originalColumnName: string;
  columnName: string;
  columnDescription: string;
  dataFormat: string;
  valueDescription: string;
}

/** A schema with descriptions merged in, and the names that matched nothing. */
export interface Described {
  schema: DbSchema;
  /** "table" or "table.column" names from the descriptions that are not in the database. */
  unmatched: string[];
}

/** Validates parsed `tables.json` content and returns its entries. */
export function parseSpiderTables(json: unknown): SpiderTablesEntry[] {
  if (!Array.isArray(json)) throw new Error("tables.json: expected an array of database entries");
  return json.map((e: unknown, i) => {
    if (!isSpiderEntry(e)) throw new Error(`tables.json: entry ${i} lacks db_id/table_names/column_names(_original)`);
    return e;
  });
}

/** Merges Spider natural-language table and column names into `schema` where they say more than the name. */
export function applySpiderDescriptions(schema: DbSchema, entry: SpiderTablesEntry): Described {
  const unmatched: string[] = [];
  const tables = schema.tables.map(cloneTable);
  const byIndex = entry.table_names_original.map((name, i) => {
    const t = tables.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!t) {
      if (!name.startsWith("sqlite_")) unmatched.push(name);
      return undefined;
    }
    const natural = entry.table_names[i];
    // store_1's natural names are shifted by one (artists -> "sqlite sequence"): a natural name that
    // respells another table's name is a misalignment, not a description.
    const other = entry.table_names_original.some((o, k) => k !== i && !saysMore(natural ?? "", o));
    if (natural && saysMore(natural, t.name) && !other) t.naturalName = natural;
    return t;
  });
  entry.column_names_original.forEach(([ti, name], j) => {
    if (ti < 0) return; // the "*" pseudo-column
    const t = byIndex[ti];
    if (!t) return;
    const c = t.columns.find((x) => x.name.toLowerCase() === name.toLowerCase());
    if (!c) {
      unmatched.push(`${t.name}.${name}`);
      return;
    }
    const natural = entry.column_names[j]?.[1];
    if (natural && saysMore(natural, c.name)) c.naturalName = natural;
  });
  return { schema: { ...schema, tables }, unmatched };
}

/**
 * A schema from a tables.json entry alone, for when the database file is not at hand (no example
 * values, no row counts, types as tables.json writes them); natural names merged as above.
 */
export function schemaFromTablesJson(entry: SpiderTablesEntry): DbSchema {
  const tables: TableInfo[] = entry.table_names_original.map((name) => ({
    name,
    columns: [],
    primaryKey: [],
    foreignKeys: [],
    rowCount: null,
  }));
  const cols = entry.column_names_original.map(([ti, name], j) => {
    if (ti < 0) return null;
    const c: ColumnInfo = {
      name,
      type: entry.column_types?.[j] ?? "",
      notNull: false,
      primaryKey: false,
      examples: [],
    };
    tables[ti].columns.push(c);
    return { table: tables[ti], column: c };
  });
  for (const pk of entry.primary_keys ?? []) {
    for (const j of Array.isArray(pk) ? pk : [pk]) {
      const c = cols[j];
      if (!c) continue;
      c.column.primaryKey = true;
      c.table.primaryKey.push(c.column.name);
    }
  }
  for (const [from, to] of entry.foreign_keys ?? []) {
    const a = cols[from];
    const b = cols[to];
    if (a && b) a.table.foreignKeys.push({ column: a.column.name, refTable: b.table.name, refColumn: b.column.name });
  }
  return applySpiderDescriptions({ dbId: entry.db_id, tables }, entry).schema;
}

/** Decodes description file bytes: UTF-8 (BOM stripped), UTF-16 with a BOM, else Windows-1252/latin-1. */
export function decodeText(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder("utf-16le").decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder("utf-16be").decode(bytes.subarray(2));
  const body = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(3) : bytes;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(body);
  } catch {
    // Not valid UTF-8: BIRD's files that fail are latin-1 exported from Excel.
    return new TextDecoder("windows-1252").decode(body);
  }
}

/** Parses CSV text (RFC 4180: quoted fields with "" escapes and embedded newlines; CRLF, LF or CR rows). */
export function parseCsv(text: string): string[][] {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const out: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = 0;
  const endRow = () => {
    row.push(field);
    field = "";
    // A blank line is no row.
    if (!(row.length === 1 && row[0] === "")) out.push(row);
    row = [];
  };
  while (i < src.length) {
    const ch = src[i];
    if (quoted) {
      if (ch === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        field += ch;
      }
      i++;
      continue;
    }
    if (ch === '"' && field.trim() === "") {
      // Opening quote (whitespace before it is dropped, as Python's csv does with skipinitialspace).
      field = "";
      quoted = true;
    } else if (ch === ",") {
      row.push(field);
      field = "";
    } else if (ch === "\r" || ch === "\n") {
      endRow();
      if (ch === "\r" && src[i + 1] === "\n") i++;
    } else {
      // A quote inside an unquoted field is kept literally (lenient, like Excel).
      field += ch;
    }
    i++;
  }
  if (quoted) throw new Error("CSV: a quoted field is not closed before the end of the text");
  if (field !== "" || row.length > 0) endRow();
  return out;
}

/** Reads the rows of one BIRD description CSV (header names matched loosely; blank rows skipped). */
export function parseBirdDescriptionCsv(text: string): BirdColumnDescription[] {
  const rows = parseCsv(text);
  if (rows.length === 0) return [];
  const header = rows[0].map((h) => h.replace(/^\ufeff/, "").trim().toLowerCase());
  const at = (name: string) => header.indexOf(name);
  const iOrig = at("original_column_name");
  if (iOrig < 0) {
    throw new Error(`BIRD description CSV: no original_column_name column in header [${rows[0].join(", ")}]`);
  }
  const get = (r: string[], i: number) => (i >= 0 && i < r.length ? r[i].trim() : "");
  return rows.slice(1)
    .filter((r) => get(r, iOrig) !== "")
    .map((r) => ({
      originalColumnName: get(r, iOrig),
      columnName: get(r, at("column_name")),
      columnDescription: squeeze(get(r, at("column_description"))),
      dataFormat: get(r, at("data_format")),
      valueDescription: squeeze(get(r, at("value_description"))),
    }));
}

/** Merges BIRD descriptions for one table into `schema`. */
export function applyBirdDescriptions(schema: DbSchema, table: string, rows: BirdColumnDescription[]): Described {
  const tables = schema.tables.map(cloneTable);
  const t = findTable({ ...schema, tables }, table);
  if (!t) return { schema, unmatched: [table] };
  const unmatched: string[] = [];
  for (const r of rows) {
    const c = findColumn(t, r.originalColumnName);
    if (!c) {
      unmatched.push(`${t.name}.${r.originalColumnName}`);
      continue;
    }
    if (r.columnName && saysMore(r.columnName, c.name)) c.naturalName = r.columnName;
    const known = [c.name, c.naturalName ?? ""];
    if (r.columnDescription && !known.some((k) => !saysMore(r.columnDescription, k))) {
      c.description = r.columnDescription;
    }
    if (r.valueDescription) c.valueDescription = r.valueDescription;
    if (r.dataFormat) c.dataFormat = r.dataFormat;
  }
  return { schema: { ...schema, tables }, unmatched };
}

/** Merges a whole `database_description/` folder given as file name -> bytes ("<table>.csv"). */
export function applyBirdDescriptionFiles(schema: DbSchema, files: Record<string, Uint8Array>): Described {
  let cur = schema;
  const unmatched: string[] = [];
  for (const [file, bytes] of Object.entries(files)) {
    const base = file.split(/[\\/]/).pop() ?? file;
    if (!base.toLowerCase().endsWith(".csv")) continue;
    const r = applyBirdDescriptions(cur, base.slice(0, -4), parseBirdDescriptionCsv(decodeText(bytes)));
    cur = r.schema;
    unmatched.push(...r.unmatched);
  }
  return { schema: cur, unmatched };
}

// BIRD's original_column_name cells carry stray spaces and differ in case from the DDL.
function findColumn(t: TableInfo, name: string): ColumnInfo | undefined {
  const key = name.trim().toLowerCase();
  return t.columns.find((c) => c.name.toLowerCase() === key) ??
    t.columns.find((c) => c.name.trim().toLowerCase() === key);
}

/** True when `text` is not just `name` respelled (case, spaces, underscores, punctuation). */
function saysMore(text: string, name: string): boolean {
  const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
  return norm(text) !== norm(name);
}

function squeeze(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}

function cloneTable(t: TableInfo): TableInfo {
  return { ...t, columns: t.columns.map((c) => ({ ...c, examples: [...c.examples] })) };
}

function isSpiderEntry(e: unknown): e is SpiderTablesEntry {
  if (typeof e !== "object" || e === null) return false;
  const r = e as Record<string, unknown>;
  const pairs = (v: unknown) =>
    Array.isArray(v) && v.every((p) => Array.isArray(p) && typeof p[0] === "number" && typeof p[1] === "string");
  const strings = (v: unknown) => Array.isArray(v) && v.every((s) => typeof s === "string");
  return typeof r.db_id === "string" && strings(r.table_names) && strings(r.table_names_original) &&
    pairs(r.column_names) && pairs(r.column_names_original);
}
