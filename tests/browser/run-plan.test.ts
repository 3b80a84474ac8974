// A first run a user can finish and trust (issue #48, items 1-4 and the end of 10), in the page on
// SwiftShader: Run all plans the run from the device's measured speed and offers the quick version;
// cells before the model say done as they finish; Stop ends a long decoding within the call (not at
// its end) and says "stopping…"; the cells a stopped run finished keep their outputs over a reload;
// a finished run says "Finished in …"; an evaluation shows no empty metrics box.
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
  serveStatic,
  waitForCell,
  watchErrors,
} from "./harness.ts";
import type { Page } from "playwright-core";

const status = (page: Page, id: string) =>
  page.locator(`li[data-cell-id="${id}"]`).getByTestId("run-status").getAttribute("data-status");

Deno.test({
  name:
    "run plan (issue #48 item 1): Run all on SwiftShader measures the device, plans hours and offers the quick version",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      await openNotebook(page, server.url, demo);
      await page.locator("li[data-cell-type=gpu]").getByTestId("gpu-info").waitFor({ timeout: 60_000 });
      await page.getByTestId("run-all").click();
      const plan = page.getByTestId("run-plan");
      await plan.waitFor({ timeout: 120_000 });
      await screenshot(page, "run-plan-proposal");
      const full = (await page.getByTestId("plan-full").textContent()) ?? "";
      const quick = (await page.getByTestId("plan-quick").textContent()) ?? "";
      assert(/\d+ (h|days)/.test(full), `the full demo on SwiftShader is hours: ${full}`);
      // The quick version's figure follows the measured speed (a loaded CI machine measures less); its ratio to the full one does not.
      const secs = (t: string) =>
        Number(/(\d+) days/.exec(t)?.[1] ?? 0) * 86400 + Number(/(\d+) h/.exec(t)?.[1] ?? 0) * 3600 +
        Number(/(\d+) min/.exec(t)?.[1] ?? 0) * 60;
      assert(
        secs(quick) > 0 && secs(quick) * 10 < secs(full),
        `the quick version is a small part of the full run: ${quick} of ${full}`,
      );
      const givesUp = await page.getByTestId("plan-gives-up").locator("li").allTextContents();
      assert(
        givesUp.some((g) => g.includes("questions per split")) && givesUp.some((g) => g.includes("self-consistency")),
        givesUp.join("; "),
      );
      // Nothing started: the cells wait for a choice, each with its expected time on this device.
      assertEquals(await status(page, "base-concepts"), "idle");
      assert(
        /on this device/.test(
          (await page.locator('li[data-cell-id="base-concepts"]').getByTestId("run-status").textContent()) ?? "",
        ),
      );
      await page.getByTestId("plan-cancel").click();
      await plan.waitFor({ state: "detached" });
      assertEquals(await status(page, "data"), "idle");
      assertEquals(errors.filter((e) => !/onnxruntime|VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});

/** Setup cells, a short evaluation, then one whose greedy answers never end (the tiny model's EOS logit is 0). */
function stopDemo(): unknown {
  const keep = ["gpu", "data", "model", "prompt", "reward", "base-concepts"];
  const cells = demo.cells.filter((c) => keep.includes(c.id)).map((c) => {
    if (c.id === "data") return { ...c, params: { ...c.params, limit: 2 } };
    if (c.id === "base-concepts") return { ...c, params: { ...c.params, k: 1, n: 2, maxNewTokens: 4 } };
    return c;
  });
  const long = { id: "long", type: "evaluate", params: { split: "test-concepts", n: 2, k: 1, maxNewTokens: 1200 } };
  return { ...demo, cells: [...cells, long] };
}

Deno.test({
  name:
    "run (issue #48 items 3, 4, 10): setup cells done as they finish; Stop within a decoding; finished cells survive it and a reload; the end says so",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-run-stop-" });
    await writeVaryingLengthModel(`${dir}/model`, { seed: 7, eosStrength: 0, corpus: await demoCorpus(2) });
    const server = serveOverlay(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
      await openNotebook(page, server.url, stopDemo());
      await page.locator("li[data-cell-type=gpu]").getByTestId("gpu-info").waitFor({ timeout: 60_000 });
      await page.getByTestId("run-all").click();
      // A loaded machine may measure SwiftShader slow enough to be offered the quick version: this test runs the notebook as it is.
      await Promise.race([
        page.getByTestId("run-full").click({ timeout: 120_000 }).catch(() => undefined),
        page.getByTestId("run-status-bar").waitFor({ timeout: 120_000 }),
      ]);
      await page.getByTestId("run-status-bar").waitFor({ timeout: 60_000 });

      // Item 4: while the evaluation runs, the cells before the model say done, not "waiting…".
      await waitForCell(page, "base-concepts", { want: "running", ms: 600_000, every: 100 }).catch(() => undefined);
      await waitForCell(page, "long", { want: "running", ms: 600_000 });
      assertEquals(
        await Promise.all(["data", "model", "prompt", "reward", "base-concepts"].map((id) => status(page, id))),
        ["done", "done", "done", "done", "done"],
      );
      assert(
        !((await page.locator('li[data-cell-id="long"]').getByTestId("run-status").textContent()) ?? "").includes(
          "captured prefill",
        ),
      );

      // Item 3: Stop during the decoding: "stopping…", then the cell says stopped long before its 1,200 tokens.
      const msg = page.locator('li[data-cell-id="long"]').getByTestId("progress-message");
      for (const t0 = Date.now(); Date.now() - t0 < 300_000; await page.waitForTimeout(200)) {
        if (/decoding \(greedy\) 0\/2 questions, [1-9]/.test((await msg.textContent().catch(() => "")) ?? "")) break;
      }
      await page.getByTestId("stop-run").click();
      // "stopping…" shows until the run has ended, which may already be the case by the next look.
      await page.locator("[data-testid=run-stopping], [data-testid=run-ended]").first().waitFor({ timeout: 5_000 });
      await screenshot(page, "run-stopping");
      await waitForCell(page, "long", { want: "stopped", ms: 120_000 });
      const lastLine = (await page.locator('li[data-cell-id="long"]').getByTestId("progress-history").locator(
        "[data-testid=progress-entry]",
      ).last().textContent()) ?? "";
      const tokens = Number(/([\d,]+) tokens/.exec(lastLine)?.[1].replace(/,/g, "") ?? NaN);
      assert(tokens < 2 * 1200, `stopped within the decoding: ${lastLine}`);
      assert(/Stopped after/.test((await page.getByTestId("run-ended-text").textContent()) ?? ""));
      // Issue #48 regression: nothing of the stopped cell was kept (no checkpoint), so its button runs it again, not "Resume".
      assertEquals(
        (await page.locator('li[data-cell-id="long"]').getByTestId("resume").textContent())?.trim(),
        "Run again",
      );

      // Items 3 and 4: a reload keeps what the stopped run finished (model summary, report, setup cells done).
      await page.reload();
      const cell = (id: string) => page.locator(`li[data-cell-id="${id}"]`);
      await cell("base-concepts").getByTestId("accuracy-table").waitFor({ timeout: 60_000 });
      await cell("model").getByTestId("model-summary").waitFor({ timeout: 10_000 });
      assertEquals(await Promise.all(["data", "prompt", "reward", "base-concepts"].map((id) => status(page, id))), [
        "done",
        "done",
        "done",
        "done",
      ]);
      await screenshot(page, "run-after-reload");

      // Item 10: a run that finishes says so; an evaluation shows its table, not an empty metrics box.
      await clickRun(page, "base-concepts");
      await waitForCell(page, "base-concepts", { ms: 600_000 });
      await page.getByTestId("run-ended").waitFor({ timeout: 10_000 });
      assert(/Finished in/.test((await page.getByTestId("run-ended-text").textContent()) ?? ""));
      assertEquals(await cell("base-concepts").locator("rl-metrics-charts").count(), 0);
      await screenshot(page, "run-finished");
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true }).catch(() => undefined);
    }
  },
});
