// Benchmark (not a test): how long do correct answers ever take in sql.js? The data behind the
// recipe's per-prediction time limit (docs/evaluator.md, "Time limits"). Runs, in process through
// the same guard as the workers, every gold query of Spider train and of the demo's splits, and
// each gold's Chain-of-CTE rewrite (core/cocte-rewrite.ts: a different text with the same rows,
// checked here under set comparison), i.e. correct answers written another way; repeated `reps`
// times, the minimum kept (the machine is shared). Prints the distribution and the slowest.
// Usage: deno run -A bench/sql-budget.bench.ts [../shared/datasets/spider-train] [reps=2]
import { readFileSync } from "node:fs";
import { toChainOfCtes } from "../src/core/cocte-rewrite.ts";
import { indexGold, matchesGold } from "../src/core/compare.ts";
import { DEFAULT_LIMITS, GuardedDatabase } from "../src/runtime/sql-exec.ts";
import { loadSqlJs } from "../src/runtime/sql-wasm.ts";

const root = Deno.args[0] ?? new URL("../../shared/datasets/spider-train", import.meta.url).pathname;
const reps = Number(Deno.args[1] ?? 2);
const demo = new URL("../public/demo", import.meta.url).pathname;
type Item = { set: string; dbPath: string; db: string; sql: string };
const items: Item[] = [];
for (const l of readFileSync(`${root}/questions.jsonl`, "utf8").split("\n")) {
  if (!l.trim()) continue;
  const q = JSON.parse(l);
  items.push({ set: "spider", db: q.db_id, dbPath: `${root}/database/${q.db_id}/${q.db_id}.sqlite`, sql: q.query });
}
for (const split of ["train", "test", "heldout"]) {
  for (const l of readFileSync(`${demo}/${split}.jsonl`, "utf8").split("\n")) {
    if (!l.trim()) continue;
    const q = JSON.parse(l);
    items.push({ set: "demo", db: q.db_id, dbPath: `${demo}/${q.db_id}/${q.db_id}.sqlite`, sql: q.gold_sql });
  }
}
const SQL = await loadSqlJs();
const dbs = new Map<string, GuardedDatabase>();
const open = (p: string) => {
  let g = dbs.get(p);
  if (!g) dbs.set(p, g = new GuardedDatabase(SQL, Deno.readFileSync(p)));
  return g;
};
/** Minimum wall ms over `reps` runs, or null when it fails. */
function time(g: GuardedDatabase, sql: string) {
  let best = Infinity;
  let last = null;
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    last = g.query(sql, DEFAULT_LIMITS);
    best = Math.min(best, performance.now() - t);
    if (!last.ok) return null;
  }
  return last && last.ok ? { ms: best, result: last.result } : null;
}
const rows: { set: string; kind: string; db: string; ms: number; gold_ms: number; sql: string }[] = [];
let rewrites = 0, equal = 0;
for (const it of items) {
  const g = open(it.dbPath);
  const gold = time(g, it.sql);
  if (!gold) continue;
  rows.push({ set: it.set, kind: "gold", db: it.db, ms: gold.ms, gold_ms: gold.ms, sql: it.sql });
  const cte = toChainOfCtes(it.sql);
  if (!cte.ok) continue;
  rewrites++;
  const alt = time(g, cte.cocte);
  if (!alt || !matchesGold(alt.result, indexGold(gold.result, "set"))) continue;
  equal++;
  rows.push({ set: it.set, kind: "cocte", db: it.db, ms: alt.ms, gold_ms: gold.ms, sql: cte.cocte });
}
const q = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const out: Record<string, unknown> = {
  reps,
  load_average: Deno.loadavg(),
  rewrites,
  rewrites_equal: equal,
  interruptible: SQL.deadlines !== null,
};
for (const set of ["spider", "demo"]) {
  for (const kind of ["gold", "cocte"]) {
    const ms = rows.filter((r) => r.set === set && r.kind === kind).map((r) => r.ms).sort((a, b) => a - b);
    if (!ms.length) continue;
    out[`${set}_${kind}`] = {
      n: ms.length,
      p50_ms: +q(ms, 0.5).toFixed(2),
      p99_ms: +q(ms, 0.99).toFixed(2),
      p999_ms: +q(ms, 0.999).toFixed(2),
      max_ms: +ms[ms.length - 1].toFixed(1),
    };
  }
}
const ratios = rows.filter((r) => r.kind === "cocte" && r.gold_ms > 1).map((r) => r.ms / r.gold_ms).sort((a, b) =>
  a - b
);
out.cocte_over_gold_when_gold_over_1ms = {
  n: ratios.length,
  p50: +q(ratios, 0.5).toFixed(2),
  p99: +q(ratios, 0.99).toFixed(2),
  max: +(ratios.at(-1) ?? 0).toFixed(2),
};
// The recipe's rule (scoring.ts predictionTimeMs): limit = clamp(factor x the gold's time, floor, 30 s).
// Correct answers it would have stopped, for a few floors and factors (0 wanted everywhere).
const stopped: Record<string, number> = {};
for (const floor of [50, 100, 250, 500]) {
  for (const factor of [2, 5, 10]) {
    stopped[`floor_${floor}_x${factor}`] = rows.filter((r) =>
      r.ms > Math.min(30_000, Math.max(floor, factor * r.gold_ms))
    ).length;
  }
}
out.correct_answers_stopped = stopped;
out.slowest = [...rows].sort((a, b) => b.ms - a.ms).slice(0, 8).map((r) => ({
  set: r.set,
  kind: r.kind,
  db: r.db,
  ms: +r.ms.toFixed(1),
  gold_ms: +r.gold_ms.toFixed(1),
  sql: r.sql.slice(0, 160),
}));
console.log(JSON.stringify(out, null, 1));
