// The ask cell in the page (SwiftShader WebGPU, a tiny random model served where the demo model
// lives): before any training it says the run has no checkpoint and answers with the base model
// alone; after a short GRPO run it offers that stage and answers with both, side by side (SQL, rows
// or the error, definitions used); after a reload it finds the stage again in the run folder (OPFS)
// and asks again.
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { demoCorpus } from "./fixtures.ts";
import {
  ARTIFACTS,
  clickRun,
  launchChromium,
  openNotebook,
  ROOT,
  screenshot,
  serveOverlay,
  serveStatic,
  waitForCell,
  watchErrors,
} from "./harness.ts";
import { definitionsOf, definitionsUsed } from "../../src/runtime/recipe/ask.ts";
import { type AskAnswer, type AskReport, displayResult } from "../../src/runtime/records.ts";
import { loadSqlJsDeno } from "../../src/runtime/sql-wasm.ts";
import type { SqlValue, Task } from "../../src/core/types.ts";
import type { Page } from "playwright-core";

/** The demo's setup cells, one GRPO step, and its ask cell (short answers). */
function askDemo(): unknown {
  const keep = new Set(["gpu", "data", "model", "prompt", "reward", "grpo", "ask"]);
  const cells = demo.cells.filter((c) => keep.has(c.id)).map((c) => {
    switch (c.id) {
      case "data":
        return { ...c, params: { ...c.params, limit: 2 } };
      case "grpo":
        return { ...c, params: { ...c.params, G: 2, batchQuestions: 1, steps: 1, maxNewTokens: 4, evalEvery: 0 } };
      case "ask":
        return { ...c, params: { ...c.params, maxNewTokens: 24 } };
      default:
        return c;
    }
  });
  return { ...demo, cells };
}

/** Clicks Ask and waits until the cell's run is done (a failure throws with its error). */
async function ask(page: Page, ms = 300_000): Promise<void> {
  const cell = page.locator('li[data-cell-id="ask"]');
  const status = cell.getByTestId("ask-status");
  await cell.getByTestId("ask").click();
  const t0 = Date.now();
  let left = false;
  for (;;) {
    const s = await status.getAttribute("data-status");
    if (s !== "done") left = true;
    if (left && s === "done") return;
    if (s === "failed" || s === "stopped") {
      throw new Error(`ask ${s}: ${(await cell.getByTestId("ask-error").allTextContents()).join(" | ")}`);
    }
    if (Date.now() - t0 > ms) throw new Error(`ask still ${s} after ${ms} ms`);
    await page.waitForTimeout(250);
  }
}

/** What one answer column shows. */
async function answer(page: Page, which: "base" | "trained") {
  const a = page.locator(`li[data-cell-id="ask"] [data-testid=ask-answer][data-which=${which}]`);
  return {
    title: (await a.locator("h4").textContent()) ?? "",
    sql: (await a.getByTestId("ask-sql").count()) ? (await a.getByTestId("ask-sql").textContent()) ?? "" : null,
    wrote: (await a.getByTestId("ask-completion").count())
      ? (await a.getByTestId("ask-completion").textContent()) ?? ""
      : null,
    // Rows, or why there are none: one of the two is always there.
    outcome: (await a.getByTestId("ask-rowcount").count()) + (await a.getByTestId("ask-answer-error").count()),
    defs: (await a.getByTestId("ask-defs").count()) + (await a.getByTestId("ask-defs-none").count()),
    text: (await a.textContent()) ?? "",
  };
}

Deno.test({
  name: "ask cell in the page: base model alone before a checkpoint; base beside GRPO after one; again after a reload",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-ask-page-" });
    // No pull to end at once: the answers are text to compare (random words, no SQL).
    await writeVaryingLengthModel(`${dir}/model`, { seed: 5, eosStrength: 0, corpus: await demoCorpus(2) });
    const server = serveOverlay(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      await openNotebook(page, server.url, askDemo());
      const cell = page.locator('li[data-cell-id="ask"]');
      assertEquals(
        await cell.getByTestId("ask-question").inputValue(),
        "How many loyal customers do we have in each country?",
      );
      const none = cell.getByTestId("ask-no-checkpoint");
      await none.filter({ hasText: "no checkpoint yet" }).waitFor({ timeout: 60_000 });

      // No checkpoint: the base model answers alone, the other column says why.
      await ask(page);
      const base0 = await answer(page, "base");
      assert(base0.title.includes("Base model"), base0.title);
      assert(base0.sql !== null && base0.outcome === 1 && base0.defs === 1, JSON.stringify(base0));
      const t0 = await answer(page, "trained");
      assert(t0.text.includes("no checkpoint yet"), t0.text);

      // A short GRPO run writes a checkpoint: the cell offers it and both answer.
      await clickRun(page, "grpo");
      await waitForCell(page, "grpo", { ms: 600_000 });
      const stage = cell.getByTestId("ask-stage");
      await stage.waitFor({ timeout: 30_000 });
      const options = await stage.locator("option").allTextContents();
      assertEquals(options, ['newest (GRPO "grpo", step 1)', 'GRPO "grpo", step 1'], JSON.stringify(options));
      await cell.getByTestId("ask-question").fill("Which loyal customers live in DE? Give their names.");
      await ask(page);
      const asked = (await cell.getByTestId("ask-asked").textContent()) ?? "";
      assert(asked.includes("Which loyal customers live in DE?"), `the typed question was asked: ${asked}`);
      assert(/\d+ definitions known/.test(asked), asked);
      const base1 = await answer(page, "base"), t1 = await answer(page, "trained");
      assert(t1.title.includes('After GRPO "grpo", step 1'), t1.title);
      for (const a of [base1, t1]) assert(a.sql !== null && a.outcome === 1 && a.defs === 1, JSON.stringify(a));
      await cell.scrollIntoViewIfNeeded();
      await cell.screenshot({ path: `${ARTIFACTS}/ask-cell.png` });

      // Reload: the stage comes back from the run folder's checkpoint, and the cell asks again.
      await page.reload();
      await stage.waitFor({ timeout: 60_000 });
      assertEquals(await stage.locator("option").allTextContents(), options);
      assertEquals(
        await cell.getByTestId("ask-question").inputValue(),
        "Which loyal customers live in DE? Give their names.",
        "the question was saved with the notebook",
      );
      await ask(page);
      const t2 = await answer(page, "trained");
      assert(t2.title.includes('After GRPO "grpo", step 1') && t2.sql !== null, JSON.stringify(t2));
      assertEquals(
        [t2.sql, t2.wrote],
        [t1.sql, t1.wrote],
        "the same checkpoint answers the same question the same way (greedy)",
      );
      assert(t1.sql !== "(no SQL)" || (t1.wrote ?? "").length > 0, `an answer to compare: ${JSON.stringify(t1)}`);
      await cell.screenshot({ path: `${ARTIFACTS}/ask-cell-reloaded.png` });
      await screenshot(page, "ask-page");
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});

Deno.test({
  name:
    "ask cell rendering: rows, row count, the definitions each SQL used, side by side (answers run on the demo's shop)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const SQL = await loadSqlJsDeno();
    const db = new SQL.Database(await Deno.readFile(`${ROOT}/public/demo/shop/shop.sqlite`));
    const tasks = (await Deno.readTextFile(`${ROOT}/public/demo/train.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l) as Task
    );
    const defs = definitionsOf(tasks, "shop");
    const answerOf = (sql: string, stage: AskAnswer["stage"]): AskAnswer => {
      const r = db.exec(sql)[0] ?? { columns: [], values: [] };
      const result = displayResult({
        columns: r.columns,
        rows: r.values.map((row) =>
          row.map((v) => (typeof v === "number" && Number.isInteger(v) ? BigInt(v) : v) as SqlValue)
        ),
        capped: false,
      }, 10);
      return {
        stage,
        completion: "```sql\n" + sql + "\n```",
        sql,
        error: null,
        result,
        definitions: definitionsUsed(sql, defs),
      };
    };
    const loyal = defs.find((d) => d.term === "loyal customer")!.fragment;
    const stage = { cellId: "grpo", kind: "grpo" as const, step: 40, savedAt: "" };
    const report: AskReport = {
      kind: "ask",
      cellId: "ask",
      question: "How many loyal customers do we have in each country?",
      db: "shop",
      base: answerOf("SELECT country, COUNT(*) FROM customers GROUP BY country", null),
      trained: answerOf(`SELECT country, COUNT(*) FROM customers WHERE ${loyal} GROUP BY country`, stage),
      stages: [stage],
      known: defs.length,
    };
    db.close();
    assertEquals(report.trained!.definitions.map((d) => d.term), ["loyal customer"]);
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.locator("rl-notebook").waitFor();
      await page.evaluate(({ report, cells }) => {
        const controller = Object.assign(new EventTarget(), {
          active: null,
          state: () => ({ status: "done", progress: null, error: null, report }),
          checkpoints: () => Promise.resolve({ grpo: 40 }),
        });
        const el = document.createElement("rl-cell-ask") as unknown as HTMLElement & Record<string, unknown>;
        el.cell = cells.find((c: { id: string }) => c.id === "ask");
        el.controller = controller;
        el.cells = cells;
        el.id = "asked";
        el.style.cssText = "display:block;max-width:1000px;margin:12px auto";
        document.body.prepend(el);
      }, { report, cells: demo.cells });
      const el = page.locator("#asked");
      await el.getByTestId("ask-stage").waitFor();
      assertEquals(await el.getByTestId("ask-stage").locator("option").allTextContents(), [
        'newest (GRPO "grpo", step 40)',
        'GRPO "grpo", step 40',
      ]);
      const col = (w: string) => el.locator(`[data-testid=ask-answer][data-which=${w}]`);
      for (const w of ["base", "trained"]) {
        const a = report[w === "base" ? "base" : "trained"]!;
        const rows = await col(w).getByTestId("ask-rows").locator("tr").count();
        assertEquals(rows, 1 + a.result!.rows.length, `${w}: header and the rows kept`);
        assert(
          ((await col(w).getByTestId("ask-rowcount").textContent()) ?? "").includes(`${a.result!.rowCount} row`),
          w,
        );
      }
      assertEquals(await col("base").getByTestId("ask-defs-none").count(), 1);
      assert(((await col("trained").getByTestId("ask-defs").textContent()) ?? "").includes("loyal customer"));
      await el.screenshot({ path: `${ARTIFACTS}/ask-cell-rows.png` });
      assertEquals(errors, []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
