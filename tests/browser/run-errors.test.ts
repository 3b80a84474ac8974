// Run errors in the page: a notebook opened from a shared link runs nothing by itself, and a run
// of the demo model cell in a build without the demo model fails in that cell with the reason and
// what to do (the build ships public/model/; the test answers every model/ request with 404, as a
// build without it would).
import { Buffer } from "node:buffer";
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { parseNotebook } from "../../src/core/notebook.ts";
import { encodeShareHash } from "../../src/core/share.ts";
import { ARTIFACTS, launchChromium, openNotebook, screenshot, serveStatic, watchErrors } from "./harness.ts";

Deno.test({
  name: "run errors: a shared link runs nothing; the missing demo model is explained in its cell",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const parsed = parseNotebook(demo);
    if (!parsed.ok) throw new Error("demo notebook invalid");
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
      const errors = watchErrors(page);
      const modelRequests: string[] = [];
      page.on("request", (r) => {
        if (new URL(r.url()).pathname.startsWith("/model/")) modelRequests.push(r.url());
      });
      await page.goto(server.url + encodeShareHash(parsed.doc));
      await page.getByTestId("from-link").waitFor();
      await page.waitForTimeout(1500);
      const statuses = await page.locator("rl-cell-run [data-testid=run-status]").evaluateAll((els) =>
        els.map((e) => e.getAttribute("data-status"))
      );
      assert(statuses.length >= 8, `run bars on the runnable cells: ${statuses}`);
      assert(statuses.every((s) => s === "idle"), `nothing runs from a link: ${statuses}`);
      assertEquals(modelRequests, []);

      await page.context().route("**/model/**", (route) => route.fulfill({ status: 404, body: "not found" }));
      const model = page.locator('li[data-cell-id="model"]');
      await model.getByTestId("run-cell").click();
      const err = model.getByTestId("cell-error");
      await err.waitFor({ timeout: 60_000 });
      assertEquals(await err.getAttribute("data-kind"), "demo-model-missing");
      const text = (await err.textContent()) ?? "";
      assert(text.includes("the demo model is not in this build"), text);
      assert(text.includes('source to "url"'), `remedy shown: ${text}`);
      assertEquals(await model.getByTestId("run-status").getAttribute("data-status"), "failed");
      await err.scrollIntoViewIfNeeded();
      await screenshot(page, "run-error-demo-model");
      assertEquals(errors, []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});

// Issue 48 item 9: Run with an uploaded questions file whose database was not uploaded fails in the dataset cell
// ("… aircraft, not uploaded"); that error lived in the run state and stayed after the questions file was replaced,
// speaking of a file no longer there. Other files now clear it; running again says what the new files miss.
Deno.test({
  name: "run errors: an upload's missing-database error goes when the questions file is replaced",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1200 } });
      const errors = watchErrors(page);
      await openNotebook(page, server.url, {
        version: 1,
        title: "Uploaded questions",
        cells: [
          {
            id: "data",
            type: "dataset",
            params: { source: "upload", name: "my-database", format: "spider", split: "test", devFraction: 0, seed: 1 },
          },
        ],
      });
      const cell = page.locator('li[data-cell-id="data"]');
      const q = (db_id: string, question: string) => JSON.stringify({ db_id, question, query: "SELECT 1" }) + "\n";
      const upload = async (name: string, text: string) => {
        await cell.getByTestId("upload-questions").setInputFiles({
          name,
          mimeType: "application/json",
          buffer: Buffer.from(text),
        });
        await page.waitForFunction(
          (name) =>
            (document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-cell-dataset")?.shadowRoot
              ?.querySelector("[data-testid=upload-summary]")?.textContent ?? "").includes(name),
          name,
        );
      };
      await upload("first.jsonl", q("aircraft", "How many planes?"));
      await cell.getByTestId("run-cell").click();
      const err = cell.getByTestId("cell-error");
      await err.waitFor({ timeout: 10_000 });
      assert(/database aircraft, not uploaded/.test((await err.textContent()) ?? ""), (await err.textContent()) ?? "");
      assertEquals(await cell.getByTestId("run-status").getAttribute("data-status"), "failed");
      await cell.screenshot({ path: `${ARTIFACTS}/run-error-upload-missing-db.png` });

      await upload("second.jsonl", q("pets", "How many pets?"));
      assertEquals(await err.count(), 0, "the error about first.jsonl's database went with the file");
      assertEquals(await cell.getByTestId("run-status").getAttribute("data-status"), "idle");
      await cell.screenshot({ path: `${ARTIFACTS}/run-error-upload-replaced.png` });
      // Running again speaks of the new file.
      await cell.getByTestId("run-cell").click();
      await err.waitFor({ timeout: 10_000 });
      const text = (await err.textContent()) ?? "";
      assert(/database pets, not uploaded/.test(text) && !text.includes("aircraft"), text);
      assertEquals(errors, []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
