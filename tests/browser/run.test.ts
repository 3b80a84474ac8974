// Running cells in the page (SwiftShader WebGPU): the built-in notebook with a tiny random model
// served where the demo model lives (`model/`), written at test time by the project's own code.
// An evaluate cell runs in the GPU worker (policy on onnxruntime-web, SQL in nested workers) and
// its samples open in the reward inspector with the gold rows; a GRPO cell starts, the page is
// reloaded mid-run, and the run resumes from its checkpoint (step counter and metrics continue).
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { demoCorpus } from "./fixtures.ts";
import { launchChromium, openNotebook, ROOT, screenshot, serveOverlay, waitForCell, watchErrors } from "./harness.ts";

/** The built-in notebook with laptop-test sizes: 2 questions per split, short completions, no warm-up. */
function smallDemo(): unknown {
  const cells = demo.cells.filter((c) => c.type !== "warmup").map((c) => {
    switch (c.id) {
      case "data":
        return { ...c, params: { ...c.params, limit: 2 } };
      case "base-concepts":
        return { ...c, params: { ...c.params, k: 1, n: 2, maxNewTokens: 4 } };
      case "grpo":
        return { ...c, params: { ...c.params, G: 2, batchQuestions: 1, steps: 4, maxNewTokens: 4, evalEvery: 0 } };
      default:
        return c;
    }
  });
  return { ...demo, cells };
}

Deno.test({
  name: "run in the page: evaluate → inspector rows; GRPO survives a reload and resumes from its checkpoint",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-run-page-" });
    await writeVaryingLengthModel(`${dir}/model`, { seed: 5, corpus: await demoCorpus(2) });
    const server = serveOverlay(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
      const errors = watchErrors(page);
      await openNotebook(page, server.url, smallDemo());
      const cell = (id: string) => page.locator(`li[data-cell-id="${id}"]`);
      // Nothing runs by itself on a fresh page.
      assertEquals(await cell("base-concepts").getByTestId("run-status").getAttribute("data-status"), "idle");

      // Evaluate: accuracy table, then the inspector with a sample's gold rows.
      await cell("base-concepts").getByTestId("run-cell").click();
      const done = (id: string, ms: number) => waitForCell(page, id, { ms });
      await done("base-concepts", 240_000);
      const table = cell("base-concepts").getByTestId("accuracy-table");
      assert((await table.textContent())?.includes("overall"), "accuracy table shown");
      const dbg = await page.evaluate(() => {
        const nb = document.querySelector("rl-notebook") as unknown as {
          runs: { log: string[]; state(id: string): { metrics: unknown[]; samples: unknown[] } };
        };
        const s = nb.runs.state("base-concepts");
        return { metrics: s.metrics.length, samples: s.samples.length, log: nb.runs.log };
      });
      assertEquals([dbg.metrics, dbg.samples], [1, 2], JSON.stringify(dbg));
      await cell("base-concepts").getByTestId("open-inspector").click();
      const samples = cell("base-concepts").locator("rl-reward-inspector [data-testid=sample]");
      await samples.first().waitFor();
      const gold = cell("base-concepts").locator("rl-reward-inspector [data-testid=result-table]");
      assert((await gold.count()) >= 1, "the sample shows the gold result");
      assert(((await gold.first().locator("tr").count()) ?? 0) >= 2, "gold rows shown (header + rows)");
      await screenshot(page, "run-evaluate");

      // GRPO: start, wait for a checkpointed step, reload mid-run.
      await cell("grpo").getByTestId("run-cell").click();
      // The progress line names the step in progress ("step 2/4: sampling ..."): once it is at step
      // 2 or later, step 1 is done and checkpointed.
      const msg = cell("grpo").getByTestId("progress-message");
      await msg.waitFor({ timeout: 240_000 });
      let at = 0;
      for (const t0 = Date.now(); Date.now() - t0 < 240_000; await new Promise((r) => setTimeout(r, 200))) {
        at = Number(/step (\d+)\/4/.exec((await msg.textContent().catch(() => "")) ?? "")?.[1] ?? 0);
        if (at >= 2) break;
      }
      const before = at - 1;
      assert(before >= 1 && before < 4, `reload mid-run (after step ${before})`);
      await page.reload();
      const banner = page.getByTestId("run-banner");
      await banner.waitFor({ timeout: 120_000 }).catch(async (e) => {
        await screenshot(page, "run-reload-no-banner");
        const runs = await page.evaluate(async () => {
          const nb = document.querySelector("rl-notebook") as unknown as {
            runs: { api: { listRuns(): Promise<unknown> } };
          };
          return JSON.stringify(await nb.runs.api.listRuns());
        }).catch((x) => String(x));
        throw new Error(`no resume banner after the reload; runs in storage: ${runs}`, { cause: e });
      });
      const bannerText = (await banner.textContent()) ?? "";
      const from = Number(/from step (\d+)/.exec(bannerText)?.[1]);
      assert(from >= before, `banner: ${bannerText}`);
      await screenshot(page, "run-grpo-after-reload");
      // The evaluate cell's output of the earlier run is back too (outputs.json in the run folder).
      await cell("base-concepts").getByTestId("accuracy-table").waitFor({ timeout: 30_000 });
      await done("grpo", 240_000);
      const report = (await cell("grpo").getByTestId("grpo-report").textContent()) ?? "";
      assert(report.includes(`resumed from step ${from}`), `report: ${report}`);
      // The step counter continued and the charts hold every step once (loaded ones + new ones).
      const steps = await page.evaluate(() => {
        const nb = document.querySelector("rl-notebook") as unknown as {
          runs: { state(id: string): { metrics: { phase: string; step: number }[]; samples: { step: number }[] } };
        };
        const s = nb.runs.state("grpo");
        return {
          metrics: s.metrics.filter((r) => r.phase === "grpo").map((r) => r.step),
          samples: [...new Set(s.samples.map((r) => r.step))],
        };
      });
      assertEquals([...new Set(steps.metrics)].sort(), [1, 2, 3, 4]);
      assertEquals(steps.samples.sort(), [1, 2, 3, 4]);
      await cell("grpo").locator("rl-metrics-charts figure canvas").first().waitFor();
      await screenshot(page, "run-grpo-resumed");

      // Export: the adapter in PEFT format, written to the run folder (OPFS) and downloaded from the cell.
      await cell("export").getByTestId("run-cell").click();
      await done("export", 240_000);
      const file = cell("export").locator(
        '[data-testid=download-file][data-file$="adapter/adapter_model.safetensors"]',
      );
      const [download] = await Promise.all([page.waitForEvent("download"), file.click()]);
      assertEquals(download.suggestedFilename(), "export_export_adapter_adapter_model.safetensors");
      const bytes = await Deno.readFile(await download.path());
      const n = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
      const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<
        string,
        { shape: number[]; data_offsets: [number, number] }
      >;
      const names = Object.keys(header).filter((k) => k !== "__metadata__");
      // PEFT's names, A and B for every layer and target, and the file ends where the last tensor does.
      assert(
        names.length > 0 &&
          names.every((k) => /^base_model\.model\.model\.layers\.\d+\..+\.lora_[AB]\.weight$/.test(k)),
        names.slice(0, 3).join(", "),
      );
      assertEquals(
        names.filter((k) => k.endsWith("lora_A.weight")).length,
        names.filter((k) => k.endsWith("lora_B.weight")).length,
      );
      assertEquals(8 + n + Math.max(...names.map((k) => header[k].data_offsets[1])), bytes.length);
      const config = cell("export").locator('[data-testid=download-file][data-file$="adapter/adapter_config.json"]');
      const [cfgDownload] = await Promise.all([page.waitForEvent("download"), config.click()]);
      const cfg = JSON.parse(await Deno.readTextFile(await cfgDownload.path()));
      assertEquals([cfg.peft_type, cfg.r, cfg.lora_alpha], ["LORA", 16, 32]);
      await cell("export").scrollIntoViewIfNeeded();
      await cell("export").screenshot({ path: `${ROOT}/test-results/run-export.png` });
      // onnxruntime-web prints its node-placement note (shape ops on the CPU, docs/policy.md) through console.error.
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
