// The shipped demo model (public/model, pretrained by `rlvr pretrain`) loads in the page through the
// same loader as a Hub model and samples SQL with the policy on WebGPU (SwiftShader here): the
// built-in notebook's baseline cell, cut to one question and a few tokens.
import { assert } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { clickRun, launchChromium, screenshot, serveStatic, waitForCell, watchErrors } from "./harness.ts";

Deno.test({
  name: "demo model: the shipped model loads in the page and the baseline cell decodes with it",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const cells = demo.cells.filter((c) =>
      !["evaluate", "warmup", "grpo", "selfconsistency", "export"].includes(c.type) || c.id === "base-concepts"
    ).map((c) => {
      if (c.id === "data") return { ...c, params: { ...c.params, limit: 1 } };
      if (c.id === "base-concepts") return { ...c, params: { ...c.params, k: 1, n: 1, maxNewTokens: 12 } };
      // A shorter prompt (fewer example values and tables) keeps SwiftShader's prefill short.
      if (c.id === "prompt") return { ...c, params: { ...c.params, maxPromptTokens: 320 } };
      return c;
    });
    const nb = JSON.stringify({ ...demo, cells });
    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      await page.addInitScript((text) => localStorage.setItem("rlvr-notebook-autosave", text), nb);
      await page.goto(server.url);
      const cell = page.locator('li[data-cell-id="base-concepts"]');
      await clickRun(page, "base-concepts");
      const t0 = Date.now();
      await waitForCell(page, "base-concepts", {
        ms: 400_000,
        every: 500,
        onTimeout: async () => {
          await screenshot(page, "demo-model-timeout");
          return `page errors: ${errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)).join(" | ")}`;
        },
      });
      await cell.getByTestId("accuracy-table").waitFor();
      const modelLog = (await page.locator('li[data-cell-id="model"]').textContent()) ?? "";
      await cell.getByTestId("open-inspector").click();
      const sample = cell.locator("rl-reward-inspector [data-testid=sample]").first();
      await sample.waitFor();
      await sample.locator("summary", { hasText: "completion" }).click();
      await screenshot(page, "demo-model-baseline");
      const text = (await sample.innerText()) ?? "";
      // 12 tokens of the pretrained model: the answer format's opening fence and the start of a query.
      assert(/```sql|SELECT/i.test(text), `the sample shows the model's completion: ${text.slice(0, 400)}`);
      console.log(`first sample: ${text.replace(/\s+/g, " ").slice(0, 300)}`);
      console.log(
        `demo model baseline decoded in ${((Date.now() - t0) / 1000).toFixed(1)} s; model cell: ${
          modelLog.replace(/\s+/g, " ").slice(0, 200)
        }`,
      );
      const real = errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e));
      assert(real.length === 0, `page errors: ${real.join("\n")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
