// Schema as prompt text: OmniSQL-style CREATE TABLE statements whose column comments carry
// natural names, descriptions and example values.
import type { ColumnInfo, DbSchema, ExampleValue, TableInfo } from "./schema.ts";
import { quoteIdent, quoteLiteral } from "./schema.ts";

/** What the DDL shows. */
export interface DdlOptions {
  /** Example values per column, at most what introspection kept (default 3). */
  examplesPerColumn?: number;
  /** Show natural names and descriptions in comments (default true). */
  descriptions?: boolean;
  /** Only these tables (case-insensitive names), in schema order; all when absent. */
  tables?: readonly string[];
}

/** Renders the schema as CREATE TABLE statements separated by blank lines. */
export function renderDdl(schema: DbSchema, opts: DdlOptions = {}): string {
  const keep = opts.tables ? new Set(opts.tables.map((t) => t.toLowerCase())) : null;
  const tables = schema.tables.filter((t) => !keep || keep.has(t.name.toLowerCase()));
  const present = new Set(tables.map((t) => t.name.toLowerCase()));
  return tables.map((t) => renderTable(t, present, opts)).join("\n\n");
}

/** One column comment: natural name, description, value meanings, examples (empty when nothing to say). */
export function columnComment(c: ColumnInfo, examples: number, descriptions: boolean): string {
  const parts: string[] = [];
  if (descriptions) {
    if (c.naturalName) parts.push(oneLine(c.naturalName));
    if (c.description) parts.push(oneLine(c.description));
    if (c.valueDescription) parts.push(`values: ${oneLine(c.valueDescription)}`);
  }
  const ex = c.examples.slice(0, Math.max(0, examples));
  if (ex.length > 0) parts.push(`example: [${ex.map(showExample).join(", ")}]`);
  return parts.join(", ");
}

/** An example value as SQLite would write it: numbers bare, text quoted. */
export function showExample(v: ExampleValue): string {
  return typeof v === "number" ? String(v) : quoteLiteral(v);
}

function renderTable(t: TableInfo, present: Set<string>, opts: DdlOptions): string {
  const examples = opts.examplesPerColumn ?? 3;
  const descriptions = opts.descriptions ?? true;
  const body: { text: string; comment: string }[] = t.columns.map((c) => ({
    text: `${quoteIdent(c.name)}${c.type ? " " + c.type : ""}${c.notNull ? " NOT NULL" : ""}`,
    comment: columnComment(c, examples, descriptions),
  }));
  if (t.primaryKey.length > 0) {
    body.push({ text: `PRIMARY KEY (${t.primaryKey.map(quoteIdent).join(", ")})`, comment: "" });
  }
  // Keys to tables left out of the prompt would point at nothing the model can see.
  for (const fk of t.foreignKeys) {
    if (!present.has(fk.refTable.toLowerCase())) continue;
    const name = `fk_${t.name}_${fk.column}`.toLowerCase().replace(/[^a-z0-9_]+/g, "_");
    const ref = `${quoteIdent(fk.refTable)}${fk.refColumn === null ? "" : ` (${quoteIdent(fk.refColumn)})`}`;
    body.push({ text: `CONSTRAINT ${name} FOREIGN KEY (${quoteIdent(fk.column)}) REFERENCES ${ref}`, comment: "" });
  }
  const lines = body.map((b, i) => {
    const comma = i < body.length - 1 ? "," : "";
    return `    ${b.text}${comma}${b.comment ? ` -- ${b.comment}` : ""}`;
  });
  const head = t.naturalName && descriptions
    ? `CREATE TABLE ${quoteIdent(t.name)} ( -- ${oneLine(t.naturalName)}`
    : `CREATE TABLE ${quoteIdent(t.name)} (`;
  return `${head}\n${lines.join("\n")}\n);`;
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim();
}
