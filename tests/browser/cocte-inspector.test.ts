// The reward inspector on chains of CTEs: sample records whose steps were really executed here
// (runtime/cocte-exec.ts on a sql.js database made at test time) — a correct chain, one with a
// broken step, one cut off — opened in the run viewer. Each step shows its partial result, whether
// it matches the gold's, and the PRM score where the record carries one; a completion whose start the
// prompt wrote (chain-of-ctes@2's answer prefix) shows that start marked as not sampled.
import { Buffer } from "node:buffer";
import { assert, assertEquals } from "../assert.ts";
import { encodeSample, type SampleRecord } from "../../src/runtime/records.ts";
import { executeChain, goldFor, sampleSteps } from "../../src/runtime/cocte-exec.ts";
import { SqlPool } from "../../src/runtime/sql-pool.ts";
import { loadSqlJs } from "../../src/runtime/sql-wasm.ts";
import { displayResult } from "../../src/runtime/records.ts";
import { join } from "node:path";
import { ARTIFACTS, launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";

const GOLD =
  "SELECT T1.name, count(*) FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid WHERE T2.year = 2014 GROUP BY T1.id HAVING count(*) > 1";
const ANSWERS = [
  "```sql\nWITH\n  -- concerts of 2014\n  c2014 AS (\n    SELECT * FROM concert WHERE year = 2014\n  ),\n  -- concerts per singer\n  per_singer AS (\n    SELECT T1.id, T1.name, count(*) AS n FROM singer AS T1 JOIN c2014 AS T2 ON T1.id = T2.sid GROUP BY T1.id\n  )\nSELECT name, n FROM per_singer WHERE n > 1\n```",
  "```sql\nWITH\n  -- concerts of 2014\n  c2014 AS (\n    SELECT * FROM concert WHERE yeer = 2014\n  ),\n  -- all singers\n  s AS (\n    SELECT name FROM singer\n  )\nSELECT name FROM s\n```",
  "```sql\nWITH\n  -- concerts of 2014\n  c2014 AS (\n    SELECT * FROM concert WHERE year = 2014\n  ),\n  per_singer AS (\n    SELECT T1.id, count(*",
];

async function records(): Promise<SampleRecord[]> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  db.exec(
    `CREATE TABLE singer(id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE concert(cid INTEGER PRIMARY KEY, sid INTEGER, year INTEGER);
    INSERT INTO singer VALUES (1,'Ann'),(2,'Bob'),(3,'Cid'); INSERT INTO concert VALUES (10,1,2014),(11,1,2014),(12,2,2014),(13,3,2015),(14,2,2014),(15,3,2014);`,
  );
  const bytes = (db as unknown as { export(): Uint8Array }).export();
  db.close();
  const pool = new SqlPool({ loadDatabase: () => Promise.resolve(bytes.slice()), workers: 1 });
  try {
    const gold = await goldFor(pool, "music", GOLD);
    assert(gold.ok && gold.index && gold.result, "gold ran");
    const out: SampleRecord[] = [];
    for (const [i, completion] of ANSWERS.entries()) {
      const exec = await executeChain(pool, "music", completion, { index: gold.index, result: gold.result });
      // The first answer carries PRM scores, as the PRM side adds them; the others do not.
      const steps = sampleSteps(exec).map((s, k) => (i === 0 ? { ...s, prmScore: [0.91, 0.64, 0.88][k] ?? 0.5 } : s));
      const final = exec.steps.find((s) => s.name === null);
      out.push({
        v: 1,
        phase: "grpo",
        step: 3,
        taskId: "q7",
        dbId: "music",
        question: "Which singers gave more than one concert in 2014, and how many?",
        sampleIndex: i,
        prompt: "(prompt)",
        completion,
        reasoning: null,
        extraction: exec.chain.final === null
          ? { sql: null, reason: "no sql block" }
          : { sql: completion.replace(/^```sql\n|\n```$/g, ""), source: "sql-block" },
        predicted: final?.result ? displayResult(final.result) : null,
        gold: displayResult(gold.result),
        error: final ? final.error : null,
        correct: exec.correct,
        execMs: 1,
        reward: {
          total: exec.correct ? 1 : final?.error ? -1 : 0,
          components: { execution: exec.correct ? 1 : 0 },
          weighted: { execution: exec.correct ? 1 : 0 },
        },
        advantage: null,
        completionTokens: completion.length,
        logprob: -3,
        finishReason: i === 2 ? "length" : "eos",
        steps,
        // The first as sampled under chain-of-ctes@2: its first characters were written by the prompt.
        ...(i === 0 ? { answerPrefix: "```sql\nWITH" } : {}),
      });
    }
    return out;
  } finally {
    pool.close();
  }
}

Deno.test({
  name: "reward inspector: chain-of-CTE steps with partial results, gold matches and PRM scores",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const recs = await records();
    assertEquals(recs.map((r) => r.steps?.map((s) => [s.name, s.error?.kind ?? null, s.matchesGold])), [
      [["c2014", null, false], ["per_singer", null, false], [null, null, true]],
      [["c2014", "syntax", false], ["s", null, false], [null, null, false]],
      [["c2014", null, false]],
    ]);
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1300 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.getByTestId("run-files").setInputFiles([
        { name: "samples.jsonl", mimeType: "application/jsonl", buffer: Buffer.from(recs.map(encodeSample).join("")) },
      ]);
      const cards = page.locator("rl-reward-inspector [data-testid=sample]");
      await cards.first().waitFor();
      assertEquals(await cards.count(), 3);
      const steps = (i: number) => cards.nth(i).locator("[data-testid=cocte-step]");
      assertEquals(await steps(0).count(), 3);
      assertEquals(await steps(0).locator("[data-testid=step-status]").allTextContents(), [
        "differs",
        "differs",
        "matches gold",
      ]);
      assertEquals((await steps(0).locator("[data-testid=prm-score]").allTextContents()).map((s) => s.trim()), [
        "PRM 0.91",
        "PRM 0.64",
        "PRM 0.88",
      ]);
      // Partial results: the 2014 concerts (5 rows), then one row per singer.
      assert((await steps(0).nth(0).textContent())?.includes("5 rows"), "first step's rows");
      assert(
        (await cards.nth(0).locator("[data-testid=cocte-steps] summary").first().textContent())?.includes(
          "mean PRM 0.81",
        ),
        "summary shows the mean PRM",
      );
      assertEquals(await steps(1).locator("[data-testid=step-status]").allTextContents(), [
        "syntax",
        "differs",
        "differs",
      ]);
      assert((await steps(1).nth(0).textContent())?.includes("no such column: yeer"), "the broken step's error");
      assertEquals(await steps(1).locator("[data-testid=prm-score]").count(), 0);
      assertEquals(await steps(2).count(), 1);
      // The answer's start the prompt wrote is marked as such in the completion; the other records have none.
      const given = cards.nth(0).locator("[data-testid=answer-prefix]");
      assertEquals([await given.textContent(), (await given.getAttribute("title"))?.includes("not sampled")], [
        "```sql\nWITH",
        true,
      ]);
      assertEquals(await cards.nth(1).locator("[data-testid=answer-prefix]").count(), 0);
      await cards.nth(0).locator("details", { hasText: "completion" }).first().locator("summary").click();
      await screenshot(page, "cocte-inspector");
      // The inspector alone, large enough to read.
      await page.locator("rl-reward-inspector").screenshot({ path: join(ARTIFACTS, "cocte-inspector-cards.png") });
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
