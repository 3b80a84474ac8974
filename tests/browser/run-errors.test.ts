// Run errors in the page: a notebook opened from a shared link runs nothing by itself, and a run
// of the demo model cell in a build without the demo model fails in that cell with the reason and
// what to do (the build ships public/model/; the test answers every model/ request with 404, as a
// build without it would).
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { parseNotebook } from "../../src/core/notebook.ts";
import { encodeShareHash } from "../../src/core/share.ts";
import { launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";

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
