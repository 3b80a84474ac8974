// The Hub notebook's model cell without a connection (issue 48, item 8): it used to say "Failed to
// fetch" and then advise about config.json, CORS and "a smaller dtype (q4)" although q4 was chosen.
// Now it says the Hub was unreachable, which URL failed, what the model cache holds, and what to do.
import { assert } from "../assert.ts";
import { ARTIFACTS, clickRun, launchChromium, openNotebook, serveStatic, waitForCell } from "./harness.ts";

const NOTEBOOK = {
  version: 1,
  title: "hub offline",
  cells: [
    { id: "gpu", type: "gpu", params: {} },
    {
      id: "data",
      type: "dataset",
      params: { source: "demo", name: "demo", format: "rlvr", split: "train", devFraction: 0, seed: 0 },
    },
    {
      id: "model",
      type: "model",
      params: {
        source: "hub",
        repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct",
        revision: "main",
        dtype: "q4",
        loraRank: 16,
        loraAlpha: 32,
      },
    },
  ],
};

Deno.test({
  name:
    "hub offline: issue 48 — the model cell says the Hub was unreachable, the URL, the model cache's state and what to do",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic(Deno.env.get("RLVR_TEST_DIST") || undefined);
    const browser = await launchChromium();
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // No connection to the Hub, whatever the machine has: every request to it fails as offline.
      await context.route(/huggingface\.co/, (route) => route.abort("internetdisconnected"));
      const page = await context.newPage();
      await openNotebook(page, server.url, NOTEBOOK);
      await clickRun(page, "model");
      await waitForCell(page, "model", { want: "failed", ms: 120_000 });
      const cell = page.locator('li[data-cell-id="model"]');
      const text = (await cell.getByTestId("cell-error").allTextContents()).join(" ").replace(/\s+/g, " ");
      await cell.screenshot({ path: `${ARTIFACTS}/hub-offline.png` });
      assert(
        /Hugging Face Hub Qwen\/Qwen2\.5-Coder-0\.5B-Instruct@main was unreachable/.test(text),
        `says the Hub was unreachable: ${text}`,
      );
      assert(
        text.includes("https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct/resolve/main/config.json"),
        `names the URL: ${text}`,
      );
      assert(
        /model cache has no copy of this file \(the cache is empty/.test(text),
        `says what the cache holds: ${text}`,
      );
      assert(/connect to the internet and run the cell again/i.test(text), `says what to do: ${text}`);
      assert(!/smaller dtype|CORS allowed/.test(text), `no advice that does not apply: ${text}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
