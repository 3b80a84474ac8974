// The recipe's scorer with its cost controls (time limits from the gold, identical SQL once per
// batch, interrupts in a pool of workers) against plain scoring (in process, no limit, every
// completion on its own) on a Spider-train sample: every 10th question, its gold and the gold of
// the next question on the same database (a hard prediction: about half match by rows) as
// completions, under two reward presets. Golds must score identically, bit for bit; a hard
// prediction may differ only by timing out under its limit (slow and wrong: by design), and each
// such case is printed.
import { readFileSync } from "node:fs";
import { parseQuestions } from "../src/core/loaders.ts";
import { REWARD_PRESETS } from "../src/core/rewards.ts";
import type { Task } from "../src/core/types.ts";
import type { Sample } from "../src/model/sampler.ts";
import { DEFAULT_LIMITS, GuardedDatabase } from "../src/runtime/sql-exec.ts";
import { fileDatabaseLoader } from "../src/runtime/sql-files.deno.ts";
import { SqlPool } from "../src/runtime/sql-pool.ts";
import { loadSqlJs } from "../src/runtime/sql-wasm.ts";
import { type Scored, Scorer } from "../src/runtime/recipe/scoring.ts";
import { assert, assertEquals } from "./assert.ts";
import { sharedDatasets } from "./shared.ts";

Deno.test({
  name:
    "score-spider: limits, batching and the pool leave Spider rewards as plain scoring gives them (every 10th question, gold and hard predictions)",
  ignore: sharedDatasets === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const root = `${sharedDatasets}/spider-train`;
    const all = parseQuestions(readFileSync(`${root}/questions.jsonl`, "utf8")).items.map((i) => i.task);
    const tasks: Task[] = [];
    const texts: string[] = [];
    for (let i = 0; i < all.length; i += 10) {
      const next = all[i + 1]?.db_id === all[i].db_id ? all[i + 1] : all[i];
      tasks.push(all[i]);
      texts.push(all[i].gold_sql, next.gold_sql);
    }
    const samples: Sample[] = texts.map((text, k) => ({
      prompt: k >> 1,
      index: k & 1,
      tokens: [1, 2, 3],
      text,
      logprobs: [0, 0, 0],
      finishReason: "eos",
    }));
    const SQL = await loadSqlJs();
    const dbs = new Map<string, GuardedDatabase>();
    const plain = {
      query(db: string, sql: string) {
        let g = dbs.get(db);
        if (!g) dbs.set(db, g = new GuardedDatabase(SQL, Deno.readFileSync(`${root}/database/${db}/${db}.sqlite`)));
        return Promise.resolve(g.query(sql, DEFAULT_LIMITS));
      },
    };
    const pool = new SqlPool({ loadDatabase: fileDatabaseLoader(`${root}/database`), workers: 2, maxDatabases: 200 });
    try {
      for (
        const [name, spec] of Object.entries({ databricks: REWARD_PRESETS.databricks, arctic: REWARD_PRESETS.arctic })
      ) {
        const fast = new Scorer(pool, spec, "set", "auto");
        const got = await fast.scoreSamples(tasks, samples);
        const ref = new Scorer(plain, spec, "set", "auto");
        const want: Scored[] = [];
        for (const s of samples) want.push(await ref.scoreCompletion(tasks[s.prompt], s.text, 3));
        const view = (s: Scored) => ({
          correct: s.correct,
          error: s.outcome?.error?.kind ?? null,
          reward: s.reward,
          rows: s.predicted?.rows ?? null,
        });
        let goldsCorrect = 0;
        const slow: string[] = [];
        for (const [k, s] of samples.entries()) {
          const [a, b] = [view(got[k]), view(want[k])];
          if (s.index === 0) {
            assertEquals(a, b, `${name}: gold of question ${tasks[s.prompt].id}`);
            if (a.correct) goldsCorrect++;
          } else if (
            JSON.stringify(a, (_, v) => (typeof v === "bigint" ? `${v}n` : v)) !==
              JSON.stringify(b, (_, v) => (typeof v === "bigint" ? `${v}n` : v))
          ) {
            assert(
              a.error === "timeout" && !b.correct,
              `${name}: hard prediction for ${tasks[s.prompt].id} differs: ${
                JSON.stringify({ a: a.error, b: b.error, ra: a.reward.total, rb: b.reward.total })
              }`,
            );
            slow.push(`${tasks[s.prompt].db_id} ${want[k].outcome?.ms.toFixed(0)} ms in process`);
          }
        }
        const st = fast.stats();
        console.log(
          `${name}: ${samples.length} completions, golds correct ${goldsCorrect}/${
            tasks.length - fast.goldProblems.size
          } runnable; queries ${st.predictionRuns}, repeats answered ${st.predictionHits}; hard predictions that timed out under their limit: ${
            slow.length ? slow.join("; ") : "none"
          }`,
        );
        assert(
          st.predictionHits > 0,
          "the hard prediction of a question is the next question's gold: some texts repeat",
        );
        assertEquals(goldsCorrect, tasks.length - fast.goldProblems.size);
      }
    } finally {
      pool.close();
      for (const g of dbs.values()) g.close();
    }
  },
});
