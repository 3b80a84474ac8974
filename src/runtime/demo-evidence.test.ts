import { assert, assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { type Cell, parseNotebook } from "../core/notebook.ts";
import { command } from "../cli/commands/demo-evidence.ts";
import { demoEvidence, evidenceMarkdown, promptMode, type RunOutputs, runFigures, spread } from "./demo-evidence.ts";
import { evidenceSvg, MIN_BAR_PX } from "./demo-evidence-svg.ts";
import type { CellSummary, RunSummary } from "./recipe/runner.ts";

const parsed = parseNotebook(demo);
if (!parsed.ok) throw new Error("demo notebook invalid");
const knowledge: Cell[] = parsed.doc.cells;
const bird: Cell[] = knowledge.map((c) => (c.type === "prompt" ? { ...c, params: { ...c.params, evidence: true } } : c));

/** A summary of the demo notebook where split s after stage k scored acc(s, k). */
function summary(seed: number, acc: (split: string, stage: string) => number): RunSummary {
  const cells: CellSummary[] = knowledge.map((c): CellSummary => {
    if (c.type === "evaluate") {
      const label = c.id.startsWith("base-") ? "baseline" : c.id.startsWith("warm-") ? "after warmup" : "after grpo";
      const stage = label === "baseline" ? "baseline" : label === "after warmup" ? "warmup" : "grpo";
      const greedy = acc(c.params.split, stage);
      return { id: c.id, type: c.type, ms: 1, accuracy: greedy, report: { kind: "evaluate", cellId: c.id, split: c.params.split, label, overall: { questions: c.params.n, greedy }, byDifficulty: {}, samplesPerQuestion: 0, predictionsPath: "p" } };
    }
    if (c.type === "selfconsistency") {
      const v = acc(c.params.split, "sc");
      return { id: c.id, type: c.type, ms: 1, report: { kind: "selfconsistency", cellId: c.id, split: c.params.split, samples: 8, weighting: "count", questions: c.params.n, voteAccuracy: v, bestOfNAccuracy: v, oracleAccuracy: v, firstSampleAccuracy: v, predictionsPath: "p" } };
    }
    return { id: c.id, type: c.type, ms: 1 };
  });
  return { title: "demo", cells, accuracy: {}, files: [], options: { seed, maxSteps: null } };
}

const stageGain: Record<string, number> = { baseline: 0, warmup: 0.1, grpo: 0.25, sc: 0.3 };
const runs: RunOutputs[] = [
  { folder: "k2", summary: summary(2, (s, k) => (s === "test-concepts" ? 0.04 + stageGain[k] : 0.02)), cells: knowledge },
  { folder: "k1", summary: summary(1, (s, k) => (s === "test-concepts" ? 0.02 + stageGain[k] : 0.01)), cells: knowledge },
  { folder: "b1", summary: summary(1, (s, k) => (s === "test-concepts" ? 0.3 + stageGain[k] / 2 : 0.2)), cells: bird },
];

Deno.test("demo evidence: per split, mode and stage the seeds' accuracies (seed order), their spread and the gain over baseline", () => {
  assertEquals([promptMode(knowledge), promptMode(bird)], ["knowledge", "bird"]);
  const f = runFigures(runs[0]);
  assertEquals([f.mode, f.seed], ["knowledge", 2]);
  assertEquals(f.accuracy["test-concepts"], { baseline: 0.04, warmup: 0.04 + 0.1, grpo: 0.04 + 0.25, sc: 0.04 + 0.3 });
  const e = demoEvidence(runs, "2026-12-02T00:00:00.000Z");
  assertEquals(Object.keys(e.splits), ["test-concepts", "test-templates", "heldout-db"]);
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
  assert(svg.startsWith("<svg") && svg.includes("knowledge mode") && svg.includes("BIRD mode") && (svg.match(/<rect /g) ?? []).length > 20, "an SVG with both panels");
});

Deno.test("evidence SVG: a measured 0% draws a thin bar at the baseline; a stage not run (self-consistency off test-concepts) draws nothing", () => {
  // One seed per mode: test-concepts 0% at baseline then 20%, the other splits 0% at every stage.
  const zero = (s: string, k: string) => (s === "test-concepts" && k !== "baseline" ? 0.2 : 0);
  const e = demoEvidence([
    { folder: "k1", summary: summary(1, zero), cells: knowledge },
    { folder: "b1", summary: summary(1, zero), cells: bird },
  ], "2026-12-04T00:00:00.000Z");
  const svg = evidenceSvg(e, "zeros");
  const bars = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="[\d.]+" height="([\d.]+)" fill="#[0-9a-f]+"><title>([^<]+)<\/title><\/rect>/g)]
    .map(([, x, y, h, title]) => ({ x: +x, y: +y, h: +h, title }));
  // Per mode: 3 splits x 3 stages + self-consistency on test-concepts only.
  assertEquals(bars.length, 2 * 10, svg);
  assertEquals(bars.filter((b) => b.title.startsWith("self-consistency")).length, 2, "no bar for a stage that was not run");
  const zeros = bars.filter((b) => b.title.includes(": 0.0%"));
  assertEquals(zeros.length, 2 * 7);
  const baseline = 300 - 40; // H - bottom: the 0% line
  for (const b of zeros) assert(b.h === MIN_BAR_PX && b.y + b.h === baseline, `a 0% bar stands on the baseline: ${JSON.stringify(b)}`);
  for (const b of bars.filter((x) => x.title.includes(": 20.0%"))) assert(Math.abs(b.h - 0.2 * 204) < 1e-9 && Math.abs(b.y + b.h - baseline) < 1e-9, `a 20% bar keeps its height: ${JSON.stringify(b)}`);
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
    await Deno.writeTextFile(`${dir}/${r.folder}/notebook.json`, JSON.stringify({ version: 1, title: "demo", cells: r.cells }));
  }
  const out = await command.run([...runs.map((r) => `${dir}/${r.folder}`), "--out", `${dir}/e.json`, "--markdown", `${dir}/e.md`, "--svg", `${dir}/e.svg`]);
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
