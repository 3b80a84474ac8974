// A q4 model in the page (Chromium's Dawn on SwiftShader: no shader-f16). The q4 graph used to
// need f16 ("Gather requires f16" at the first step); it now computes in f32 there. The model cell
// says what ran, and an evaluate cell samples with it and scores the samples.
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { demoCorpus } from "./fixtures.ts";
import { launchChromium, screenshot, serveOverlay, waitForCell, watchErrors } from "./harness.ts";

Deno.test({
  name:
    "q4 in the page on a device without shader-f16: the model cell loads it as f32 compute and an evaluate cell samples with it",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-q4-page-" });
    await writeVaryingLengthModel(`${dir}/model`, { seed: 9, corpus: await demoCorpus(2) });
    const server = serveOverlay(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      const keep = ["intro", "gpu", "data", "model", "prompt", "reward", "base-concepts"];
      const cells = demo.cells.filter((c) => keep.includes(c.id)).map((c) => {
        if (c.id === "data") return { ...c, params: { ...c.params, limit: 2 } };
        if (c.id === "model") return { ...c, params: { ...c.params, dtype: "q4" } };
        if (c.id === "base-concepts") return { ...c, params: { ...c.params, k: 1, n: 2, maxNewTokens: 4 } };
        return c;
      });
      await page.addInitScript(
        (text) => localStorage.setItem("rlvr-notebook-autosave", text),
        JSON.stringify({ ...demo, cells }),
      );
      await page.goto(server.url);
      const cell = (id: string) => page.locator(`li[data-cell-id="${id}"]`);
      const f16 = await page.evaluate(async () =>
        !!(await (navigator as unknown as { gpu?: GPU }).gpu?.requestAdapter())?.features.has("shader-f16")
      );
      await cell("base-concepts").getByTestId("run-cell").click();
      await waitForCell(page, "base-concepts", { ms: 300_000 });
      const rows = Object.fromEntries(
        await cell("model").getByTestId("model-summary").locator("tr").evaluateAll((trs) =>
          trs.map((tr) => [tr.querySelector("th")?.textContent ?? "", tr.querySelector("td")?.textContent ?? ""])
        ),
      );
      const asRun = rows["weights as run"] ?? "";
      console.log(
        `shader-f16 ${f16 ? "present" : "absent"}; weights as run: ${asRun}; policy on ${rows["policy runs on"]}`,
      );
      assert(asRun.startsWith("q4: q4 projections"), asRun);
      assertEquals(asRun.includes("no shader-f16"), !f16, asRun);
      assertEquals(rows["policy runs on"], "webgpu");
      const table = cell("base-concepts").getByTestId("accuracy-table");
      assert((await table.textContent())?.includes("overall"), "accuracy table shown");
      const n = await page.evaluate(() =>
        (document.querySelector("rl-notebook") as unknown as { runs: { state(id: string): { samples: unknown[] } } })
          .runs.state("base-concepts").samples.length
      );
      assertEquals(n, 2);
      await screenshot(page, "q4-page");
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
