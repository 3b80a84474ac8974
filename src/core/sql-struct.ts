// Clause-level structure of a SQLite SELECT, as spans of the original text: compound parts, each
// part's clauses, its FROM sources and joins. Expressions are not parsed into trees — the chain
// rewriter only moves whole clauses, replaces subqueries and renames column references, so it
// keeps the gold's own text. Returns null for what it does not understand (the caller reports).
import { isWord, significant, type Token, tokenize } from "./sql-lex.ts";

/** A half-open character range [start, end) of the parsed text. */
export interface Span {
  start: number;
  end: number;
}

/** One FROM source: a table or a parenthesised subquery, with how it is joined to the ones before. */
export interface Source {
  kind: "table" | "subquery";
  /** The whole source: name or parentheses, and its alias. */
  span: Span;
  /** The table name as written, or the subquery's parentheses (inclusive). */
  target: Span;
  /** Table name as written (unquoted); "" for a subquery. */
  table: string;
  /** Alias as written (unquoted), or null. */
  alias: string | null;
  /** The join operator before it, upper-cased and squeezed ("", ",", "JOIN", "LEFT JOIN", ...). */
  join: string;
  /** ON condition or USING list (with its keyword), when present. */
  on: Span | null;
  using: Span | null;
}

/** One SELECT core (a compound's part). */
export interface Core {
  span: Span;
  distinct: boolean;
  /** The result columns, split at top-level commas. */
  items: Span[];
  from: { span: Span; sources: Source[] } | null;
  where: Span | null;
  groupBy: Span | null;
  having: Span | null;
  orderBy: Span | null;
  limit: Span | null;
}

/** A SELECT statement: one or more cores joined by set operators; ORDER BY/LIMIT of a compound apply to the whole. */
export interface Select {
  parts: Core[];
  /** Operators between parts, upper-cased ("UNION", "UNION ALL", "INTERSECT", "EXCEPT"). */
  ops: string[];
  /** Only for compounds (parts.length > 1); a single core keeps its own. */
  orderBy: Span | null;
  limit: Span | null;
}

const CLAUSES = ["SELECT", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "WINDOW"] as const;
const SET_OPS = new Set(["UNION", "INTERSECT", "EXCEPT"]);
const JOIN_WORDS = new Set(["NATURAL", "LEFT", "RIGHT", "FULL", "INNER", "CROSS", "OUTER", "JOIN"]);

/** Removes the quotes of a quoted name ("a""b" -> a"b, [x] -> x); other text is returned as is. */
export function unquote(name: string): string {
  const q = name[0];
  if (q === '"' || q === "`") return name.slice(1, -1).replaceAll(q + q, q);
  if (q === "[") return name.slice(1, -1);
  return name;
}

/** Parses one SELECT statement (no WITH, no trailing text); null when it is not one. */
export function parseSelect(sql: string): Select | null {
  try {
    return parseSig(significant(tokenize(sql)));
  } catch {
    return null;
  }
}

/** Top-level (depth 0) positions in `sig` of tokens for which `pred` holds. */
function topLevel(sig: Token[], pred: (t: Token, k: number) => boolean): number[] {
  const out: number[] = [];
  let depth = 0;
  for (let k = 0; k < sig.length; k++) {
    const t = sig[k];
    if (t.kind === "op" && t.text === "(") depth++;
    else if (t.kind === "op" && t.text === ")") depth--;
    else if (depth === 0 && pred(t, k)) out.push(k);
    if (depth < 0) throw new Error("unbalanced parentheses");
  }
  if (depth !== 0) throw new Error("unbalanced parentheses");
  return out;
}

function span(sig: Token[], from: number, to: number): Span {
  return { start: sig[from].start, end: sig[to - 1].end };
}

function parseSig(sig: Token[]): Select | null {
  if (sig.some((t) => t.unterminated)) return null;
  while (sig.at(-1)?.text === ";") sig = sig.slice(0, -1);
  if (!isWord(sig[0], "SELECT")) return null;
  const cuts = topLevel(sig, (t) => t.kind === "word" && SET_OPS.has(t.text.toUpperCase()));
  const parts: Core[] = [];
  const ops: string[] = [];
  let from = 0;
  const bounds: [number, number][] = [];
  for (const c of cuts) {
    bounds.push([from, c]);
    const all = isWord(sig[c + 1], "ALL");
    ops.push(sig[c].text.toUpperCase() + (all ? " ALL" : ""));
    from = c + (all ? 2 : 1);
  }
  bounds.push([from, sig.length]);
  for (const [a, b] of bounds) {
    const core = parseCore(sig.slice(a, b));
    if (!core) return null;
    parts.push(core);
  }
  let orderBy: Span | null = null;
  let limit: Span | null = null;
  if (parts.length > 1) {
    // ORDER BY and LIMIT written after the last part belong to the whole compound.
    const last = parts[parts.length - 1];
    for (const p of parts.slice(0, -1)) if (p.orderBy || p.limit) return null;
    orderBy = last.orderBy;
    limit = last.limit;
    last.orderBy = null;
    last.limit = null;
    const ends = [last.where, last.groupBy, last.having, last.from?.span, last.items.at(-1)].filter((s): s is Span =>
      s != null
    );
    last.span = { start: last.span.start, end: Math.max(...ends.map((s) => s.end)) };
  }
  return { parts, ops, orderBy, limit };
}

function parseCore(sig: Token[]): Core | null {
  if (!isWord(sig[0], "SELECT")) return null;
  const marks = topLevel(sig, (t, k) => {
    if (t.kind !== "word") return false;
    const u = t.text.toUpperCase();
    if (!(CLAUSES as readonly string[]).includes(u)) return false;
    // GROUP and ORDER start a clause only before BY.
    return (u !== "GROUP" && u !== "ORDER") || isWord(sig[k + 1], "BY");
  });
  if (marks[0] !== 0) return null;
  const clause = new Map<string, Span>();
  for (let m = 0; m < marks.length; m++) {
    const kw = sig[marks[m]].text.toUpperCase();
    if (clause.has(kw) || kw === "WINDOW") return null;
    const bodyStart = marks[m] + (kw === "GROUP" || kw === "ORDER" ? 2 : 1);
    const bodyEnd = m + 1 < marks.length ? marks[m + 1] : sig.length;
    if (bodyEnd <= bodyStart) return null;
    clause.set(kw, span(sig, bodyStart, bodyEnd));
  }
  // Clauses must come in SQL's order.
  const order = marks.map((k) => CLAUSES.indexOf(sig[k].text.toUpperCase() as (typeof CLAUSES)[number]));
  if (order.some((o, i) => i > 0 && o <= order[i - 1])) return null;
  const selEnd = marks.length > 1 ? marks[1] : sig.length;
  let itemStart = 1;
  let distinct = false;
  if (isWord(sig[1], "DISTINCT")) {
    distinct = true;
    itemStart = 2;
  } else if (isWord(sig[1], "ALL")) {
    itemStart = 2;
  }
  if (itemStart >= selEnd) return null;
  const itemSig = sig.slice(itemStart, selEnd);
  const commas = topLevel(itemSig, (t) => t.kind === "op" && t.text === ",");
  const items: Span[] = [];
  let a = 0;
  for (const c of [...commas, itemSig.length]) {
    if (c <= a) return null;
    items.push(span(itemSig, a, c));
    a = c + 1;
  }
  let from: Core["from"] = null;
  const fromSpan = clause.get("FROM");
  if (fromSpan) {
    const fs = sig.filter((t) => t.start >= fromSpan.start && t.end <= fromSpan.end);
    const sources = parseFrom(fs);
    if (!sources) return null;
    from = { span: fromSpan, sources };
  }
  return {
    span: span(sig, 0, sig.length),
    distinct,
    items,
    from,
    where: clause.get("WHERE") ?? null,
    groupBy: clause.get("GROUP") ?? null,
    having: clause.get("HAVING") ?? null,
    orderBy: clause.get("ORDER") ?? null,
    limit: clause.get("LIMIT") ?? null,
  };
}

function parseFrom(sig: Token[]): Source[] | null {
  const out: Source[] = [];
  let k = 0;
  let join = "";
  while (k < sig.length) {
    const startTok = k;
    let kind: Source["kind"] = "table";
    let target: Span;
    let table = "";
    if (sig[k].text === "(") {
      const close = closeOf(sig, k);
      if (close < 0 || !isWord(sig[k + 1], "SELECT")) return null;
      kind = "subquery";
      target = span(sig, k, close + 1);
      k = close + 1;
    } else if (sig[k].kind === "word" || sig[k].kind === "qident") {
      let end = k + 1;
      if (sig[end]?.text === "." && sig[end + 1]) end += 2;
      // A table-valued function (json_each(...)) is not handled.
      if (sig[end]?.text === "(") return null;
      target = span(sig, k, end);
      table = unquote(sig[end - 1].text);
      k = end;
    } else {
      return null;
    }
    let alias: string | null = null;
    if (isWord(sig[k], "AS")) k++;
    const a = sig[k];
    if (a && (a.kind === "qident" || (a.kind === "word" && !isJoinOrClauseWord(a)))) {
      alias = unquote(a.text);
      k++;
    }
    let on: Span | null = null;
    let using: Span | null = null;
    const sourceEnd = k;
    if (isWord(sig[k], "ON") || isWord(sig[k], "USING")) {
      const isOn = isWord(sig[k], "ON");
      let j = k + 1;
      let depth = 0;
      for (; j < sig.length; j++) {
        const t = sig[j];
        if (t.text === "(") depth++;
        else if (t.text === ")") depth--;
        else if (depth === 0 && (t.text === "," || (t.kind === "word" && JOIN_WORDS.has(t.text.toUpperCase())))) break;
      }
      if (j === k + 1) return null;
      if (isOn) on = span(sig, k + 1, j);
      else using = span(sig, k, j);
      k = j;
    }
    out.push({ kind, span: span(sig, startTok, sourceEnd), target, table, alias, join, on, using });
    if (k >= sig.length) break;
    if (sig[k].text === ",") {
      join = ",";
      k++;
      continue;
    }
    const words: string[] = [];
    while (k < sig.length && sig[k].kind === "word" && JOIN_WORDS.has(sig[k].text.toUpperCase())) {
      words.push(sig[k].text.toUpperCase());
      k++;
      if (words.at(-1) === "JOIN") break;
    }
    if (words.at(-1) !== "JOIN") return null;
    join = words.join(" ");
  }
  return out.length ? out : null;
}

function isJoinOrClauseWord(t: Token): boolean {
  const u = t.text.toUpperCase();
  return JOIN_WORDS.has(u) || u === "ON" || u === "USING" || (CLAUSES as readonly string[]).includes(u) ||
    SET_OPS.has(u);
}

/** Index of the ")" closing the "(" at `open` in `sig`, or -1. */
export function closeOf(sig: Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < sig.length; k++) {
    if (sig[k].kind !== "op") continue;
    if (sig[k].text === "(") depth++;
    else if (sig[k].text === ")" && --depth === 0) return k;
  }
  return -1;
}
