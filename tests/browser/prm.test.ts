// The PRM cells in the page (SwiftShader WebGPU, Dawn/Tint compiling the PRM head's kernels): a
// notebook with PRM data, PRM train and self-consistency with PRM best-of-N on the demo data and a
// tiny random model served where the demo model lives. Their forms refuse a bad value with the
// reason; running the self-consistency cell runs the PRM cells before it in the GPU worker, and
// each cell shows its report: labels per step position and the first-error histogram, the PRM's
// held-out figures and files, and the selection rules at N = 1, 2 with their standard errors.
import { assert, assertEquals } from "../assert.ts";
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { launchChromium, openNotebook, screenshot, serveOverlay, waitForCell, watchErrors } from "./harness.ts";
import { demoCorpus } from "./fixtures.ts";

const TEMPLATE = "chain-of-ctes@2";

const NOTEBOOK = {
  version: 1,
  title: "PRM in the page",
  cells: [
    { id: "data", type: "dataset", params: { source: "demo", name: "demo", format: "rlvr", split: "train", limit: 3 } },
    { id: "model", type: "model", params: { source: "demo", dtype: "f32", loraRank: 2, loraAlpha: 4 } },
    { id: "prompt", type: "prompt", params: { template: TEMPLATE, maxPromptTokens: 800 } },
    { id: "reward", type: "reward", params: { comparison: "set" } },
    {
      id: "labels",
      type: "prmdata",
      params: {
        chains: 2,
        rollouts: 2,
        budget: 4,
        maxNewTokens: 4,
        questionsPerBatch: 2,
        dropUnparsed: false,
        balance: 0,
      },
    },
    {
      id: "prm",
      type: "prmtrain",
      params: { loraRank: 2, loraAlpha: 4, lr: 0.01, epochs: 1, batchChains: 4, devFraction: 0.34 },
    },
    {
      id: "sc",
      type: "selfconsistency",
      params: { N: 2, split: "test-concepts", n: 2, maxNewTokens: 4, prm: ["prm"] },
    },
  ],
};

Deno.test({
  name:
    "PRM cells in the page: forms refuse bad values; PRM data, PRM train and PRM best-of-N run in the GPU worker and show their reports",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-prm-page-" });
    await writeVaryingLengthModel(`${dir}/model`, {
      seed: 5,
      eosStrength: 1,
      corpus: await demoCorpus(3, { template: TEMPLATE, splits: ["train", "test-concepts"] }),
    });
    const server = serveOverlay(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1800 } });
      const errors = watchErrors(page);
      await openNotebook(page, server.url, NOTEBOOK);
      const cell = (id: string) => page.locator(`li[data-cell-id="${id}"]`);
      // The forms: a greedy temperature with several chains is refused, with the reason; the old value stays.
      const temp = cell("labels").locator('[data-field="temperature"]');
      await temp.fill("0");
      await temp.dispatchEvent("change");
      const err = cell("labels").locator(".field-error");
      await err.waitFor();
      assert((await err.textContent())?.includes("greedy"), `the reason: ${await err.textContent()}`);
      assert(
        (await cell("prm").locator('[data-field="labels"]').inputValue()) === "process",
        "PRM train labels select",
      );
      assert((await cell("sc").locator('[data-field="prm"]').inputValue()) === "prm", "self-consistency lists its PRM");
      await screenshot(page, "prm-forms");
      await temp.fill("1");
      await temp.dispatchEvent("change");

      await cell("sc").getByTestId("run-cell").click();
      await waitForCell(page, "sc", {
        ms: 900_000,
        onTimeout: async () => void (await screenshot(page, "prm-timeout")),
      });
      const byPos = cell("labels").getByTestId("labels-by-position");
      await byPos.waitFor();
      assert(
        (await cell("labels").getByTestId("first-error-histogram").textContent())?.includes("step 1"),
        "first-error histogram",
      );
      const report = (await cell("prm").getByTestId("prmtrain-report").textContent()) ?? "";
      assert(/\d+ steps? on \d+ chains/.test(report), report);
      assert((await cell("prm").locator("[data-testid=download-file]").count()) === 3, "the PRM folder's three files");
      const atN = (await cell("sc").getByTestId("selection-at-n").textContent()) ?? "";
      assert(atN.includes("PRM prm") && atN.includes("±"), atN);
      await cell("labels").scrollIntoViewIfNeeded();
      await screenshot(page, "prm-reports");
      // onnxruntime-web logs its node-placement notice as a console error (as run.test.ts allows).
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
