// The built-in demo as a user meets it, in Chromium on SwiftShader: "Run all" on the default
// notebook (sizes cut for a CPU; a tiny random model served where the demo model lives) shows the
// run's place in a status bar that stays in view, outlines and scrolls to the running cell, gives
// every long phase its own progress line (model files, ONNX graph, session, shader compilation,
// decoding, scoring, training; read from each cell's progress log, which keeps them all, where a
// poll of the live line misses the short ones), and ends with the before/after picture: accuracy
// per split per stage. A second test renders that picture on demo questions with a learned one
// (baseline answer vs after GRPO with their rows): a tiny random model learns nothing in two steps.
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { displayResult, type SampleRecord } from "../../src/runtime/records.ts";
import { loadSqlJsDeno } from "../../src/runtime/sql-wasm.ts";
import { ENTITY_CONCEPTS } from "../../src/runtime/demo/concept-defs.ts";
import type { SqlValue } from "../../src/core/types.ts";
import {
  ARTIFACTS,
  launchChromium,
  ROOT,
  screenshot,
  serveOverlay,
  serveStatic,
  waitForCell,
  watchErrors,
} from "./harness.ts";
import { demoCorpus } from "./fixtures.ts";

/** The default notebook with CPU sizes: 2 questions per split, 4-token answers, 1 warm-up round, 2 GRPO steps. */
function cpuDemo(): unknown {
  const cells = demo.cells.map((c) => {
    const p: Record<string, unknown> = { ...c.params };
    switch (c.type) {
      case "dataset":
        Object.assign(p, { limit: 2 });
        break;
      case "evaluate":
        Object.assign(p, { n: 2, maxNewTokens: 4 });
        break;
      case "warmup":
        // One round of one epoch: the demo's three rounds of six repeat phases the test already saw once.
        Object.assign(p, { rounds: 1, epochs: 1, samplesPerQuestion: 2, maxNewTokens: 4 });
        break;
      case "grpo":
        Object.assign(p, { G: 2, batchQuestions: 1, steps: 2, maxNewTokens: 4, evalEvery: 1, evalN: 2 });
        break;
      case "selfconsistency":
        Object.assign(p, { N: 2, n: 2, maxNewTokens: 4 });
        break;
      case "ask":
        Object.assign(p, { maxNewTokens: 4 });
        break;
    }
    return { ...c, params: p };
  });
  return { ...demo, cells };
}

interface Seen {
  where: string[];
  /** Cells that ran for a while, and whether each was in view then. */
  inView: Record<string, boolean>;
}

/** The before/after chart's bars: each split x stage's value (null where not measured) and drawn height in px. */
async function chartBars(el: import("playwright-core").Locator) {
  return await el.evaluate((node) => {
    type Bar = { getProps(p: string[], final: boolean): { y: number; base: number } };
    const chart = (node as unknown as {
      chart: {
        data: { labels: string[]; datasets: { label: string; data: number[] }[] };
        getDatasetMeta(i: number): { data: Bar[] };
      } | null;
    }).chart;
    if (!chart) return null;
    return chart.data.datasets.flatMap((d, i) =>
      chart.data.labels.map((split, j) => {
        const { y, base } = chart.getDatasetMeta(i).data[j].getProps(["y", "base"], true);
        return {
          split,
          stage: d.label,
          value: Number.isFinite(d.data[j]) ? d.data[j] : null,
          height: Number.isFinite(y - base) ? Math.abs(y - base) : 0,
        };
      })
    );
  });
}

/** Every measured bar is drawn, a 0% one too (a thin bar), and a stage not run draws nothing. */
function assertBarsVisible(bars: Awaited<ReturnType<typeof chartBars>>) {
  assert(bars && bars.length, "the chart has bars");
  for (const b of bars) {
    if (b.value === null) assertEquals(b.height, 0, `no bar where nothing was measured: ${JSON.stringify(b)}`);
    else assert(b.height >= 2, `a measured bar is visible, 0% too: ${JSON.stringify(b)}`);
  }
}

Deno.test({
  name:
    "demo flow: Run all — status bar with the stage and progress, the running cell in view, a progress line per phase, the before/after picture at the end",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-demo-flow-" });
    await writeVaryingLengthModel(`${dir}/model`, { seed: 5, corpus: await demoCorpus(2) });
    const server = serveOverlay(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = watchErrors(page);
      await page.addInitScript(
        (text) => localStorage.setItem("rlvr-notebook-autosave", text),
        JSON.stringify(cpuDemo()),
      );
      await page.goto(server.url);
      await page.getByTestId("run-all").click();
      const bar = page.getByTestId("run-status-bar");
      // On SwiftShader Run all plans the demo's full sizes as long and offers its quick version first (issue #48): run it as it is.
      await page.locator("[data-testid=run-full], [data-testid=run-status-bar]").first().waitFor({ timeout: 120_000 });
      if (await page.getByTestId("run-full").count()) await page.getByTestId("run-full").click();
      await bar.waitFor({ timeout: 60_000 });
      const seen: Seen = { where: [], inView: {} };
      let last = "", since = Date.now(), midRun = false;
      const t0 = Date.now();
      // Poll until the run ends: the status bar's text, and whether the running cell is on screen.
      for (;;) {
        const s = await page.evaluate(() => {
          const nb = document.querySelector("rl-notebook") as unknown as {
            runs: { active: { current: string | null } | null };
            shadowRoot: ShadowRoot;
          };
          const a = nb.runs.active;
          if (!a) return null;
          const li = a.current ? nb.shadowRoot.querySelector(`li[data-cell-id="${a.current}"]`) : null;
          const r = li?.getBoundingClientRect();
          const status = nb.shadowRoot.querySelector("rl-run-status")?.shadowRoot;
          return {
            current: a.current,
            running: li?.classList.contains("running") ?? false,
            visible: r ? r.top < innerHeight && r.bottom > 0 : false,
            where: status?.querySelector("[data-testid=run-where]")?.textContent ?? "",
          };
        });
        if (!s) break;
        if (s.where && seen.where.at(-1) !== s.where) seen.where.push(s.where);
        if (s.current !== last) {
          last = s.current ?? "";
          since = Date.now();
        } else if (s.current && Date.now() - since > 1500) {
          // Smooth scrolling has settled: the running cell is outlined and on screen.
          seen.inView[s.current] = (seen.inView[s.current] ?? true) && s.visible && s.running;
        }
        if (!midRun && s.current === "warmup" && Date.now() - since > 1500) {
          await screenshot(page, "demo-flow-running");
          await page.screenshot({ path: `${ARTIFACTS}/demo-flow-running-viewport.png` });
          midRun = true;
        }
        if (Date.now() - t0 > 1_500_000) throw new Error(`run still going after 25 min: ${seen.where.at(-1)}`);
        await page.waitForTimeout(300);
      }
      await waitForCell(page, "export", { ms: 10_000 });
      const entries = page.getByTestId("progress-entry");
      console.log(
        `run took ${((Date.now() - t0) / 1000).toFixed(0)} s; ${await entries
          .count()} phases in the cells' progress logs, cells in view: ${JSON.stringify(seen.inView)}`,
      );
      // Every runnable cell is counted in the bar ("i of 21", the ask cell last), and the run went through them in order.
      assert(
        seen.where.some((w) => / of 21 · Model “model”/.test(w)) && seen.where.some((w) => /of 21 · GRPO/.test(w)),
        seen.where.join(" | "),
      );
      const log = await page.evaluate(() =>
        (document.querySelector("rl-notebook") as unknown as { runs: { log: string[] } }).runs.log.join("\n")
      );
      // The model cell's phases, each announced (the short ones may be missed by a poll; the log has them all).
      for (const phase of ["download took", "graph took", "session took", "shaders took"]) {
        assert(log.includes(phase), `log names ${phase}:\n${log.slice(0, 3000)}`);
      }
      // Every long phase had its own progress line: each cell's progress log (kept after the run) has them all.
      const had = async (id: string, re: RegExp) => {
        const lines = await page.locator(`li[data-cell-id="${id}"]`).getByTestId("progress-entry").allTextContents();
        assert(
          lines.some((l) => re.test(l)),
          `cell ${id}'s progress log has a line matching ${re}: ${lines.join(" | ").slice(0, 4000)}`,
        );
      };
      await had("model", /compiling the GPU programs/);
      await had("base-concepts", /decoding \(greedy\) \d+\/2 questions, \d+ tokens/);
      await had("base-concepts", /scoring \d+ answers by execution/);
      await had("warmup", /sampling 2 per question with the definitions/);
      await had("warmup", /round 1: training on \d+ samples/);
      await had("grpo", /step 1\/2: sampling 2 per question/);
      await had("grpo", /step 2\/2: training on \d+ samples/);
      // The log as the user opens it: when each phase began and how long it took.
      const warmup = page.locator('li[data-cell-id="warmup"]');
      await warmup.getByTestId("progress-history").locator("summary").click();
      await warmup.scrollIntoViewIfNeeded();
      await warmup.screenshot({ path: `${ARTIFACTS}/demo-flow-progress-log.png` });
      // Cells that ran for more than a poll or two were outlined and on screen.
      const long = Object.entries(seen.inView);
      assert(long.length >= 5 && long.every(([, v]) => v), `running cells in view: ${JSON.stringify(seen.inView)}`);
      // The model cell says where its load time went.
      const summary = (await page.locator('li[data-cell-id="model"]').getByTestId("model-summary").textContent()) ?? "";
      assert(
        /load time[\d.]+ s \(.*shader compilation [\d.]+ s/.test(summary.replace(/\s+/g, "")) ||
          /shader compilation/.test(summary),
        `model summary: ${summary}`,
      );

      // The before/after picture: three splits, four stages, the chart drawn.
      const results = page.locator("rl-demo-results [data-testid=demo-results]");
      await results.waitFor({ timeout: 10_000 });
      const table = results.getByTestId("results-table");
      const text = (await table.textContent()) ?? "";
      for (
        const w of [
          "test-concepts",
          "test-templates",
          "heldout-db",
          "baseline",
          "after warm-up",
          "after GRPO",
          "self-consistency",
        ]
      ) assert(text.includes(w), `results table names ${w}: ${text}`);
      assertEquals(await results.locator("td[data-split=test-concepts][data-stage='self-consistency']").count(), 1);
      const box = await results.getByTestId("results-chart").boundingBox();
      assert(box && box.width > 300 && box.height > 150, `chart drawn: ${JSON.stringify(box)}`);
      // A tiny random model scores 0% nearly everywhere: each measured bar still shows, and self-consistency
      // (run on test-concepts only) has no bar on the other splits.
      const bars = await chartBars(page.locator("rl-demo-results"));
      console.log(`chart bars: ${JSON.stringify(bars)}`);
      assertBarsVisible(bars);
      assert(
        bars!.some((b) => b.value === null) && bars!.some((b) => b.value === 0),
        "the chart has a 0% bar and a missing one",
      );
      assert(
        (await results.getByTestId("learned").count()) + (await results.getByTestId("no-learned").count()) === 1,
        "learned questions, or a line saying there are none",
      );
      await results.scrollIntoViewIfNeeded();
      await results.screenshot({ path: `${ARTIFACTS}/demo-flow-results.png` });
      await screenshot(page, "demo-flow-done");
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});

/** Rows of a query on a demo database, as the page's records hold them. */
function resultOf(db: { exec(sql: string): { columns: string[]; values: unknown[][] }[] }, sql: string) {
  const r = db.exec(sql)[0] ?? { columns: [], values: [] };
  return displayResult({
    columns: r.columns,
    rows: r.values.map((row) =>
      row.map((v) => (typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v) as SqlValue)
    ),
    capped: false,
  });
}

Deno.test({
  name:
    "demo results: the before/after picture with learned questions — baseline answer (the concept left out) next to the answer after GRPO, with their rows",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const SQL = await loadSqlJsDeno();
    const tasks = (await Deno.readTextFile(`${ROOT}/public/demo/test-concepts.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l) as {
        id: string;
        db_id: string;
        question: string;
        evidence: string;
        gold_sql: string;
        concepts: string[];
      }
    );
    const pred = new Map(ENTITY_CONCEPTS.map((c) => [c.id, c.predicate]));
    // Questions whose answers are small, on one concept with a condition: what a model that ignores the word writes is the query without it.
    const picks = tasks.filter((t) =>
      t.concepts.length === 1 && pred.has(t.concepts[0]) && t.gold_sql.startsWith("SELECT COUNT(*)")
    ).slice(0, 3);
    const records: { before: SampleRecord[]; after: SampleRecord[] } = { before: [], after: [] };
    for (const [i, t] of picks.entries()) {
      const db = new SQL.Database(await Deno.readFile(`${ROOT}/public/demo/${t.db_id}/${t.db_id}.sqlite`));
      const naive = t.gold_sql.replace(pred.get(t.concepts[0])!, "1").replace("WHERE 1 AND ", "WHERE ").replace(
        " WHERE 1",
        "",
      );
      const rec = (sql: string, correct: boolean): SampleRecord => ({
        v: 1,
        phase: "eval",
        step: 0,
        taskId: t.id,
        dbId: t.db_id,
        question: t.question,
        evidence: t.evidence,
        sampleIndex: 0,
        prompt: "",
        completion: "```sql\n" + sql + "\n```",
        reasoning: null,
        extraction: { sql, source: "sql-block" },
        predicted: resultOf(db, sql),
        gold: resultOf(db, t.gold_sql),
        error: null,
        correct,
        execMs: 1,
        reward: { total: correct ? 1 : 0, components: {}, weighted: {} },
        advantage: null,
        completionTokens: 20,
        logprob: -3,
        finishReason: "eos",
      });
      records.before.push(rec(naive, false));
      // The third question is not learned: still the concept-free query after training.
      records.after.push(i < 2 ? rec(t.gold_sql, true) : { ...rec(naive, false), step: 1 });
      db.close();
    }
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 1000 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.locator("rl-notebook").waitFor();
      await page.evaluate((recs) => {
        const report = (id: string, split: string, label: string, greedy: number, questions: number) => ({
          kind: "evaluate",
          cellId: id,
          split,
          label,
          overall: { questions, greedy },
          byDifficulty: {},
          samplesPerQuestion: 0,
          predictionsPath: "",
        });
        const states: Record<string, { report: unknown; samples: unknown[] }> = {
          b1: { report: report("b1", "test-concepts", "baseline", 0.031, 96), samples: recs.before },
          b2: { report: report("b2", "test-templates", "baseline", 0, 64), samples: [] },
          b3: { report: report("b3", "heldout-db", "baseline", 0.042, 48), samples: [] },
          w1: { report: report("w1", "test-concepts", "after warm", 0.177, 96), samples: [] },
          w2: { report: report("w2", "test-templates", "after warm", 0.063, 64), samples: [] },
          w3: { report: report("w3", "heldout-db", "after warm", 0.042, 48), samples: [] },
          a1: { report: report("a1", "test-concepts", "after grpo", 0.292, 96), samples: recs.after },
          a2: { report: report("a2", "test-templates", "after grpo", 0.094, 64), samples: [] },
          a3: { report: report("a3", "heldout-db", "after grpo", 0.063, 48), samples: [] },
          sc: {
            report: {
              kind: "selfconsistency",
              cellId: "sc",
              split: "test-concepts",
              samples: 8,
              weighting: "count",
              questions: 96,
              voteAccuracy: 0.333,
              bestOfNAccuracy: 0.3,
              oracleAccuracy: 0.5,
              firstSampleAccuracy: 0.27,
              predictionsPath: "",
            },
            samples: [],
          },
        };
        const types: Record<string, string> = { warm: "warmup", grpo: "grpo", sc: "selfconsistency" };
        const cells = ["b1", "b2", "b3", "warm", "w1", "w2", "w3", "grpo", "a1", "a2", "a3", "sc"].map((id) => ({
          id,
          type: types[id] ?? "evaluate",
          params: {},
        }));
        const controller = Object.assign(new EventTarget(), {
          active: null,
          state: (id: string) => ({
            status: "done",
            progress: null,
            error: null,
            accuracy: null,
            metrics: [],
            resumedFrom: null,
            model: null,
            ...(states[id] ?? { report: null, samples: [] }),
          }),
        });
        const el = document.createElement("rl-demo-results") as HTMLElement & { cells: unknown; controller: unknown };
        el.cells = cells;
        el.controller = controller;
        el.id = "picture";
        el.style.cssText = "display:block;max-width:1000px;margin:12px auto";
        document.body.prepend(el);
      }, records);
      const results = page.locator("#picture [data-testid=demo-results]");
      await results.waitFor();
      assertEquals((await results.getByTestId("learned-count").textContent())?.trim(), "1 of 2 learned");
      // test-templates' baseline is 0%: a thin bar, where self-consistency off test-concepts has none.
      const bars = await chartBars(page.locator("#picture"));
      assertBarsVisible(bars);
      assert(
        bars!.some((b) => b.split === "test-templates" && b.stage === "baseline" && b.value === 0),
        JSON.stringify(bars),
      );
      assertEquals(bars!.filter((b) => b.value === null).map((b) => `${b.split} ${b.stage}`), [
        "test-templates self-consistency",
        "heldout-db self-consistency",
      ]);
      const before = results.getByTestId("answer-before"), after = results.getByTestId("answer-after");
      assert(
        ((await before.textContent()) ?? "").includes("✗ wrong") &&
          ((await after.textContent()) ?? "").includes("✓ right"),
        "baseline wrong, after GRPO right",
      );
      assert(
        ((await after.textContent()) ?? "").includes(picks[0].gold_sql.slice(0, 40)),
        "the answer after GRPO is the gold query",
      );
      assert(
        ((await results.getByTestId("learned-definition").textContent()) ?? "").includes("not in its prompt"),
        "knowledge mode: the definition it learned is named",
      );
      assert(
        (await before.getByTestId("rows").count()) === 1 && (await after.getByTestId("rows").count()) === 1,
        "each answer shows its rows",
      );
      const first = (await results.getByTestId("learned-question").textContent()) ?? "";
      await results.getByRole("button", { name: "Next learned question" }).click();
      assert(
        ((await results.getByTestId("learned-question").textContent()) ?? "") !== first,
        "the next learned question",
      );
      await results.getByRole("button", { name: "Previous learned question" }).click();
      await results.screenshot({ path: `${ARTIFACTS}/demo-results-learned.png` });
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
