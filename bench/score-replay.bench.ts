// Benchmark (not a test): the score phase of the demo notebook's GRPO step (batchQuestions 4, G 8:
// 32 completions per step), replayed on the CPU through the recipe's Scorer and a SqlPool of module
// Workers (what `rlvr run` uses under Deno). Per step: the wall time from handing the 32
// completions to the scorer until every reward is known; with `overlap` the completions arrive as a
// simulated decode finishes them (row i after tokens_i x ms_per_token) and the step's score time is
// what is left after the last one arrived (what the GRPO stage now waits for).
//
// Completions, per step, come from one of:
//   - a run's samples.jsonl (`--samples FILE`: records of phase grpo; the whole step when the run
//     kept them, `rlvr run --samples-per-step 32`);
//   - the built-in mix (default): for 4 demo train questions, 8 completions each drawn from the SQL
//     the demo model wrote on the same database in the evidence runs (bench/evidence/results/*/
//     run-demo/predictions, every stage), the gold itself (17% of GRPO samples were correct there),
//     and slow SQL of the kinds the model writes: a join on one alias (`c.id = c.id`, seen in those
//     predictions), cartesian products counted or listed, an endless recursive CTE. `slow` sets how
//     many of the 32 are slow: "evidence" spreads 3 over every 40 steps (the evidence run hit 3 slow
//     queries in 1,280 samples: two 30 s timeouts and one 10 s step), a number puts that many in
//     every step (stress).
//
// The same file runs on older commits of the scorer (it only needs SqlPool and Scorer.scoreSamples),
// which is how the "before" figures were taken: `git archive <commit> | tar -x -C /tmp/base`, link
// node_modules, copy this file into /tmp/base/bench, run it there.
//
// Usage: deno run -A bench/score-replay.bench.ts [steps=40] [slow=evidence|N] [overlap=0|1]
//          [ms_per_token=7.5] [workers=2] [--samples FILE] [--out results.jsonl] [--process]
import { readFileSync, writeFileSync } from "node:fs";
import { parseQuestions } from "../src/core/loaders.ts";
import { REWARD_PRESETS } from "../src/core/rewards.ts";
import { Rng } from "../src/core/rng.ts";
import type { Task } from "../src/core/types.ts";
import type { Sample } from "../src/model/sampler.ts";
import { fileDatabaseLoader } from "../src/runtime/sql-files.deno.ts";
import { SqlPool } from "../src/runtime/sql-pool.ts";
import { spawnSqlProcess } from "../src/runtime/sql-process.deno.ts";
import { type Scored, Scorer } from "../src/runtime/recipe/scoring.ts";

const valued = new Set(["--samples", "--out"]);
const args = Deno.args.filter((a, i) => !a.startsWith("--") && !valued.has(Deno.args[i - 1]));
const flag = (name: string) => {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : undefined;
};
const steps = Number(args[0] ?? 40);
const slowArg = args[1] ?? "evidence";
const overlap = args[2] === "1";
const msPerToken = Number(args[3] ?? 7.5);
const workers = Number(args[4] ?? 2);
const demo = new URL("../public/demo/", import.meta.url);
const tasksOf = (f: string): Task[] => parseQuestions(readFileSync(new URL(f, demo), "utf8")).items.map((i) => i.task);
const train = tasksOf("train.jsonl");

/** One completion of a step: its task, text and token count. */
interface Completion {
  task: Task;
  text: string;
  tokens: number;
  kind: string;
}

/** The demo model's SQL per database, from the evidence runs' prediction files (distinct texts). */
function evidenceSql(): Map<string, string[]> {
  const byDb = new Map<string, Set<string>>();
  const root = new URL("evidence/results/", import.meta.url);
  for (const date of Deno.readDirSync(root)) {
    const dir = new URL(`${date.name}/run-demo/predictions/`, root);
    let files: Deno.DirEntry[] = [];
    try {
      files = [...Deno.readDirSync(dir)];
    } catch {
      continue;
    }
    for (const f of files) {
      const dict: Record<string, string> = JSON.parse(readFileSync(new URL(f.name, dir), "utf8"));
      for (const v of Object.values(dict)) {
        const [sql, , db] = v.split("\t");
        if (sql.trim()) (byDb.get(db) ?? byDb.set(db, new Set()).get(db))?.add(sql);
      }
    }
  }
  return new Map([...byDb].map(([db, s]) => [db, [...s].sort()]));
}

/** Slow SQL of the kinds the policy writes, on a database's two or three largest tables. */
const SLOW: Record<string, string[]> = {
  shop: [
    "SELECT COUNT(*) FROM orders AS o JOIN customers AS c ON c.customer_id = c.customer_id WHERE c.country = 'US'",
    "SELECT o.order_id, c.name FROM orders AS o, customers AS c",
    "SELECT COUNT(*) FROM orders, order_items, customers",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
  ],
  subscriptions: [
    "SELECT COUNT(*) FROM events AS e JOIN payments AS p ON p.user_id = p.user_id",
    "SELECT e.event_type, p.amount FROM events AS e, payments AS p",
    "SELECT COUNT(*) FROM events, payments, users",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n",
  ],
  school: [
    "SELECT COUNT(*) FROM enrollments AS e JOIN students AS s ON s.student_id = s.student_id",
    "SELECT s.name, e.grade FROM students AS s, enrollments AS e",
    "SELECT COUNT(*) FROM enrollments, students, enrollments AS e2",
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n",
  ],
};

function builtInSteps(): Completion[][] {
  const sqlBy = evidenceSql();
  const rng = new Rng(20261201);
  const pool = train.filter((t) => sqlBy.has(t.db_id) && t.db_id in SLOW);
  const out: Completion[][] = [];
  for (let s = 0; s < steps; s++) {
    const picked: Task[] = [];
    while (picked.length < 4) {
      const t = pool[rng.int(pool.length)];
      if (!picked.includes(t)) picked.push(t);
    }
    const step: Completion[] = [];
    for (const t of picked) {
      const real = sqlBy.get(t.db_id) ?? [];
      for (let g = 0; g < 8; g++) {
        const gold = rng.next() < 0.17;
        const sql = gold ? t.gold_sql : real[rng.int(real.length)];
        step.push({ task: t, text: "```sql\n" + sql + "\n```", tokens: Math.ceil(sql.length / 3) + 4, kind: gold ? "gold" : "model" });
      }
    }
    // Slow ones replace model answers at seeded positions. "evidence": the evidence run's steps 5
    // and 7 each hit a 30 s timeout (here: an endless CTE, a 3-way cartesian count) and step 17
    // took 10 s (here: a listed cartesian product, capped at 1M rows).
    const at = s % 40;
    const kinds = slowArg === "evidence" ? (at === 4 ? [3] : at === 6 ? [2] : at === 16 ? [1] : []) : Array.from({ length: Number(slowArg) }, (_, k) => (s + k) % 4);
    for (const k of kinds) {
      const i = rng.int(step.length);
      const sql = SLOW[step[i].task.db_id][k];
      step[i] = { ...step[i], text: "```sql\n" + sql + "\n```", tokens: Math.ceil(sql.length / 3) + 4, kind: `slow${k}` };
    }
    out.push(step);
  }
  return out;
}

/** Steps of a run's samples.jsonl (phase grpo), tasks looked up in the demo splits. */
function samplesSteps(file: string): Completion[][] {
  const byId = new Map([...train, ...tasksOf("test.jsonl"), ...tasksOf("heldout.jsonl")].map((t) => [t.id, t]));
  const bySteps = new Map<number, Completion[]>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const r = JSON.parse(line);
    if (r.phase !== "grpo") continue;
    const task = byId.get(r.taskId);
    if (!task) throw new Error(`unknown task ${r.taskId}`);
    (bySteps.get(r.step) ?? bySteps.set(r.step, []).get(r.step))?.push({ task, text: r.completion, tokens: r.completionTokens, kind: "sample" });
  }
  return [...bySteps.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c).slice(0, steps);
}

const samplesFile = flag("samples");
const plan = samplesFile ? samplesSteps(samplesFile) : builtInSteps();
// --process: subprocess workers, so that a killed query really stops (a Deno Worker keeps spinning).
const isolation = Deno.args.includes("--process") ? "process" : "worker";
const pool = new SqlPool({
  loadDatabase: fileDatabaseLoader(new URL("demo", new URL("../public/", import.meta.url)).pathname),
  workers,
  ...(isolation === "process" ? { createWorker: spawnSqlProcess } : {}),
});
await pool.ready();
const scorer = new Scorer(pool, REWARD_PRESETS.databricks, "set", "sql-block");
const batchOf = (scorer as unknown as { batch?: () => { score(t: Task, text: string, n: number): Promise<Scored> } }).batch;
if (overlap && !batchOf) throw new Error("overlap needs Scorer.batch (this commit's scorer has none)");
const lines: string[] = [];
const stepMs: number[] = [];
console.error(`score-replay: ${plan.length} steps x ${plan[0]?.length} completions, slow=${samplesFile ? "samples" : slowArg}, overlap=${overlap}, ${workers} ${isolation} workers, load ${Deno.loadavg().map((x) => x.toFixed(1)).join(" ")}`);
for (const [s, step] of plan.entries()) {
  const tasks = [...new Set(step.map((c) => c.task))];
  let scored: Scored[];
  let ms: number;
  if (!overlap) {
    const samples: Sample[] = step.map((c, i) => ({ prompt: tasks.indexOf(c.task), index: i, tokens: new Array(c.tokens).fill(1), text: c.text, logprobs: [], finishReason: "eos" }));
    const t0 = performance.now();
    scored = await scorer.scoreSamples(tasks, samples);
    ms = performance.now() - t0;
  } else {
    // Decode simulated: golds prefetched at the start, row i handed over after tokens_i x msPerToken.
    (scorer as unknown as { prefetch(t: readonly Task[]): void }).prefetch(tasks);
    const b = batchOf?.call(scorer);
    if (!b) throw new Error("no batch");
    const t0 = performance.now();
    const pending = step.map((c) => new Promise<Scored>((resolve, reject) => setTimeout(() => b.score(c.task, c.text, c.tokens).then(resolve, reject), c.tokens * msPerToken)));
    const decodeEnd = t0 + Math.max(...step.map((c) => c.tokens)) * msPerToken;
    scored = await Promise.all(pending);
    ms = Math.max(0, performance.now() - decodeEnd);
  }
  stepMs.push(ms);
  step.forEach((c, i) => {
    const o = scored[i].outcome;
    lines.push(JSON.stringify({ step: s, i, task: c.task.id, kind: c.kind, correct: scored[i].correct, error: o?.error?.kind ?? null, reward: scored[i].reward.total, ms: o ? +o.ms.toFixed(1) : null }));
  });
  const slow = scored.filter((x) => (x.outcome?.ms ?? 0) > 200).map((x) => `${x.outcome?.error?.kind ?? "ok"} ${Math.round(x.outcome?.ms ?? 0)}ms`);
  console.error(`step ${s + 1}: ${ms.toFixed(0)} ms${slow.length ? `  (${slow.join(", ")})` : ""}`);
}
const sorted = [...stepMs].sort((a, b) => a - b);
const summary = {
  steps: stepMs.length, completions: plan.reduce((n, s) => n + s.length, 0), workers, isolation, overlap, ms_per_token: overlap ? msPerToken : null,
  slow: samplesFile ? "samples" : slowArg,
  median_ms: +sorted[Math.floor(sorted.length / 2)].toFixed(1), mean_ms: +(stepMs.reduce((a, b) => a + b, 0) / stepMs.length).toFixed(1), max_ms: +sorted[sorted.length - 1].toFixed(1),
  pool: pool.stats(), scorer: (scorer as unknown as { stats?: () => unknown }).stats?.() ?? null, load_average: Deno.loadavg(),
};
const out = flag("out");
if (out) writeFileSync(out, lines.join("\n") + "\n");
console.log(JSON.stringify(summary));
pool.close();
// Deno does not stop a Worker stuck in a query on terminate() (docs/evaluator.md): exit explicitly.
Deno.exit(0);
