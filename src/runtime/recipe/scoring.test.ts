// The scorer's cost controls (scoring.ts): the gold runs once per task (shared cache, hits counted),
// identical repeatable SQL runs once per batch, every prediction gets its time limit from its gold,
// and none of it changes an outcome or a reward.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { parseQuestions } from "../../core/loaders.ts";
import { REWARD_PRESETS } from "../../core/rewards.ts";
import type { Task } from "../../core/types.ts";
import { DEFAULT_LIMITS, GuardedDatabase } from "../sql-exec.ts";
import { isRepeatable } from "../sql-guard.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import type { SqlRunner } from "./context.ts";
import { DEFAULT_PREDICTION_TIME, type GoldCache, predictionTimeMs, Scorer } from "./scoring.ts";

const SQL = await loadSqlJs();
const demo = new URL("../../../public/demo/", import.meta.url);
const shop = new GuardedDatabase(SQL, await Deno.readFile(new URL("shop/shop.sqlite", demo)));
const train: Task[] = parseQuestions(await Deno.readTextFile(new URL("train.jsonl", demo))).items.map((i) => i.task);
const task = train.find((t) => t.db_id === "shop" && /JOIN/i.test(t.gold_sql)) ?? train[0];

/** An in-process runner over the demo shop that records each call and its time limit. */
function recording(): SqlRunner & { calls: { sql: string; timeoutMs?: number }[] } {
  const calls: { sql: string; timeoutMs?: number }[] = [];
  return {
    calls,
    query(_db, sql, o) {
      calls.push({ sql, timeoutMs: o?.timeoutMs });
      return Promise.resolve(shop.query(sql, DEFAULT_LIMITS, o?.timeoutMs ?? Infinity));
    },
  };
}

const block = (sql: string) => "```sql\n" + sql + "\n```";

Deno.test("scoring: predictionTimeMs is factor x the gold's time within [floor, cap]; a failed gold gets the floor", () => {
  const t = DEFAULT_PREDICTION_TIME;
  assertEquals([t.factor, t.floorMs, t.capMs], [10, 250, 30_000]);
  assertEquals(predictionTimeMs(0.08), 250);
  assertEquals(predictionTimeMs(78.3), 783);
  assertEquals(predictionTimeMs(1734.9), 17349);
  assertEquals(predictionTimeMs(3138.5), 30_000);
  assertEquals(predictionTimeMs(null), 250);
  assertEquals(predictionTimeMs(Infinity), 250);
  assertEquals(predictionTimeMs(40, { factor: 2, floorMs: 10, capMs: 50 }), 50);
});

Deno.test("scoring: the gold runs once per task across scorers of one dataset, and identical SQL once per batch (counted)", async () => {
  const runner = recording();
  const golds: GoldCache = new Map();
  const scorer = new Scorer(runner, REWARD_PRESETS.databricks, "set", "auto", golds);
  const texts = [
    block(task.gold_sql),
    block(task.gold_sql),
    "SELECT count(*) FROM orders",
    "SELECT count(*) FROM orders",
    "SELECT count(*) FROM orders",
    "SELECT abs(random()) % 1 FROM orders LIMIT 1",
    "SELECT abs(random()) % 1 FROM orders LIMIT 1",
    "no SQL here",
  ];
  const scored = await scorer.scoreSamples(
    [task],
    texts.map((text, index) => ({
      prompt: 0,
      index,
      tokens: [1, 2],
      text,
      logprobs: [0, 0],
      finishReason: "eos" as const,
    })),
  );
  assertEquals(scored.map((s) => s.correct), [true, true, false, false, false, false, false, false]);
  // 1 gold (+ its timing run when it took over 25 ms) + gold text once + count(*) once + random() twice (not repeatable).
  const retimes = scorer.stats().goldRetimes;
  assertEquals(runner.calls.length, 5 + retimes);
  assertEquals(scorer.stats(), {
    goldRuns: 1,
    goldHits: 7,
    goldRetimes: retimes,
    predictionRuns: 4,
    predictionHits: 3,
  });
  // Another batch of the same scorer runs the repeated text again (sharing is per batch)...
  await scorer.scoreSamples([task], [{
    prompt: 0,
    index: 0,
    tokens: [1],
    text: "SELECT count(*) FROM orders",
    logprobs: [0],
    finishReason: "eos",
  }]);
  assertEquals(runner.calls.length, 6 + retimes);
  // ...and a second scorer of the same dataset (the next stage) finds the gold in the shared cache.
  const next = new Scorer(runner, REWARD_PRESETS.databricks, "set", "auto", golds);
  await next.scoreCompletion(task, block(task.gold_sql), 3);
  assertEquals(next.stats(), { goldRuns: 0, goldHits: 1, goldRetimes: 0, predictionRuns: 1, predictionHits: 0 });
  assertEquals(runner.calls.length, 7 + retimes);
});

Deno.test("scoring: a batch answers exactly what one-at-a-time scoring answers (outcomes and rewards)", async () => {
  const texts = [
    block(task.gold_sql),
    "SELECT 1",
    "SELECT 1",
    "SELECT name FROM WHERE",
    block(task.gold_sql),
    "nothing",
    `SELECT * FROM (${task.gold_sql}) ORDER BY 1`,
  ];
  for (const spec of [REWARD_PRESETS.databricks, REWARD_PRESETS.arctic]) {
    const batched = await new Scorer(recording(), spec, "set", "auto").scoreSamples(
      [task],
      texts.map((text, index) => ({
        prompt: 0,
        index,
        tokens: [1, 2, 3],
        text,
        logprobs: [0, 0, 0],
        finishReason: "eos" as const,
      })),
    );
    const single = new Scorer(recording(), spec, "set", "auto");
    for (const [i, text] of texts.entries()) {
      const one = await single.scoreCompletion(task, text, 3);
      const strip = (s: typeof one) => ({ ...s, outcome: s.outcome && { ...s.outcome, ms: 0 } });
      assertEquals(strip(batched[i]), strip(one), `completion ${i}`);
    }
  }
});

Deno.test("scoring: predictions run under their gold's time limit (runaway SQL times out), the gold under the runner's own", async () => {
  const runner = recording();
  const scorer = new Scorer(runner, REWARD_PRESETS.arctic, "set", "auto");
  const runaway = "SELECT count(*) FROM orders, order_items, customers";
  const [gold, bad] = await Promise.all([
    scorer.scoreCompletion(task, block(task.gold_sql), 4),
    scorer.scoreCompletion(task, runaway, 4),
  ]);
  assert(gold.correct, "gold text scores correct");
  assertEquals(bad.outcome?.error?.kind, "timeout");
  assertEquals(bad.reward.total, 0);
  const g = await scorer.gold(task);
  assert(g.reply.ok);
  const limit = predictionTimeMs(g.reply.ms);
  // The gold (and its second, timing run when it took over 25 ms) under the runner's limit, first.
  const golds = 1 + scorer.stats().goldRetimes;
  assertEquals(runner.calls.map((c) => c.timeoutMs), [...new Array(golds).fill(undefined), limit, limit]);
});

Deno.test("scoring: isRepeatable refuses volatile functions and 'now'", () => {
  assert(isRepeatable("SELECT name FROM t WHERE x = 'random'"));
  for (
    const sql of [
      "SELECT random()",
      "SELECT RANDOMBLOB (4)",
      "SELECT date('now')",
      'SELECT datetime("now", "-1 day")',
      "SELECT changes()",
      "SELECT total_changes()",
      "SELECT last_insert_rowid()",
    ]
  ) {
    assert(!isRepeatable(sql), sql);
  }
});
