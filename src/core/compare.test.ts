import { assert, assertEquals } from "../../tests/assert.ts";
import { indexGold, matchesGold, resultsMatch, valueKey, valuesEqual } from "./compare.ts";
import type { ResultSet, SqlValue } from "./types.ts";

const rs = (rows: SqlValue[][], capped = false): ResultSet => ({
  columns: rows[0]?.map((_, i) => `c${i}`) ?? [],
  rows,
  capped,
});

Deno.test("compare: values follow Python's == on what sqlite3 returns", () => {
  assert(valuesEqual(6n, 6), "integer 6 == real 6.0");
  assert(valuesEqual(-0, 0n), "-0.0 == 0");
  assert(!valuesEqual("6", 6n), "text '6' != integer 6");
  assert(!valuesEqual("6", 6), "text '6' != real 6.0");
  assert(valuesEqual(null, null), "NULL == NULL");
  assert(!valuesEqual(null, 0n), "NULL != 0");
  assert(!valuesEqual(null, ""), "NULL != ''");
  assert(!valuesEqual(0.5, 0n), "0.5 != 0");
  assert(valuesEqual(0.1 + 0.2, 0.1 + 0.2) && !valuesEqual(0.1 + 0.2, 0.3), "reals compare exactly");
  assert(valuesEqual(new Uint8Array([0, 255]), new Uint8Array([0, 255])), "blobs by content");
  assert(!valuesEqual(new Uint8Array([1]), "\u0001"), "blob != text");
});

Deno.test("compare: 64-bit integers are exact (9007199254740993 vs 9007199254740992)", () => {
  assert(!valuesEqual(9007199254740993n, 9007199254740992n), "distinct bigints");
  // Python: 9007199254740993 == 9007199254740992.0 is False, 9007199254740992 == 9007199254740992.0 True.
  assert(!valuesEqual(9007199254740993n, 9007199254740992), "bigint vs the double below it");
  assert(valuesEqual(9007199254740992n, 9007199254740992), "bigint vs equal double");
  assert(valuesEqual(-(2n ** 63n), -(2 ** 63)), "INT64_MIN vs -2^63 as a double");
  assert(!valuesEqual(2n ** 63n - 1n, 2 ** 63), "INT64_MAX vs 2^63 as a double");
});

Deno.test("compare: set vs bag vs ordered", () => {
  const gold = rs([[1n, "a"], [2n, "b"], [2n, "b"]]);
  const reordered = rs([[2n, "b"], [1n, "a"], [2n, "b"]]);
  const deduped = rs([[2n, "b"], [1n, "a"]]);
  const dupOther = rs([[1n, "a"], [1n, "a"], [2n, "b"]]);
  assert(resultsMatch(reordered, gold, "set") && resultsMatch(reordered, gold, "bag"), "order ignored by set and bag");
  assert(!resultsMatch(reordered, gold, "ordered"), "order matters for ordered");
  assert(resultsMatch(gold, gold, "ordered"), "ordered equal to itself");
  assert(resultsMatch(deduped, gold, "set"), "duplicates ignored by set");
  assert(!resultsMatch(deduped, gold, "bag"), "duplicates counted by bag");
  assert(resultsMatch(dupOther, gold, "set"), "same set, different multiplicities");
  assert(!resultsMatch(dupOther, gold, "bag"), "bag sees the multiplicities");
  assert(
    resultsMatch(rs([]), rs([]), "set") && resultsMatch(rs([]), rs([]), "bag") &&
      resultsMatch(rs([]), rs([]), "ordered"),
  );
  assert(!resultsMatch(rs([[null]]), rs([]), "set"), "one NULL row != no rows");
  assert(resultsMatch(rs([[6.0, null]]), rs([[6n, null]]), "ordered"), "6.0 == 6 inside rows, NULL == NULL");
});

Deno.test("compare: column order matters, column names do not", () => {
  const gold: ResultSet = { columns: ["name", "age"], rows: [["x", 1n]], capped: false };
  const swapped: ResultSet = { columns: ["age", "name"], rows: [[1n, "x"]], capped: false };
  const renamed: ResultSet = { columns: ["n", "a"], rows: [["x", 1n]], capped: false };
  for (const mode of ["set", "bag", "ordered"] as const) {
    assert(!resultsMatch(swapped, gold, mode), `swapped columns differ (${mode})`);
    assert(resultsMatch(renamed, gold, mode), `names ignored (${mode})`);
  }
  // A row of one column holding "a\n…" must not collide with a row of two columns.
  assert(!resultsMatch(rs([["a", "b"]]), rs([["a\nsb"]]), "set"), "tuple keys are unambiguous");
  assert(!resultsMatch(rs([[1n, 2n]]), rs([[1n]]), "set"), "arity differs");
});

Deno.test("compare: a capped result never matches", () => {
  const rows: SqlValue[][] = [[1n]];
  assert(!resultsMatch(rs(rows, true), rs(rows), "set"), "capped prediction");
  assert(!resultsMatch(rs(rows), rs(rows, true), "set"), "capped gold");
});

Deno.test("compare: indexGold + matchesGold agree with resultsMatch on random rows", () => {
  // Seeded small-alphabet rows so that duplicates and near-duplicates are frequent.
  let s = 12345;
  const rnd = (n: number) => ((s = (s * 1103515245 + 12345) % 2 ** 31) % n);
  const vals: SqlValue[] = [1n, 1, 2n, "1", null, 2.5, new Uint8Array([1])];
  const randRows = () => Array.from({ length: rnd(5) }, () => Array.from({ length: 2 }, () => vals[rnd(vals.length)]));
  let agreeTrue = 0;
  for (let t = 0; t < 2000; t++) {
    const a = rs(randRows());
    const b = rs(randRows());
    for (const mode of ["set", "bag", "ordered"] as const) {
      const direct = resultsMatch(a, b, mode);
      assertEquals(matchesGold(a, indexGold(b, mode)), direct, `trial ${t} ${mode}`);
      // Reference: Python-like semantics through keys built independently of compare.ts.
      const key = (r: SqlValue[]) => JSON.stringify(r.map(refKey));
      const ka = a.rows.map(key);
      const kb = b.rows.map(key);
      const ref = mode === "ordered"
        ? ka.join("|") === kb.join("|") && ka.length === kb.length
        : mode === "bag"
        ? [...ka].sort().join("|") === [...kb].sort().join("|") && ka.length === kb.length
        : [...new Set(ka)].sort().join("|") === [...new Set(kb)].sort().join("|");
      assertEquals(direct, ref, `trial ${t} ${mode} vs reference`);
      if (direct) agreeTrue++;
    }
  }
  assert(agreeTrue > 50, `the random cases must include matches, got ${agreeTrue}`);
});

/** Independent key: numbers as exact decimal strings of their value. */
function refKey(v: SqlValue): string {
  if (v === null) return "null";
  if (typeof v === "bigint") return `num:${v.toString()}`;
  if (typeof v === "number") return Number.isInteger(v) ? `num:${v.toFixed(0)}` : `num:${v}`;
  if (typeof v === "string") return `str:${v}`;
  return `blob:${Array.from(v).join(",")}`;
}

Deno.test("compare: valueKey distinguishes the SQLite storage classes", () => {
  const keys = [valueKey(1n), valueKey("1"), valueKey(new Uint8Array([0x31])), valueKey(null), valueKey(1.5)];
  assertEquals(new Set(keys).size, keys.length);
});
