import initSqlJs from "sql.js";
import { assert, assertEquals } from "../../tests/assert.ts";
import { sharedDatasets } from "../../tests/shared.ts";
import { resultsMatch } from "./compare.ts";
import { Rng } from "./rng.ts";
import {
  type AnswerCount,
  bestOfN,
  majAtK,
  passAtK,
  resultKey,
  vote,
  type VoteSample,
  voteWeightingOf,
} from "./selfconsistency.ts";
import type { ResultSet, SqlValue } from "./types.ts";

const rs = (rows: SqlValue[][], capped = false): ResultSet => ({
  columns: rows[0]?.map((_, i) => `c${i}`) ?? [],
  rows,
  capped,
});

Deno.test("resultKey: set, bag and ordered semantics; INTEGER 1 equals REAL 1.0; no collisions", () => {
  const a = rs([[1n, "x"], [2n, "y"], [1n, "x"]]);
  const b = rs([[2n, "y"], [1, "x"]]);
  assertEquals(resultKey(a), resultKey(b), "set: order and duplicates ignored, 1n == 1.0");
  assert(resultKey(a, "bag") !== resultKey(b, "bag"), "bag: duplicates count");
  assertEquals(resultKey(rs([[1n], [2n], [2n]]), "bag"), resultKey(rs([[2n], [1n], [2n]]), "bag"));
  assert(resultKey(rs([[1n], [2n]]), "ordered") !== resultKey(rs([[2n], [1n]]), "ordered"), "ordered: order counts");
  assertEquals(
    resultKey({ columns: ["a"], rows: [[3n]], capped: false }),
    resultKey({ columns: ["b"], rows: [[3n]], capped: false }),
    "column names ignored",
  );
  const distinct: SqlValue[][][] = [
    [[1.5]],
    [["1.5"]],
    [[null]],
    [["null"]],
    [["N"]],
    [["a,b"]],
    [["a", "b"]],
    [['a"],["b']],
    [[new Uint8Array([1, 2])]],
    [["0102"]],
    [[1n, 2n]],
    [[12n]],
    [[1n], [2n]],
    [],
    [[0.1 + 0.2]],
    [[0.3]],
    [[9007199254740993n]],
    [[9007199254740992n]],
  ];
  const keys = distinct.map((rows) => resultKey(rs(rows)));
  assertEquals(new Set(keys).size, keys.length, `keys collide: ${JSON.stringify(keys)}`);
  assertEquals(resultKey(rs([[-0]])), resultKey(rs([[0n]])));
});

Deno.test("resultKey: equal keys exactly when compare.ts's resultsMatch holds (random mixed-type results)", () => {
  const rng = new Rng(31);
  const pool: SqlValue[] = [null, 0n, 1n, 1, 1.5, -0, "1", "", "a", "a,b", new Uint8Array([1]), 2n ** 63n - 1n];
  const randomResult = (): ResultSet => {
    const cols = 1 + rng.int(2);
    return rs(Array.from({ length: rng.int(4) }, () => Array.from({ length: cols }, () => pool[rng.int(pool.length)])));
  };
  const results = Array.from({ length: 60 }, randomResult);
  // Add shuffled and duplicated copies so that equal pairs occur under every semantics.
  for (const r of results.slice(0, 30)) {
    results.push(rs(rng.shuffle([...r.rows, ...r.rows.slice(0, 1)])), rs(rng.shuffle([...r.rows])));
  }
  for (const mode of ["set", "bag", "ordered"] as const) {
    let equalPairs = 0;
    for (const a of results) {
      for (const b of results) {
        const same = resultKey(a, mode) === resultKey(b, mode);
        assertEquals(
          same,
          resultsMatch(a, b, mode),
          `${mode}: ${JSON.stringify(a.rows, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))} vs ${
            JSON.stringify(b.rows, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))
          }`,
        );
        if (same && a !== b) equalPairs++;
      }
    }
    assert(equalPairs > 0, `${mode}: no equal pairs exercised`);
  }
});

Deno.test("vote: count vote, deterministic ties, failed executions never win unless all failed", () => {
  const ok = (v: bigint): VoteSample => ({ result: rs([[v]]) });
  const bad: VoteSample = { result: null };
  const r = vote([bad, ok(2n), bad, ok(1n), ok(2n), bad, bad]);
  assertEquals(r.winner?.key, resultKey(rs([[2n]])));
  assertEquals(r.winner?.members, [1, 4]);
  assertEquals(r.groups.map((g) => g.members.length), [2, 1, 4], "failed group last even though largest");
  assert(!r.allFailed);
  // Tie 1 vs 1: the answer seen first wins, whatever the values.
  assertEquals(vote([ok(9n), ok(3n)]).winner?.members, [0]);
  assertEquals(vote([ok(3n), ok(9n)]).winner?.members, [0]);
  const capped: VoteSample = { result: rs([[5n]], true) };
  const all = vote([bad, capped]);
  assert(all.allFailed && all.winner?.key === null && all.winner.members.length === 2, "capped counts as failed");
  assertEquals(vote([]).winner, null);
});

Deno.test("vote: log-probability weighting (softmax of sums, exp of per-token means)", () => {
  // Answer A: two unlikely long samples; answer B: one likely short sample.
  const A = rs([["A"]]);
  const B = rs([["B"]]);
  const samples: VoteSample[] = [
    { result: A, logprob: -30, tokens: 30 },
    { result: A, logprob: -31, tokens: 31 },
    { result: B, logprob: -5, tokens: 2 },
  ];
  assertEquals(vote(samples, "count").winner?.key, resultKey(A));
  const soft = vote(samples, "softmax-logprob");
  assertEquals(soft.winner?.key, resultKey(B), "softmax of summed logprobs favours the likely sequence");
  const z = Math.exp(-30) + Math.exp(-31) + Math.exp(-5);
  assert(Math.abs(soft.groups[0].weight - Math.exp(-5) / z) < 1e-15, `weight ${soft.groups[0].weight}`);
  // Per-token means: A has exp(-1) twice = 0.736, B exp(-2.5) = 0.082: A wins after length normalisation.
  const mean = vote(samples, "exp-mean-logprob");
  assertEquals(mean.winner?.key, resultKey(A));
  assert(Math.abs(mean.winner!.weight - 2 * Math.exp(-1)) < 1e-15);
  assertEquals(mean.winner?.representative, 0, "the heaviest member represents the group");
  assertEquals([
    voteWeightingOf("count", "softmax"),
    voteWeightingOf("logprob", "softmax"),
    voteWeightingOf("logprob", "exp-mean"),
  ], ["count", "softmax-logprob", "exp-mean-logprob"]);
});

Deno.test("bestOfN: argmax, first on ties, NaN never wins", () => {
  assertEquals(bestOfN([3, 7, 7, 1], (x) => x), { index: 1, score: 7 });
  assertEquals(bestOfN([NaN, 2], (x) => x).index, 1);
  assertEquals(bestOfN([NaN], (x) => x).index, -1);
  assertEquals(bestOfN(["a", "bbb", "cc"], (s) => s.length).index, 1);
});

function binom(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}

Deno.test("passAtK: equals 1 - C(n-c,k)/C(n,k) computed exactly with bigint binomials", () => {
  for (const n of [1, 5, 16, 100, 200]) {
    for (const c of [0, 1, Math.floor(n / 3), n]) {
      for (const k of [1, 2, 10, n]) {
        if (k > n || c > n) continue;
        const num = binom(n - c, k);
        const den = binom(n, k);
        // Exact rational to 1e-15 through scaled bigint division.
        const exact = 1 - Number((num * 10n ** 18n) / den) / 1e18;
        const got = passAtK(n, c, k);
        assert(Math.abs(got - exact) < 1e-12, `n=${n} c=${c} k=${k}: ${got} vs ${exact}`);
      }
    }
  }
  assert(Math.abs(passAtK(10, 3, 1) - 0.3) < 1e-15, "pass@1 is c / n");
  assertEquals(passAtK(10, 8, 3), 1);
});

function bruteMaj(answers: AnswerCount[], k: number): number {
  const labels = answers.flatMap((a, j) => new Array<number>(a.count).fill(j));
  let sum = 0;
  let count = 0;
  const pick: number[] = [];
  const rec = (start: number) => {
    if (pick.length === k) {
      const c = new Array<number>(answers.length).fill(0);
      for (const i of pick) c[labels[i]]++;
      const top = Math.max(0, ...c.filter((_, j) => !answers[j].failed));
      const tied = c.map((_x, j) => j).filter((j) => !answers[j].failed && c[j] === top && top > 0);
      sum += tied.length ? tied.filter((j) => answers[j].correct).length / tied.length : 0;
      count++;
      return;
    }
    for (let i = start; i < labels.length; i++) {
      pick.push(i);
      rec(i + 1);
      pick.pop();
    }
  };
  rec(0);
  return sum / count;
}

Deno.test("majAtK: exact enumeration equals brute force over all k-subsets; Monte Carlo close to it", () => {
  const answers: AnswerCount[] = [
    { count: 4, correct: false },
    { count: 3, correct: true },
    { count: 2, correct: false },
    { count: 3, correct: false, failed: true },
  ];
  for (const k of [1, 2, 3, 5, 8, 12]) {
    const { value, exact } = majAtK(answers, k);
    const brute = bruteMaj(answers, k);
    assert(exact && Math.abs(value - brute) < 1e-12, `k=${k}: ${value} vs brute ${brute}`);
  }
  assert(Math.abs(majAtK(answers, 1).value - 3 / 12) < 1e-15, "maj@1 is the fraction of correct samples");
  const rng = new Rng(8);
  const mc = majAtK(answers, 5, { maxTerms: 1, trials: 40000, random: () => rng.next() });
  const exact5 = bruteMaj(answers, 5);
  assert(!mc.exact && Math.abs(mc.value - exact5) < 0.01, `Monte Carlo ${mc.value} vs ${exact5}`);
  assertEquals(majAtK([{ count: 4, correct: true, failed: true }], 2).value, 0, "all failed scores 0");
});

Deno.test({
  name: "vote on real Spider databases: rewrites of the gold query group with it, other answers do not",
  ignore: sharedDatasets === null,
  async fn() {
    const root = `${sharedDatasets}/spider-train`;
    const SQL = await initSqlJs({
      wasmBinary:
        (await Deno.readFile(new URL("../../node_modules/sql.js/dist/sql-wasm.wasm", import.meta.url))).buffer,
    });
    const lines = (await Deno.readTextFile(`${root}/questions.jsonl`)).split("\n").filter((l) => l.trim()).slice(
      0,
      150,
    );
    const qs = lines.map((l) => JSON.parse(l) as { db_id: string; query: string });
    const byDb = new Map<string, typeof qs>();
    for (const q of qs) byDb.set(q.db_id, [...(byDb.get(q.db_id) ?? []), q]);
    let checked = 0;
    for (const [db, group] of [...byDb].slice(0, 12)) {
      const handle = new SQL.Database(await Deno.readFile(`${root}/database/${db}/${db}.sqlite`));
      const run = (sql: string): ResultSet | null => {
        try {
          const r = handle.exec(sql);
          return {
            columns: r[0]?.columns ?? [],
            rows: (r[0]?.values ?? []).map((row) => row.map((v) => v)),
            capped: false,
          };
        } catch {
          return null;
        }
      };
      for (let i = 0; i < group.length; i++) {
        const gold = run(group[i].query);
        if (gold === null) continue;
        const inner = group[i].query.replace(/;\s*$/, "");
        const samples: VoteSample[] = [
          { result: run(`SELECT * FROM (${inner}) ORDER BY random()`) },
          { result: run(`SELECT DISTINCT * FROM (${inner})`) },
          { result: run(group[(i + 1) % group.length].query) },
          { result: run(group[(i + 2) % group.length].query) },
          { result: run("SELEC nonsense") },
        ];
        const r = vote(samples);
        const expected = samples.map((s, j) => (s.result && resultsMatch(s.result, gold, "set") ? j : -1)).filter((j) =>
          j >= 0
        );
        assert(expected.includes(0) && expected.includes(1), `${db}: rewrites of ${inner} must match the gold result`);
        assertEquals(r.winner?.members, expected, `${db}: ${inner}`);
        assertEquals(r.winner?.key, resultKey(gold));
        checked++;
      }
      handle.close();
    }
    assert(checked >= 120, `only ${checked} questions checked`);
    console.log(
      `${checked} gold queries on ${
        Math.min(12, byDb.size)
      } Spider databases: votes grouped rewrites with the gold result`,
    );
  },
});
