// Spider-train golds through the Chain-of-CTEs rewrite and its execution check (every 10th
// question, a quick sample of the full `rlvr cocte` run that docs/prm.md reports).
import { assert } from "./assert.ts";
import { sharedDatasets } from "./shared.ts";
import { splitChain, stepQueries } from "../src/core/cocte.ts";
import { GoldConverter } from "../src/runtime/cocte-convert.ts";
import { fileDatabaseLoader } from "../src/runtime/sql-files.deno.ts";
import { SqlPool } from "../src/runtime/sql-pool.ts";

Deno.test({
  name:
    "cocte on Spider train (every 10th question): golds convert with the gold's rows, chains split back, decompositions are real",
  ignore: sharedDatasets === null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const base = `${sharedDatasets}/spider-train`;
    const rows = (await Deno.readTextFile(`${base}/questions.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l) as { db_id: string; query: string }
    );
    const pool = new SqlPool({ loadDatabase: fileDatabaseLoader(`${base}/database`), workers: 2, timeoutMs: 10_000 });
    const conv = new GoldConverter(pool);
    const sample = rows.filter((_, i) => i % 10 === 0);
    let ok = 0;
    let goldFailed = 0;
    const failures: string[] = [];
    const lengths = new Map<number, number>();
    let next = 0;
    try {
      await Promise.all(Array.from({ length: 4 }, async () => {
        while (next < sample.length) {
          const q = sample[next++];
          const c = await conv.convert(q.db_id, q.query);
          if (!c.ok) {
            if (c.reason.startsWith("gold failed")) goldFailed++;
            else failures.push(`${q.query} -> ${c.reason}`);
            continue;
          }
          ok++;
          lengths.set(c.steps.length, (lengths.get(c.steps.length) ?? 0) + 1);
          const back = splitChain(c.cocte);
          assert(back.problems.length === 0 && stepQueries(back).length === c.steps.length + 1, `split ${c.cocte}`);
          // More than one table, a subquery or a set operation never yields a bare wrapper of the whole query.
          const complex = /\bJOIN\b/i.test(q.query) || (q.query.match(/\bSELECT\b/gi) ?? []).length > 1;
          if (complex) {
            assert(
              c.steps.length > 1 || c.steps[0].sql.replace(/\s+/g, " ") !== q.query.trim().replace(/\s+/g, " "),
              `wrapper: ${q.query}`,
            );
          }
          if ((q.query.match(/\bSELECT\b/gi) ?? []).length > 1) assert(c.steps.length > 1, `one step for ${q.query}`);
        }
      }));
    } finally {
      pool.close();
    }
    const runnable = sample.length - goldFailed;
    console.log(
      `cocte on Spider train sample: ${ok}/${runnable} converted; chain lengths ${
        JSON.stringify(Object.fromEntries([...lengths].sort((a, b) => a[0] - b[0])))
      }`,
    );
    for (const f of failures) console.log(`  not converted: ${f}`);
    assert(ok / runnable >= 0.995, `only ${ok}/${runnable} converted`);
    assert((lengths.get(1) ?? 0) < ok * 0.6, "too many one-step chains");
  },
});
