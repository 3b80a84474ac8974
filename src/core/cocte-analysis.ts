// Analysis helpers of the chain rewriter (core/cocte-rewrite.ts): what a subquery reads and
// defines, its output names, step names, and the projection a step makes.
import { exprName, ident } from "./cocte-names.ts";
import { aggregates, allQualifiers, type ColumnRef, columnRefs, splitAlias, subqueries } from "./sql-expr.ts";
import { squeezeSpaces } from "./sql-lex.ts";
import { parseSelect, type Source } from "./sql-struct.ts";

/** A query the rewriter does not handle; its message is the reason reported. */
export class RewriteError extends Error {}

/** One FROM source as the rewriter resolves names against it. */
export interface SrcInfo {
  /** The name qualifiers use: the alias, else the table name (lower-cased). */
  key: string;
  /** Known column names (lower-cased), or null. */
  cols: Set<string> | null;
}

/** Output column names of a subquery, when every one is known. */
export function outputNames(sql: string): Set<string> | null {
  const sel = parseSelect(sql);
  if (!sel) return null;
  const out = new Set<string>();
  for (const it of sel.parts[0].items) {
    const { expr, alias } = splitAlias(sql.slice(it.start, it.end));
    const refs = columnRefs(expr, () => true);
    if (alias) out.add(alias.toLowerCase());
    else if (refs.length === 1 && refs[0].span.start === 0 && refs[0].span.end === expr.length) {
      out.add(refs[0].column.toLowerCase());
    } else return null;
  }
  return out;
}

/** Every table name and alias defined in `sql` at any depth; null when it does not parse. */
export function definedNames(sql: string): Set<string> | null {
  const sel = parseSelect(sql);
  if (!sel) return null;
  const out = new Set<string>();
  for (const p of sel.parts) {
    for (const s of p.from?.sources ?? []) {
      if (s.table) out.add(s.table.toLowerCase());
      if (s.alias) out.add(s.alias.toLowerCase());
      if (s.kind === "subquery") {
        const inner = definedNames(sql.slice(s.target.start + 1, s.target.end - 1));
        if (!inner) return null;
        for (const n of inner) out.add(n);
      }
    }
    for (const sub of subqueries(sql.slice(p.span.start, p.span.end))) {
      const text = sql.slice(p.span.start, p.span.end);
      const inner = definedNames(text.slice(sub.start + 1, sub.end - 1));
      if (!inner) return null;
      for (const n of inner) out.add(n);
    }
  }
  return out;
}

/** True when the subquery reads a name of the query around it (or cannot be told). */
export function correlated(
  inner: string,
  outer: readonly SrcInfo[],
  schema: ReadonlyMap<string, Set<string>> | null,
): boolean {
  const defined = definedNames(inner);
  if (!defined) return true;
  if (allQualifiers(inner).some((q) => !defined.has(q.toLowerCase()))) return true;
  if (!schema) return false;
  const sel = parseSelect(inner)!;
  for (const p of sel.parts) {
    const own = (p.from?.sources ?? []).map((s) => schema.get(s.table.toLowerCase()) ?? null);
    if (own.some((c) => c === null)) continue;
    const text = inner.slice(p.span.start, p.span.end);
    for (const r of columnRefs(text, (n, dq) => !dq || own.some((c) => c!.has(n.toLowerCase())))) {
      const c = r.column.toLowerCase();
      if (r.qualifier === null && !own.some((s) => s!.has(c)) && outer.some((o) => o.cols?.has(c))) return true;
    }
  }
  return false;
}

export function unquoteName(t: string): string {
  return /^"[^"]*"$/.test(t) ? t.slice(1, -1) : t;
}

export function key(expr: string): string {
  return squeezeSpaces(expr).toLowerCase().replace(/\s+/g, "");
}

/** Name of a subquery step: its table and what it selects ("singer_avg_age"). */
export function subName(inner: string): string {
  const sel = parseSelect(inner);
  const p = sel?.parts[0];
  const table = p?.from?.sources[0]?.table || "sub";
  if (!p || sel!.parts.length > 1) return `${table}_set`;
  const { expr, alias } = splitAlias(inner.slice(p.items[0].start, p.items[0].end));
  if (alias) return `${table}_${alias}`;
  const agg = aggregates(expr);
  if (agg.length) return `${table}_${exprName(expr)}`;
  const refs = columnRefs(expr, () => true);
  return `${table}_${refs[0]?.column ?? "value"}`;
}

/** The projection of a step: distinct referenced columns, each under a unique output name. */
export function project(
  refs: ColumnRef[],
  owner: (r: ColumnRef) => number,
  sources: Source[],
  used: Set<string> = new Set(),
) {
  const byKey = new Map<string, string>();
  const list: string[] = [];
  const outputs = new Set<string>();
  const counts = new Map<string, number>();
  const keyOf = (r: ColumnRef) => `${owner(r)}:${r.column.toLowerCase()}`;
  const distinct = new Map<string, ColumnRef>();
  for (const r of refs) if (!distinct.has(keyOf(r))) distinct.set(keyOf(r), r);
  for (const r of distinct.values()) counts.set(r.column.toLowerCase(), (counts.get(r.column.toLowerCase()) ?? 0) + 1);
  for (const [k, r] of distinct) {
    const src = sources[owner(r)];
    let out = counts.get(r.column.toLowerCase())! > 1 || used.has(r.column.toLowerCase())
      ? `${src?.table || src?.alias || "t"}_${r.column}`
      : r.column;
    for (let i = 2; outputs.has(out.toLowerCase()) || used.has(out.toLowerCase()); i++) out = `${r.column}_${i}`;
    outputs.add(out.toLowerCase());
    const text = ident(out);
    byKey.set(k, text);
    const refText = r.qualifier !== null ? `${ident(r.qualifier)}.${r.raw}` : r.raw;
    list.push(out === r.column ? refText : `${refText} AS ${text}`);
  }
  return {
    list,
    outputs,
    name: (r: ColumnRef) => {
      const n = byKey.get(keyOf(r));
      if (n === undefined) throw new RewriteError(`column ${r.column} is not in the projection`);
      return n;
    },
  };
}
export function usesQualifier(text: string, name: string): boolean {
  return allQualifiers(text).some((q) => q.toLowerCase() === name.toLowerCase());
}
