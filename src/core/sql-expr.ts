// Token-level helpers over SQL expression text for the chain rewriter: conjuncts, subqueries,
// column references and aggregate calls, each as spans of the text, and span replacement.
import { isWord, significant, type Token, tokenize } from "./sql-lex.ts";
import { closeOf, type Span, unquote } from "./sql-struct.ts";

/** Words that are never a column reference when written bare. */
const KEYWORDS = new Set(
  ("SELECT FROM WHERE AND OR NOT IN IS NULL LIKE GLOB REGEXP MATCH BETWEEN CASE WHEN THEN ELSE END AS DISTINCT ALL ON JOIN " +
    "LEFT RIGHT INNER OUTER CROSS NATURAL USING GROUP BY ORDER HAVING LIMIT OFFSET ASC DESC UNION INTERSECT EXCEPT EXISTS " +
    "CAST COLLATE ESCAPE NULLS FIRST LAST CURRENT_DATE CURRENT_TIME CURRENT_TIMESTAMP ISNULL NOTNULL").split(" "),
);

/** SQLite's aggregate functions (min and max only with one argument; with more they are scalar). */
const AGGREGATES = new Set(["COUNT", "SUM", "AVG", "MIN", "MAX", "TOTAL", "GROUP_CONCAT", "STRING_AGG"]);

/** A column reference in a text: `qualifier.column` or a bare `column`. */
export interface ColumnRef {
  span: Span;
  qualifier: string | null;
  /** The column name, unquoted. */
  column: string;
  /** The column token as written (quotes kept). */
  raw: string;
  /** Written as a double-quoted name (SQLite reads an unknown one as a string). */
  doubleQuoted: boolean;
}

function sigOf(text: string): Token[] {
  return significant(tokenize(text));
}

/** Outermost parenthesised subqueries `( SELECT ... )` in `text`, parentheses included. */
export function subqueries(text: string): Span[] {
  const sig = sigOf(text);
  const out: Span[] = [];
  for (let k = 0; k < sig.length; k++) {
    if (sig[k].kind === "op" && sig[k].text === "(" && (isWord(sig[k + 1], "SELECT") || isWord(sig[k + 1], "WITH"))) {
      const close = closeOf(sig, k);
      if (close < 0) break;
      out.push({ start: sig[k].start, end: sig[close].end });
      k = close;
    }
  }
  return out;
}

function inside(pos: number, spans: readonly Span[]): boolean {
  return spans.some((s) => pos >= s.start && pos < s.end);
}

/** The text split at top-level ANDs (the AND of a BETWEEN excepted); the whole text when an OR is at top level. */
export function conjuncts(text: string): string[] {
  const sig = sigOf(text);
  const cuts: Token[] = [];
  let depth = 0;
  let between = 0;
  for (const t of sig) {
    if (t.kind === "op" && t.text === "(") depth++;
    else if (t.kind === "op" && t.text === ")") depth--;
    else if (depth === 0 && t.kind === "word") {
      const u = t.text.toUpperCase();
      if (u === "CASE") depth += 1000;
      else if (u === "OR") return [text.trim()];
      else if (u === "BETWEEN") between++;
      else if (u === "AND") {
        if (between > 0) between--;
        else cuts.push(t);
      }
    } else if (depth >= 1000 && t.kind === "word" && t.text.toUpperCase() === "END") {
      depth -= 1000;
    } else if (depth >= 1000 && t.kind === "word" && t.text.toUpperCase() === "CASE") {
      depth += 1000;
    }
  }
  const out: string[] = [];
  let a = 0;
  for (const c of cuts) {
    out.push(text.slice(a, c.start).trim());
    a = c.end;
  }
  out.push(text.slice(a).trim());
  return out.filter((s) => s !== "");
}

/**
 * Column references in `text` outside subqueries. Bare words that are keywords, function names,
 * names after AS or COLLATE, and double-quoted names for which `isColumn` says no are left out.
 * `isColumn` (default: bare words yes, double-quoted no) decides unqualified names.
 */
export function columnRefs(text: string, isColumn?: (name: string, doubleQuoted: boolean) => boolean): ColumnRef[] {
  const sig = sigOf(text);
  const subs = subqueries(text);
  const out: ColumnRef[] = [];
  const nameTok = (t: Token | undefined) =>
    t !== undefined && (t.kind === "qident" || (t.kind === "word" && !KEYWORDS.has(t.text.toUpperCase())));
  for (let k = 0; k < sig.length; k++) {
    const t = sig[k];
    if (inside(t.start, subs) || !nameTok(t)) continue;
    const prev = sig[k - 1];
    if (prev && (isWord(prev, "AS") || isWord(prev, "COLLATE") || (prev.kind === "op" && prev.text === "."))) continue;
    const next = sig[k + 1];
    if (next?.kind === "op" && next.text === "(") continue;
    if (next?.kind === "op" && next.text === "." && sig[k + 2]) {
      const col = sig[k + 2];
      if (col.kind === "op" && col.text === "*") {
        k += 2;
        continue;
      }
      if (col.kind === "word" || col.kind === "qident") {
        out.push({
          span: { start: t.start, end: col.end },
          qualifier: unquote(t.text),
          column: unquote(col.text),
          raw: col.text,
          doubleQuoted: col.text.startsWith('"'),
        });
        k += 2;
        continue;
      }
    }
    const dq = t.text.startsWith('"');
    const decide = isColumn ?? ((_n: string, d: boolean) => !d);
    if (!decide(unquote(t.text), dq)) continue;
    out.push({
      span: { start: t.start, end: t.end },
      qualifier: null,
      column: unquote(t.text),
      raw: t.text,
      doubleQuoted: dq,
    });
  }
  return out;
}

/** True when `text` has a `*` or `x.*` result column. */
export function hasStar(text: string): boolean {
  const sig = sigOf(text);
  return sig.some((t, k) =>
    t.kind === "op" && t.text === "*" && (k === 0 || sig[k - 1].text === "." || sig[k - 1].text === ",")
  );
}

/** Outermost aggregate calls in `text` outside subqueries, e.g. `count(*)`, `avg(T1.age)`. */
export function aggregates(text: string): Span[] {
  const sig = sigOf(text);
  const subs = subqueries(text);
  const out: Span[] = [];
  for (let k = 0; k < sig.length; k++) {
    const t = sig[k];
    if (
      t.kind !== "word" || !AGGREGATES.has(t.text.toUpperCase()) || sig[k + 1]?.text !== "(" || inside(t.start, subs)
    ) continue;
    const close = closeOf(sig, k + 1);
    if (close < 0) return out;
    const u = t.text.toUpperCase();
    if (u === "MIN" || u === "MAX") {
      // max(a, b) is the scalar function.
      let depth = 0;
      let comma = false;
      for (let j = k + 1; j <= close; j++) {
        if (sig[j].text === "(") depth++;
        else if (sig[j].text === ")") depth--;
        else if (sig[j].text === "," && depth === 1) comma = true;
      }
      if (comma) continue;
    }
    let end = close;
    // An aggregate with a FILTER or OVER clause is a window or filtered call: keep its tail with it.
    if (isWord(sig[close + 1], "FILTER") || isWord(sig[close + 1], "OVER")) return [];
    out.push({ start: t.start, end: sig[end].end });
    k = end;
  }
  return out;
}

/** Replaces non-overlapping spans of `text`. */
export function replaceSpans(text: string, edits: readonly { span: Span; text: string }[]): string {
  const sorted = [...edits].sort((a, b) => a.span.start - b.span.start);
  let s = "";
  let at = 0;
  for (const e of sorted) {
    if (e.span.start < at) throw new Error("replaceSpans: overlapping edits");
    s += text.slice(at, e.span.start) + e.text;
    at = e.span.end;
  }
  return s + text.slice(at);
}

/** A select item's expression and its `AS` alias (unquoted), if any. */
export function splitAlias(item: string): { expr: string; alias: string | null; aliasRaw: string | null } {
  const sig = sigOf(item);
  const n = sig.length;
  if (
    n >= 3 && isWord(sig[n - 2], "AS") &&
    (sig[n - 1].kind === "word" || sig[n - 1].kind === "qident" || sig[n - 1].kind === "string")
  ) {
    const raw = sig[n - 1].text;
    return {
      expr: item.slice(0, sig[n - 2].start).trim(),
      alias: raw.startsWith("'") ? raw.slice(1, -1) : unquote(raw),
      aliasRaw: raw,
    };
  }
  return { expr: item.trim(), alias: null, aliasRaw: null };
}

/** True when the text holds a top-level positional term (`ORDER BY 2`, `GROUP BY 1`). */
export function hasPositionalTerm(text: string): boolean {
  const parts = splitTopLevelCommas(text);
  return parts.some((p) => /^\d+(\s+(asc|desc))?$/i.test(p.trim()));
}

/** The text split at top-level commas. */
export function splitTopLevelCommas(text: string): string[] {
  const sig = sigOf(text);
  const out: string[] = [];
  let depth = 0;
  let a = 0;
  for (const t of sig) {
    if (t.text === "(") depth++;
    else if (t.text === ")") depth--;
    else if (t.text === "," && depth === 0) {
      out.push(text.slice(a, t.start).trim());
      a = t.end;
    }
  }
  out.push(text.slice(a).trim());
  return out;
}

/** Qualifiers used anywhere in `text` (subqueries included): the `X` of every `X.column`. */
export function allQualifiers(text: string): string[] {
  const sig = sigOf(text);
  const out: string[] = [];
  for (let k = 0; k + 2 < sig.length; k++) {
    const t = sig[k];
    if (
      (t.kind === "word" || t.kind === "qident") && sig[k + 1].text === "." &&
      (sig[k + 2].kind === "word" || sig[k + 2].kind === "qident" || sig[k + 2].text === "*")
    ) {
      if (k > 0 && sig[k - 1].text === ".") continue;
      out.push(unquote(t.text));
    }
  }
  return out;
}
