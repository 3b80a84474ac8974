// Gold against itself on all of Spider train (6,904 questions, 138 databases): every gold query
// that runs must score correct; the ones that fail to run are reported, never scored.
import { readFileSync } from "node:fs";
import { parseQuestions } from "../src/core/loaders.ts";
import { SqlEvaluator } from "../src/runtime/sql-eval.ts";
import { fileDatabaseLoader } from "../src/runtime/sql-files.deno.ts";
import { SqlPool } from "../src/runtime/sql-pool.ts";
import { assert, assertEquals } from "./assert.ts";
import { sharedDatasets } from "./shared.ts";

Deno.test({
  name: "eval-spider: every executable Spider-train gold scores correct against itself (set and ordered)",
  ignore: sharedDatasets === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = `${sharedDatasets}/spider-train`;
    const { items, problems } = parseQuestions(readFileSync(`${root}/questions.jsonl`, "utf8"));
    assertEquals([items.length, problems.length], [6904, 0]);
    assertEquals(new Set(items.map((i) => i.task.db_id)).size, 138);
    const pool = new SqlPool({ loadDatabase: fileDatabaseLoader(`${root}/database`), workers: 2, timeoutMs: 30_000 });
    const set = new SqlEvaluator(pool, "set");
    const ordered = new SqlEvaluator(pool, "ordered");
    const failed: string[] = [];
    const wrong: string[] = [];
    let correct = 0;
    const t0 = performance.now();
    try {
      let next = 0;
      await Promise.all(Array.from({ length: 8 }, async () => {
        while (next < items.length) {
          const { position, task } = items[next++];
          const s = await set.score(task, task.gold_sql);
          if (s.status === "gold-failed") {
            failed.push(`${position} ${task.db_id}: ${s.error.kind}: ${s.error.message}`);
            continue;
          }
          // The same query twice on the same file returns the same rows in the same order.
          const o = await ordered.score(task, task.gold_sql);
          if (s.outcome.correct && o.status === "scored" && o.outcome.correct) correct++;
          else wrong.push(`${position} ${task.db_id}: ${JSON.stringify(s.outcome.error)} ${task.gold_sql}`);
        }
      }));
    } finally {
      pool.close();
    }
    console.log(
      `Spider train: ${correct} executable golds all correct, ${failed.length} golds fail to run, ${
        ((performance.now() - t0) / 1000).toFixed(1)
      } s`,
    );
    for (const f of failed) console.log(`  gold fails: ${f}`);
    assertEquals(wrong, [], "golds scored wrong against themselves");
    assertEquals(correct + failed.length, items.length);
    // The dataset's README: "a handful of gold queries fail to execute on these files".
    assert(failed.length < 20, `${failed.length} golds failed: more than a handful`);
  },
});
