import { assert, assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { type Cell, parseNotebook } from "../core/notebook.ts";
import { command } from "../cli/commands/demo-evidence.ts";
import {
  demoEvidence,
  evidenceMarkdown,
  promptMode,
  recallParts,
  runFigures,
  type RunOutputs,
  spread,
  usesDefinitions,
} from "./demo-evidence.ts";
import { evidenceSvg, MIN_BAR_PX } from "./demo-evidence-svg.ts";
import type { CellSummary, RunSummary } from "./recipe/runner.ts";

const parsed = parseNotebook(demo);
if (!parsed.ok) throw new Error("demo notebook invalid");
const knowledge: Cell[] = parsed.doc.cells;
const bird: Cell[] = knowledge.map((
  c,
) => (c.type === "prompt" ? { ...c, params: { ...c.params, evidence: true } } : c));

/** A summary of the demo notebook where split s after stage k scored acc(s, k). */
function summary(seed: number, acc: (split: string, stage: string) => number): RunSummary {
  const cells: CellSummary[] = knowledge.map((c): CellSummary => {
    if (c.type === "evaluate") {
      const label = c.id.startsWith("base-") ? "baseline" : c.id.startsWith("warm-") ? "after warmup" : "after grpo";
      const stage = label === "baseline" ? "baseline" : label === "after warmup" ? "warmup" : "grpo";
      const greedy = acc(c.params.split, stage);
      return {
        id: c.id,
        type: c.type,
        ms: 1,
        accuracy: greedy,
        report: {
          kind: "evaluate",
          cellId: c.id,
          split: c.params.split,
          label,
          overall: { questions: c.params.n, greedy },
          byDifficulty: {},
          samplesPerQuestion: 0,
          predictionsPath: "p",
        },
      };
    }
    if (c.type === "selfconsistency") {
      const v = acc(c.params.split, "sc");
      return {
        id: c.id,
        type: c.type,
        ms: 1,
        report: {
          kind: "selfconsistency",
          cellId: c.id,
          split: c.params.split,
          samples: 8,
          weighting: "count",
          questions: c.params.n,
          voteAccuracy: v,
          bestOfNAccuracy: v,
          oracleAccuracy: v,
          firstSampleAccuracy: v,
          predictionsPath: "p",
        },
      };
    }
    return { id: c.id, type: c.type, ms: 1 };
  });
  return { title: "demo", cells, accuracy: {}, files: [], options: { seed, maxSteps: null } };
}

const stageGain: Record<string, number> = { baseline: 0, warmup: 0.1, grpo: 0.25, sc: 0.3 };
const runs: RunOutputs[] = [
  {
    folder: "k2",
    summary: summary(2, (s, k) => (s === "test-concepts" ? 0.04 + stageGain[k] : 0.02)),
    cells: knowledge,
  },
  {
    folder: "k1",
    summary: summary(1, (s, k) => (s === "test-concepts" ? 0.02 + stageGain[k] : 0.01)),
    cells: knowledge,
  },
  { folder: "b1", summary: summary(1, (s, k) => (s === "test-concepts" ? 0.3 + stageGain[k] / 2 : 0.2)), cells: bird },
];

Deno.test("demo evidence: per split, mode and stage the seeds' accuracies (seed order), their spread and the gain over baseline", () => {
  assertEquals([promptMode(knowledge), promptMode(bird)], ["knowledge", "bird"]);
  const f = runFigures(runs[0]);
  assertEquals([f.mode, f.seed], ["knowledge", 2]);
  assertEquals(f.accuracy["test-concepts"], { baseline: 0.04, warmup: 0.04 + 0.1, grpo: 0.04 + 0.25, sc: 0.04 + 0.3 });
  const e = demoEvidence(runs, "2026-12-02T00:00:00.000Z");
  assertEquals(Object.keys(e.splits), ["test-concepts", "test-templates", "heldout-db", "test-written"]);
  const tc = e.splits["test-concepts"];
  assertEquals(tc.knowledge?.seeds, [1, 2]);
  assertEquals(tc.knowledge?.baseline, [0.02, 0.04]);
  assertEquals(tc.bird?.seeds, [1]);
  assertEquals(tc.questions, 96);
  const g = e.summary["test-concepts"].knowledge?.gain_grpo;
  assert(g && Math.abs(g.mean - 0.25) < 1e-12 && g.sd < 1e-12 && g.n === 2, JSON.stringify(g));
  assertEquals(e.summary["test-concepts"].bird?.baseline?.sd, 0, "one seed: no spread");
  assertEquals(e.runs.map((r) => r.folder), ["b1", "k1", "k2"]);
  const md = evidenceMarkdown(e);
  assert(md.includes("| test-concepts (96) | 3.0 ± 1.4 (2.0, 4.0) |") && md.includes("+25.0"), md);
  const svg = evidenceSvg(e, "test");
  assert(
    svg.startsWith("<svg") && svg.includes("knowledge mode") && svg.includes("BIRD mode") &&
      (svg.match(/<rect /g) ?? []).length > 20,
    "an SVG with both panels",
  );
});

Deno.test("evidence SVG: a measured 0% draws a thin bar at the baseline; a stage not run (self-consistency off test-concepts) draws nothing", () => {
  // One seed per mode: test-concepts 0% at baseline then 20%, the other splits 0% at every stage.
  const zero = (s: string, k: string) => (s === "test-concepts" && k !== "baseline" ? 0.2 : 0);
  const e = demoEvidence([
    { folder: "k1", summary: summary(1, zero), cells: knowledge },
    { folder: "b1", summary: summary(1, zero), cells: bird },
  ], "2026-12-04T00:00:00.000Z");
  const svg = evidenceSvg(e, "zeros");
  const bars = [
    ...svg.matchAll(
      /<rect x="([\d.]+)" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" fill="#[0-9a-f]+"><title>([^<]+)<\/title><\/rect>/g,
    ),
  ]
    .map(([, x, y, h, title]) => ({ x: +x, y: +y, h: +h, title }));
  // Per mode: 4 splits x 3 stages + self-consistency on test-concepts only.
  assertEquals(bars.length, 2 * 13, svg);
  assertEquals(
    bars.filter((b) => b.title.startsWith("self-consistency")).length,
    2,
    "no bar for a stage that was not run",
  );
  const zeros = bars.filter((b) => b.title.includes(": 0.0%"));
  assertEquals(zeros.length, 2 * 10);
  const baseline = 300 - 40; // H - bottom: the 0% line
  for (const b of zeros) {
    assert(b.h === MIN_BAR_PX && b.y + b.h === baseline, `a 0% bar stands on the baseline: ${JSON.stringify(b)}`);
  }
  for (const b of bars.filter((x) => x.title.includes(": 20.0%"))) {
    assert(
      Math.abs(b.h - 0.2 * 204) < 1e-9 && Math.abs(b.y + b.h - baseline) < 1e-9,
      `a 20% bar keeps its height: ${JSON.stringify(b)}`,
    );
  }
});

Deno.test("spread: mean, sample sd, min, max", () => {
  assertEquals(spread([1, 2, 3]), { n: 3, mean: 2, sd: 1, min: 1, max: 3 });
  assertEquals(spread([0.5]).sd, 0);
});

Deno.test("rlvr demo-evidence: reads run folders, writes the JSON, markdown and SVG; an unfinished run is named", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-evidence-" });
  for (const r of runs) {
    await Deno.mkdir(`${dir}/${r.folder}`);
    await Deno.writeTextFile(`${dir}/${r.folder}/summary.json`, JSON.stringify(r.summary));
    await Deno.writeTextFile(
      `${dir}/${r.folder}/notebook.json`,
      JSON.stringify({ version: 1, title: "demo", cells: r.cells }),
    );
  }
  const out = await command.run([
    ...runs.map((r) => `${dir}/${r.folder}`),
    "--out",
    `${dir}/e.json`,
    "--markdown",
    `${dir}/e.md`,
    "--svg",
    `${dir}/e.svg`,
  ]);
  assertEquals(out.runs, 3);
  const e = JSON.parse(await Deno.readTextFile(`${dir}/e.json`));
  assertEquals(e.splits["test-concepts"].knowledge.grpo.length, 2);
  assert((await Deno.readTextFile(`${dir}/e.svg`)).includes("</svg>"));
  await Deno.mkdir(`${dir}/unfinished`);
  let msg = "";
  try {
    await command.run([`${dir}/unfinished`, "--out", `${dir}/x.json`]);
  } catch (x) {
    msg = String(x);
  }
  assert(msg.includes("unfinished: not a finished run"), msg);
});

const LOYAL = "customer_id IN (SELECT customer_id FROM orders GROUP BY customer_id HAVING COUNT(*) >= 4)";
const REVENUE =
  "SUM(oi.quantity * oi.unit_price) FROM order_items AS oi JOIN orders AS o ON o.order_id = oi.order_id WHERE o.status = 'delivered'";

Deno.test("concept recall: issue 49 — an answer holds a definition up to spacing, case and table aliases, even where the rest of it is wrong", () => {
  const parts = new Map([["shop.loyal", recallParts(LOYAL)], ["shop.revenue", recallParts(REVENUE)]]);
  assertEquals(recallParts(REVENUE), ["sum(quantity*unit_price)", "status='delivered'"]);
  // The concept written twice and the filter dropped (wrong rows): it still used the definition.
  assert(usesDefinitions(`SELECT name FROM customers WHERE ${LOYAL} AND ${LOYAL}`, ["shop.loyal"], parts));
  assert(
    usesDefinitions(
      "select name from customers where customer_id in (select customer_id from orders group by customer_id having count(*)>=4) and country='PL'",
      ["shop.loyal"],
      parts,
    ),
  );
  assert(
    !usesDefinitions(
      "SELECT name FROM customers WHERE customer_id IN (SELECT customer_id FROM orders GROUP BY customer_id HAVING COUNT(*) >= 5)",
      ["shop.loyal"],
      parts,
    ),
    "another threshold is another definition",
  );
  // A measure: its aggregate and its condition, whatever the aliases and joins between them.
  assert(
    usesDefinitions(
      "SELECT SUM(T1.quantity * T1.unit_price) FROM order_items AS T1 JOIN orders AS T2 ON T1.order_id = T2.order_id JOIN customers AS T3 ON T3.customer_id = T2.customer_id WHERE T2.status = 'delivered' AND T3.country = 'DE'",
      ["shop.revenue"],
      parts,
    ),
  );
  assert(
    !usesDefinitions("SELECT SUM(quantity * unit_price) FROM order_items", ["shop.revenue"], parts),
    "without status = 'delivered'",
  );
  assert(
    !usesDefinitions(`SELECT SUM(quantity * unit_price) FROM order_items WHERE status = 'delivered'`, [
      "shop.revenue",
      "shop.loyal",
    ], parts),
    "both concepts needed",
  );
});

Deno.test("concept recall: per split, mode and stage from the runs' predictions, beside the accuracies (JSON, markdown, SVG)", () => {
  const tasks = [{ concepts: ["shop.loyal"] }, { concepts: ["shop.loyal"] }, {}, { concepts: ["shop.loyal"] }];
  const line = (sql: string) => `${sql}\t----- bird -----\tshop`;
  const predictions = {
    "base-concepts": {
      "0": line("SELECT 1"),
      "1": line("SELECT 1"),
      "2": line("SELECT 1"),
      "3": line(`SELECT 1 WHERE ${LOYAL}`),
    },
    "after-concepts": {
      "0": line(`SELECT name FROM customers WHERE ${LOYAL}`),
      "1": line(`SELECT 1 WHERE ${LOYAL}`),
      "2": line("SELECT 1"),
      "3": line("SELECT 2"),
    },
  };
  const demoIn = { splits: { "test-concepts": tasks }, definitions: [{ id: "shop.loyal", fragment: LOYAL }] };
  const f = runFigures({ ...runs[1], predictions }, demoIn);
  // Questions without concepts do not count: 1 of 3, then 2 of 3.
  assertEquals(f.recall["test-concepts"], { baseline: 1 / 3, grpo: 2 / 3 });
  const e = demoEvidence([{ ...runs[1], predictions }], "2026-12-07T00:00:00.000Z", demoIn);
  assertEquals(e.recall?.["test-concepts"]?.knowledge, { baseline: [1 / 3], grpo: [2 / 3] });
  assertEquals(demoEvidence(runs, "x").recall, undefined, "no predictions: no recall");
  assert(evidenceMarkdown(e).includes("| test-concepts | 33.3 (33.3) | — | 66.7 (66.7) | — |"), evidenceMarkdown(e));
  assert(evidenceSvg(e, "t").includes("concept recall 66.7%"));
});
