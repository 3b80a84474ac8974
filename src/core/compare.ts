// Execution-result comparison under BIRD's and Spider's rules. Values compare as Python compares
// what sqlite3 returns: integer 6 == real 6.0, text '6' != 6, NULL == NULL, 64-bit integers exact.
import type { ResultSet, SqlValue } from "./types.ts";

/** How two results are compared: `set` (BIRD: rows as tuples, duplicates ignored), `bag` (multiset), `ordered` (list). */
export type CompareMode = "set" | "bag" | "ordered";

/** The comparison modes, for flag parsing. */
export const COMPARE_MODES = ["set", "bag", "ordered"] as const satisfies readonly CompareMode[];

/** Type guard for a comparison mode name. */
export function isCompareMode(s: unknown): s is CompareMode {
  return typeof s === "string" && (COMPARE_MODES as readonly string[]).includes(s);
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/**
 * A string key such that two values have the same key exactly when Python's `==` holds between
 * them (and so `hash` agrees). A real with an integral value takes the key of that integer, which
 * is exact: every finite double with no fraction converts to a bigint without rounding.
 */
export function valueKey(v: SqlValue): string {
  switch (typeof v) {
    case "bigint":
      return `i${v}`;
    case "number":
      // -0.0 == 0 in Python; BigInt(-0) is 0n, so they share a key.
      return Number.isInteger(v) ? `i${BigInt(v)}` : `r${v}`;
    case "string":
      return `s${JSON.stringify(v)}`;
    case "object":
      if (v === null) return "z";
      {
        let s = "b";
        for (let i = 0; i < v.length; i++) s += HEX[v[i]];
        return s;
      }
    default:
      return assertNever(v);
  }
}

/** Key of a row as a tuple: column order matters, and no two distinct tuples share a key. */
export function rowKey(row: readonly SqlValue[]): string {
  // Value keys never contain a raw newline (strings are JSON-escaped), so "\n" separates safely.
  let s = `${row.length}`;
  for (const v of row) s += "\n" + valueKey(v);
  return s;
}

/** Python's `==` between two SQLite values. */
export function valuesEqual(a: SqlValue, b: SqlValue): boolean {
  return valueKey(a) === valueKey(b);
}

/** True when `pred` equals `gold` under `mode`; a capped result on either side never matches. */
export function resultsMatch(pred: ResultSet, gold: ResultSet, mode: CompareMode): boolean {
  return matchesGold(pred, indexGold(gold, mode));
}

/** A precomputed gold result, so repeated comparisons against it (G samples per task) hash it once. */
export interface GoldIndex {
  mode: CompareMode;
  capped: boolean;
  keys: string[];
  set: Set<string>;
}

/** Indexes `gold` for repeated `matchesGold` calls. */
export function indexGold(gold: ResultSet, mode: CompareMode): GoldIndex {
  const keys = gold.rows.map(rowKey);
  return { mode, capped: gold.capped, keys, set: new Set(keys) };
}

/** `resultsMatch(pred, gold, gold.mode)` against an indexed gold. */
export function matchesGold(pred: ResultSet, gold: GoldIndex): boolean {
  if (pred.capped || gold.capped) return false;
  const mode = gold.mode;
  switch (mode) {
    case "ordered":
      if (pred.rows.length !== gold.keys.length) return false;
      for (let i = 0; i < pred.rows.length; i++) if (rowKey(pred.rows[i]) !== gold.keys[i]) return false;
      return true;
    case "set": {
      const p = new Set(pred.rows.map(rowKey));
      if (p.size !== gold.set.size) return false;
      for (const k of p) if (!gold.set.has(k)) return false;
      return true;
    }
    case "bag": {
      if (pred.rows.length !== gold.keys.length) return false;
      const counts = new Map<string, number>();
      for (const k of gold.keys) counts.set(k, (counts.get(k) ?? 0) + 1);
      for (const r of pred.rows) {
        const k = rowKey(r);
        const c = counts.get(k);
        if (!c) return false;
        counts.set(k, c - 1);
      }
      return true;
    }
    default:
      return assertNever(mode);
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected value ${String(x)}`);
}
