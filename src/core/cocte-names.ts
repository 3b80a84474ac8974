// Names, comments and layout of generated chains of CTEs.
import type { CteStep } from "./cocte.ts";
import { squeezeSpaces } from "./sql-lex.ts";

const RESERVED = new Set(
  ("select from where and or not in is null like glob between case when then else end as distinct all on join left right inner " +
    "outer cross natural using group by order having limit offset asc desc union intersect except exists cast collate with " +
    "values table index key primary references default check unique").split(" "),
);

/** Hands out CTE names unique (case-insensitively) among themselves and the database's tables. */
export class NameAllocator {
  private readonly used = new Set<string>();

  constructor(taken: Iterable<string> = []) {
    for (const t of taken) this.used.add(t.toLowerCase());
  }

  /** Marks a name as taken (a table the query reads). */
  take(name: string): void {
    this.used.add(name.toLowerCase());
  }

  /** A fresh plain identifier built from `base`. */
  alloc(base: string): string {
    let b = base.toLowerCase().replace(/[^a-z0-9_]+/g, "_").replace(/_+/g, "_").replace(/^_|_$/g, "");
    if (b === "" || /^[0-9]/.test(b)) b = `step_${b}`;
    b = b.slice(0, 40).replace(/_$/, "");
    let name = b;
    for (let i = 2; this.used.has(name) || RESERVED.has(name); i++) name = `${b}_${i}`;
    this.used.add(name);
    return name;
  }
}

/** `name` as an identifier SQLite reads back as the same name (double-quoted when needed). */
export function ident(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) && !RESERVED.has(name.toLowerCase())
    ? name
    : `"${name.replaceAll('"', '""')}"`;
}

/** A one-line comment text: squeezed, no newlines, at most `max` characters. */
export function commentOf(text: string, max = 90): string {
  const s = squeezeSpaces(text).replace(/\s+/g, " ");
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

/** A short name fragment for an expression: `avg(T1.age)` -> "avg_age", `count(*)` -> "row_count". */
export function exprName(expr: string): string {
  const m = /^\s*([A-Za-z_]+)\s*\(\s*(distinct\s+)?(.*)\)\s*$/is.exec(expr);
  if (!m) return "value";
  const fn = m[1].toLowerCase();
  const arg = m[3].trim();
  if (arg === "*") return fn === "count" ? "row_count" : fn;
  const col = /([A-Za-z_][A-Za-z0-9_]*)\W*$/.exec(arg.replace(/["`\]]/g, ""))?.[1] ?? "value";
  return `${fn}_${m[2] ? "distinct_" : ""}${col}`.toLowerCase();
}

/** The chain's text: `WITH`, each step with its comment, then the final statement. */
export function renderChain(steps: readonly CteStep[], final: string): string {
  if (steps.length === 0) return final;
  const defs = steps.map((s) => `${s.comment ? `  -- ${s.comment}\n` : ""}  ${s.name} AS (\n    ${s.sql}\n  )`);
  return `WITH\n${defs.join(",\n")}\n${final}`;
}
