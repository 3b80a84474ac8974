// The cold-start warm-up (method "sft": no sampling, the dataset's gold answers as targets) run in the
// page (SwiftShader WebGPU) on the built-in demo data with a tiny random model served where the demo model
// lives: the cell's report names where its targets came from and shows each round's gold targets, the mean
// token log-probability of the targets before → after (it must rise: the round trains on exactly them) and
// its optimiser steps.
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { demoCorpus } from "./fixtures.ts";
import {
  clickRun,
  launchChromium,
  openNotebook,
  screenshot,
  serveOverlay,
  waitForCell,
  watchErrors,
} from "./harness.ts";

/** The built-in notebook up to an sft warm-up on 2 training questions, one epoch (nothing evaluated; SwiftShader is slow). */
function sftNotebook(): unknown {
  const keep = new Set(["intro", "gpu", "data", "model", "prompt", "reward", "warmup"]);
  const cells = demo.cells.filter((c) => keep.has(c.id)).map((c) => {
    switch (c.id) {
      case "data":
        return { ...c, params: { ...c.params, limit: 2 } };
      case "warmup":
        return { ...c, params: { rounds: 1, method: "sft", lr: 0.01, epochs: 1, exportSamples: "none" } };
      default:
        return c;
    }
  });
  return { ...demo, title: "sft warm-up", cells };
}

Deno.test({
  name:
    "sft warm-up in the page: the report shows the targets' source, the gold targets and their log-probability rising",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-sft-page-" });
    await writeVaryingLengthModel(`${dir}/model`, { seed: 5, corpus: await demoCorpus(2) });
    const server = serveOverlay(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      await openNotebook(page, server.url, sftNotebook());
      const cell = page.locator(`li[data-cell-id="warmup"]`);
      await clickRun(page, "warmup");
      await waitForCell(page, "warmup", { ms: 300_000 });
      const report = cell.locator("h4", { hasText: "Warm-up (sft on gold targets)" });
      await report.waitFor({ timeout: 30_000 });
      const targets = (await cell.getByTestId("warmup-targets").textContent()) ?? "";
      assert(
        /Gold targets under \S+: 0 from the records' completion, 2 the gold SQL/.test(targets.replace(/\s+/g, " ")),
        `targets line: ${targets}`,
      );
      const rows = cell.getByTestId("accuracy-table").locator("tr");
      assertEquals(await rows.count(), 2, "a header and one round");
      const cells = (await rows.nth(1).locator("td").allTextContents()).map((t) => t.trim());
      assertEquals(cells[0], "1");
      assertEquals(cells[1], "2", "two gold targets (the dataset's limit)");
      const m = /^(-?\d+\.\d+) → (-?\d+\.\d+)$/.exec(cells[2]);
      assert(m, `log-probability before → after: ${cells[2]}`);
      assert(Number(m[2]) > Number(m[1]), `the targets' mean log-probability rises: ${cells[2]}`);
      assertEquals(cells[3], "1", "one optimiser step (2 targets, one epoch)");
      // Its metrics record has nothing to chart (no sampled rewards): the panel says so instead of "no metrics yet".
      const noCharts = (await cell.getByTestId("no-charts").textContent()) ?? "";
      assert(noCharts.includes("Nothing to chart in this cell's metrics record"), `charts panel: ${noCharts}`);
      await cell.scrollIntoViewIfNeeded();
      await screenshot(page, "warmup-sft");
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), [], "no page errors");
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
