// The run viewer on a real run: `rlvr run` trains a tiny random model for two GRPO steps on
// lavapipe, then the page opens its metrics.jsonl and samples.jsonl: the charts draw, a chart
// click jumps the inspector, and a group's samples show their rewards and the gold rows.
import { Buffer } from "node:buffer";
import { assert, assertEquals } from "../assert.ts";
import { decodeSamples } from "../../src/runtime/records.ts";
import {
  tinyDatasetCell,
  tinyPromptCorpus,
  writeTinyDataset,
  writeVaryingLengthModel,
} from "../../src/runtime/recipe/fixtures.deno.ts";
import { launchChromium, screenshot, serveStatic, watchErrors } from "./harness.ts";

const NOTEBOOK = {
  version: 1,
  title: "viewer run",
  cells: [
    tinyDatasetCell({ devFraction: 0.25 }),
    { id: "model", type: "model", params: { source: "url", url: "model", dtype: "f32", loraRank: 4, loraAlpha: 8 } },
    { id: "prompt", type: "prompt", params: { template: "reasoning-answer@1", maxPromptTokens: 1024 } },
    {
      id: "reward",
      type: "reward",
      params: {
        spec: {
          components: [{ name: "execution", weight: 1 }, { name: "error_penalty", weight: 1 }, {
            name: "length",
            weight: 1,
            params: { maxTokens: 2 },
          }],
        },
      },
    },
    {
      id: "grpo",
      type: "grpo",
      params: { G: 4, steps: 2, batchQuestions: 2, maxNewTokens: 4, lr: 0.01, evalEvery: 1, evalN: 2 },
    },
  ],
};

Deno.test({
  name: "run viewer: a real rlvr run's metrics and samples in charts and the reward inspector",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-viewer-" });
    await writeTinyDataset(`${dir}/data`);
    await writeVaryingLengthModel(`${dir}/model`, {
      seed: 3,
      corpus: await tinyPromptCorpus(`${dir}/data`, ["reasoning-answer@1"]),
    });
    await Deno.writeTextFile(`${dir}/nb.json`, JSON.stringify(NOTEBOOK));
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../../src/cli/main.ts", import.meta.url).pathname,
        "run",
        `${dir}/nb.json`,
        "--out",
        `${dir}/out`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(r.code === 0, `rlvr run: ${new TextDecoder().decode(r.stderr).slice(-1500)}`);
    // As a resumed run writes it: the last GRPO step logged again after its checkpoint (the viewer shows it once).
    const metricsText = await Deno.readTextFile(`${dir}/out/metrics.jsonl`);
    const grpoLines = metricsText.split("\n").filter((l) => l.includes('"phase":"grpo"'));
    assert(grpoLines.every((l) => l.includes('"cell":"grpo"')), "records name their cell");
    const metrics = new TextEncoder().encode(metricsText + grpoLines.at(-1) + "\n");
    const samplesText = await Deno.readTextFile(`${dir}/out/samples.jsonl`);
    const samples = decodeSamples(samplesText).records.filter((s) => s.phase === "grpo");
    assert(samples.length > 0, "the run kept sample records");

    const server = serveStatic();
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.getByTestId("run-files").setInputFiles([
        { name: "metrics.jsonl", mimeType: "application/jsonl", buffer: Buffer.from(metrics) },
        { name: "samples.jsonl", mimeType: "application/jsonl", buffer: Buffer.from(samplesText) },
      ]);
      await page.locator("rl-metrics-charts figure canvas").first().waitFor();
      const panels = await page.locator("rl-metrics-charts figure").evaluateAll((els) =>
        els.map((e) => e.getAttribute("data-panel"))
      );
      for (const p of ["rewards", "accuracy", "length", "speed"]) {
        assert(panels.includes(p), `panel ${p} drawn: ${panels}`);
      }
      const held = await page.evaluate(() => {
        const viewer = document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-run-viewer") as unknown as {
          runs: { records: { phase: string; step: number }[] }[];
        } | null;
        return viewer?.runs[0]?.records.filter((r) => r.phase === "grpo").map((r) => r.step) ?? null;
      });
      assertEquals(held, grpoLines.map((l) => JSON.parse(l).step), "the repeated step once");
      // The inspector shows the last step's hardest question with its G samples and the gold rows.
      const lastStep = Math.max(...samples.map((s) => s.step));
      const shown = page.locator("rl-reward-inspector [data-testid=sample]");
      await shown.first().waitFor();
      const qid = await page.getByTestId("inspector-question").inputValue();
      const group = samples.filter((s) => s.step === lastStep && s.taskId === qid);
      assertEquals(await shown.count(), group.length);
      const goldRows = group[0].gold?.rows.length ?? 0;
      assert(goldRows > 0, "gold result present");
      const tables = page.locator("rl-reward-inspector [data-testid=result-table]");
      assert((await tables.count()) >= 1, "a result table is shown");
      // Rewards on the cards are the records' totals.
      const cardText = await shown.first().textContent();
      assert(
        cardText?.includes(group.find((s) => s.sampleIndex === 0)!.reward.total.toFixed(2)),
        `card shows the reward: ${cardText}`,
      );
      await screenshot(page, "run-viewer");
      // A click near the first point of a chart jumps the inspector to that step (interaction
      // mode "nearest": the left part of the plot is nearest to the first step); the slider back.
      const firstStep = Math.min(...samples.map((s) => s.step));
      const shownStep = () =>
        page.evaluate(() => {
          const insp = document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-run-viewer")?.shadowRoot
            ?.querySelector("rl-reward-inspector");
          return insp?.shadowRoot?.querySelector(".controls strong")?.textContent ?? null;
        });
      assertEquals(await shownStep(), String(lastStep));
      const canvas = page.locator('rl-metrics-charts figure[data-panel="rewards"] canvas');
      const box = await canvas.boundingBox();
      assert(box, "chart canvas has a size");
      await canvas.click({ position: { x: box.width * 0.3, y: box.height * 0.6 } });
      await page.waitForFunction((step) => {
        const insp = document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-run-viewer")?.shadowRoot
          ?.querySelector("rl-reward-inspector");
        return insp?.shadowRoot?.querySelector(".controls strong")?.textContent === String(step);
      }, firstStep);
      const steps = [...new Set(samples.map((s) => s.step))].length;
      await page.getByTestId("inspector-step").fill(String(steps - 1));
      assertEquals(await shownStep(), String(lastStep));
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
