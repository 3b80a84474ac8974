// The run viewer comparing runs (issue 48, items 5 and 6): three seeds of the knowledge-mode demo,
// written before records named their cell, opened as one folder of run folders. Held-out accuracy
// runs forward on a 0-100 % axis, throughput is not flattened by scoring, runs are named by their
// folders with a colour each, and the viewer smooths, hides, averages seeds, zooms and exports.
import { mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Page } from "playwright-core";
import { assert, assertEquals } from "../assert.ts";
import { ARTIFACTS, launchChromium, serveStatic, watchErrors } from "./harness.ts";

/** The run viewer alone (the page above it is the notebook), under test-results/. */
async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.locator("rl-run-viewer").screenshot({ path: `${ARTIFACTS}/${name}.png` });
}

const RUNS = fileURLToPath(new URL("./fixtures/old-runs", import.meta.url));

type Ds = { label: string; run?: string; series?: string; band?: boolean; data: { x: number; y: number }[] };
type ChartInfo = { datasets: Ds[]; x: { min: number; max: number }; y: { min: number; max: number }; legend: boolean };

/** The datasets and axes a panel's chart draws (the element's charts, read through its shadow roots). */
function chartOf(page: Page, panel: string): Promise<ChartInfo | null> {
  return page.evaluate((id) => {
    const viewer = document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-run-viewer");
    const el = viewer?.shadowRoot?.querySelector("rl-metrics-charts") as unknown as
      | { charts: Map<string, unknown> }
      | null;
    const c = el?.charts.get(id) as {
      data: { datasets: Ds[] };
      scales: Record<string, { min: number; max: number }>;
      options: { plugins: { legend: { display: boolean } } };
    } | undefined;
    if (!c) return null;
    return {
      datasets: c.data.datasets.map((d) => ({
        label: d.label,
        run: d.run,
        series: d.series,
        band: d.band,
        data: d.data.map((p) => ({ x: p.x, y: p.y })),
      })),
      x: { min: c.scales.x.min, max: c.scales.x.max },
      y: { min: c.scales.y.min, max: c.scales.y.max },
      legend: c.options.plugins.legend.display !== false,
    };
  }, panel);
}

Deno.test({
  name:
    "run viewer: issue 48 — old evidence runs read forward, on a percent axis, named and compared (smooth, hide, mean of seeds, zoom, export)",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const server = serveStatic(Deno.env.get("RLVR_TEST_DIST") || undefined);
    const browser = await launchChromium({ webgpu: false });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1200 }, acceptDownloads: true });
      const errors = watchErrors(page);
      await page.goto(server.url);
      await page.getByTestId("run-folders").setInputFiles(RUNS);
      const fig = (id: string) => page.locator(`rl-metrics-charts figure[data-panel="${id}"]`);
      await fig("accuracy").locator("canvas").waitFor();

      // These runs kept no samples: the inspector says so rather than "no samples yet".
      assert((await page.getByTestId("no-samples").innerText()).includes("run-knowledge-s3 has no samples.jsonl"));
      // Runs named by their folders, one colour each, in one legend above the charts (no per-chart legends).
      const names = await page.getByTestId("run-toggle").evaluateAll((els) =>
        els.map((e) => e.getAttribute("data-run"))
      );
      assertEquals(names, ["run-knowledge-s1", "run-knowledge-s2", "run-knowledge-s3"]);

      // Item 5: held-out accuracy is the GRPO cell's checks, x increasing; the axis is 0-100 %.
      const acc = (await chartOf(page, "accuracy"))!;
      assertEquals(acc.legend, false, "no chart.js legend inside the plot");
      assertEquals([acc.y.min, acc.y.max], [0, 1]);
      const held = acc.datasets.filter((d) => d.series === "held-out (greedy)" && !d.band);
      assertEquals(held.length, 3);
      for (const d of held) {
        const xs = d.data.map((p) => p.x);
        assertEquals(xs, [...xs].sort((a, b) => a - b), `${d.label} runs forward`);
        assert(xs[0] >= 10, `${d.label}: no evaluation indices 0-8 among the training steps: ${xs}`);
      }
      assertEquals(new Set(acc.datasets.map((d) => d.run)).size, 3);
      // Scoring has its own panel: the throughput axis is no longer stretched to millions of "tokens/s".
      const speed = (await chartOf(page, "speed"))!;
      assertEquals([...new Set(speed.datasets.map((d) => d.series))], ["sample"]);
      assert(speed.y.max < 5_000, `sampling axis up to ${speed.y.max}`);
      assert(await fig("train-speed").count() === 1, "training speed panel");
      assert(await fig("score-time").count() === 1, "scoring time panel");

      // The evaluate cells by name, 0-100 %: baseline 1 % on the concepts split in every seed.
      const evals = (await chartOf(page, "evaluations"))!;
      assertEquals([evals.y.min, evals.y.max], [0, 1]);
      const ticks = await page.evaluate(() => {
        const viewer = document.querySelector("rl-notebook")?.shadowRoot?.querySelector("rl-run-viewer");
        const el = viewer?.shadowRoot?.querySelector("rl-metrics-charts") as unknown as {
          charts: Map<string, { scales: { x: { ticks: { label: string }[] } } }>;
        };
        return el.charts.get("evaluations")!.scales.x.ticks.map((t) => t.label);
      });
      assertEquals(ticks[0], "base-concepts");
      assertEquals(ticks[6], "after-concepts");
      for (const d of evals.datasets) assertEquals(Math.round(d.data[0].y * 100), 1);
      await fig("accuracy").scrollIntoViewIfNeeded();
      await shot(page, "run-compare-runs");

      // Mean and spread over the three seeds: baseline 1 % -> after GRPO 22.6 % on the concepts split.
      await page.getByTestId("mean-seeds").check();
      const mean = (await chartOf(page, "evaluations"))!;
      const line = mean.datasets.filter((d) => !d.band);
      assertEquals(line.map((d) => d.label), ["run-knowledge (mean of 3): evaluate cells"]);
      assertEquals(Math.round(line[0].data[0].y * 100), 1);
      assertEquals(Math.round(line[0].data[6].y * 1000) / 10, 22.6);
      assertEquals(mean.datasets.filter((d) => d.band).length, 2, "lowest and highest run");
      // The same figures as a table under the chart, to quote: baseline 1.0 % -> after GRPO 22.6 %.
      const table = fig("evaluations").getByTestId("panel-table");
      const cellText = (row: number, col: number) =>
        table.locator("tr").nth(row).locator("th, td").nth(col).innerText();
      assertEquals(await cellText(0, 1), "base-concepts");
      assertEquals(await cellText(1, 0), "run-knowledge (mean of 3)");
      assertEquals(await cellText(1, 1), "1.0%");
      assertEquals(await cellText(1, 7), "22.6%");
      await shot(page, "run-compare-mean");
      await page.getByTestId("mean-seeds").uncheck();

      // Hide a run: its lines leave every chart.
      await page.locator('[data-testid=run-toggle][data-run="run-knowledge-s2"]').uncheck();
      const hidden = (await chartOf(page, "rewards"))!;
      assert(!hidden.datasets.some((d) => d.run === "run-knowledge-s2"), "s2 hidden");
      assert(hidden.datasets.some((d) => d.run === "run-knowledge-s3"), "s3 shown");
      await page.locator('[data-testid=run-toggle][data-run="run-knowledge-s2"]').check();

      // Series chosen per chart: the rewards chart without "error_penalty".
      await fig("rewards").locator('[data-testid=series-picker] button[data-series="error_penalty · grpo"]').click();
      const picked = (await chartOf(page, "rewards"))!.datasets;
      assert(!picked.some((d) => d.series === "error_penalty · grpo"), "series hidden in its chart");
      assert(picked.some((d) => d.series === "total · grpo"), "the others stay");

      // Smoothing: the smoothed line differs from the raw one (drawn faint behind it).
      const raw = (await chartOf(page, "rewards"))!.datasets.find((d) =>
        d.run === "run-knowledge-s1" && d.series === "total · grpo"
      )!.data;
      await page.getByTestId("smoothing").fill("0.9");
      const sm = (await chartOf(page, "rewards"))!.datasets.filter((d) =>
        d.run === "run-knowledge-s1" && d.series === "total · grpo"
      );
      assertEquals(sm.length, 2, "raw (faint) and smoothed");
      const smoothed = sm.find((d) =>
        !d.band
      )!.data;
      assertEquals(smoothed.length, raw.length);
      assert(smoothed.some((p, i) => Math.abs(p.y - raw[i].y) > 1e-6), "smoothed");
      await page.getByTestId("smoothing").fill("0");

      // Zoom: a drag across the rewards chart narrows its x axis; Reset zoom restores it.
      const box = (await fig("rewards").locator("canvas").boundingBox())!;
      const before = (await chartOf(page, "rewards"))!.x;
      await page.mouse.move(box.x + box.width * 0.4, box.y + box.height * 0.5);
      await page.mouse.down();
      await page.mouse.move(box.x + box.width * 0.7, box.y + box.height * 0.5, { steps: 5 });
      await page.mouse.up();
      const zoomed = (await chartOf(page, "rewards"))!.x;
      assert(
        zoomed.min > before.min && zoomed.max < before.max,
        `zoomed ${JSON.stringify(before)} -> ${JSON.stringify(zoomed)}`,
      );
      await fig("rewards").getByTestId("zoom-reset").click();
      assertEquals((await chartOf(page, "rewards"))!.x, before);

      // Export: the chart as PNG, its data as CSV.
      const [png] = await Promise.all([
        page.waitForEvent("download"),
        fig("evaluations").getByTestId("export-png").click(),
      ]);
      assertEquals(png.suggestedFilename(), "evaluations.png");
      const pngBytes = readFileSync((await png.path())!);
      assertEquals([...pngBytes.subarray(1, 4)].map((b) => String.fromCharCode(b)).join(""), "PNG");
      const [csv] = await Promise.all([
        page.waitForEvent("download"),
        fig("evaluations").getByTestId("export-csv").click(),
      ]);
      const text = readFileSync((await csv.path())!, "utf8");
      assertEquals(text.split("\n")[0], "run,series,cell,correct");
      assert(text.includes("run-knowledge-s3,evaluate cells,after-concepts,"), text.slice(0, 200));

      // Nothing wider than the page, at 1280 and at 800 px.
      for (const width of [1280, 800]) {
        await page.setViewportSize({ width, height: 1200 });
        await page.waitForTimeout(300);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        assert(overflow <= 0, `at ${width}px the page scrolls sideways by ${overflow}px`);
      }
      await shot(page, "run-compare-800");
      assert(errors.length === 0, `no page errors: ${errors.join("; ")}`);
    } finally {
      await browser.close();
      await server.close();
    }
  },
});
