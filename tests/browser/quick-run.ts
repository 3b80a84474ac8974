// Not a test: runs the built-in demo's quick version end to end in headless Chromium (WebGPU on whatever
// adapter Chromium finds: SwiftShader on a machine without a GPU) and logs, as they happen, each cell's
// status changes with the wall time, the CPU seconds of this Chromium's processes and the load average;
// at the end each cell's progress log (its phases and their times) and screenshots of the plan and of
// the before/after picture under test-results/. Too long for the suite on SwiftShader (docs/running.md,
// "A plan before Run all", has the figure it measured); run it by hand after `npx vite build`:
//
//   node_modules/deno/deno run -A tests/browser/quick-run.ts [DIST] [TAG]
import demo from "../../notebooks/demo.json" with { type: "json" };
import { ARTIFACTS, DIST, launchChromium, openNotebook, serveStatic, watchErrors } from "./harness.ts";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const dist = Deno.args[0] ?? DIST;
const tag = Deno.args[1] ?? "quick-run";
mkdirSync(ARTIFACTS, { recursive: true });
const logFile = join(ARTIFACTS, `${tag}.log`);
const log = (s: string) => {
  const line = `${new Date().toISOString().slice(11, 19)} ${s}`;
  console.log(line);
  Deno.writeTextFileSync(logFile, line + "\n", { append: true });
};

const TICK = 100; // USER_HZ on Linux
/** Whether `pid` descends from this process (its Chromium, not another test's). */
function mine(pid: number): boolean {
  for (let p = pid, i = 0; p > 1 && i < 20; i++) {
    if (p === Deno.pid) return true;
    try {
      p = Number(Deno.readTextFileSync(`/proc/${p}/stat`).split(") ")[1].split(" ")[1]);
    } catch {
      return false;
    }
  }
  return false;
}
/** CPU seconds (user + system) of this process's Chromium processes so far. */
function chromiumCpu(): number {
  let t = 0;
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name) || !mine(Number(e.name))) continue;
    try {
      if (!/chrom/i.test(Deno.readTextFileSync(`/proc/${e.name}/comm`))) continue;
      const f = Deno.readTextFileSync(`/proc/${e.name}/stat`).split(") ")[1].split(" ");
      t += (Number(f[11]) + Number(f[12])) / TICK;
    } catch { /* the process ended */ }
  }
  return t;
}
const load = () => Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

const server = serveStatic(dist);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
  const errors = watchErrors(page);
  const t0 = Date.now();
  let cpu0 = chromiumCpu();
  const at = () =>
    `t=${((Date.now() - t0) / 1000).toFixed(0)}s cpu=${(chromiumCpu() - cpu0).toFixed(0)}s load=${load()}`;
  await openNotebook(page, server.url, demo);
  await page.locator("li[data-cell-type=gpu]").getByTestId("gpu-info").waitFor({ timeout: 120_000 });
  await page.getByTestId("run-all").click();
  await page.getByTestId("run-plan").waitFor({ timeout: 300_000 });
  log(
    `plan (${at()}): full ${await page.getByTestId("plan-full").textContent()}, quick ${await page.getByTestId(
      "plan-quick",
    ).textContent()}`,
  );
  log(`gives up: ${(await page.getByTestId("plan-gives-up").locator("li").allTextContents()).join(" | ")}`);
  await page.screenshot({ path: join(ARTIFACTS, `${tag}-plan.png`) });
  const tRun = Date.now();
  cpu0 = chromiumCpu();
  await page.getByTestId("run-quick").click();
  const seen = new Map<string, string>();
  let last = "";
  while (!(await page.getByTestId("run-ended").count())) {
    const cells = await page.locator("li[data-cell-id]").evaluateAll((els) => {
      // The run bar sits in the cell's rl-cell-run, behind its shadow root.
      const find = (root: Element | ShadowRoot, id: string): Element | null => {
        const hit = root.querySelector(`[data-testid=${id}]`);
        if (hit) return hit;
        for (const el of root.querySelectorAll("*")) {
          const inner = el.shadowRoot ? find(el.shadowRoot, id) : null;
          if (inner) return inner;
        }
        return null;
      };
      return els.map((e) => [
        e.getAttribute("data-cell-id") ?? "",
        find(e, "run-status")?.getAttribute("data-status") ?? "",
        (find(e, "progress-message")?.textContent ?? "").replace(/\s+/g, " ").slice(0, 160),
      ]);
    });
    for (const [id, st] of cells) {
      if (seen.get(id) !== st) log(`cell ${id} -> ${st} (${at()}, run ${((Date.now() - tRun) / 1000).toFixed(0)} s)`);
      seen.set(id, st);
    }
    // A new phase (a line that differs in more than its numbers) gets a line of its own.
    const now = cells.filter(([, s]) => s === "running").map(([id, , m]) => `${id}: ${m}`).join(" ; ");
    if (now.replace(/\d+/g, "#") !== last.replace(/\d+/g, "#")) log(`  ${now} (${at()})`);
    last = now;
    await page.waitForTimeout(3000);
  }
  log(
    `ended: ${await page.getByTestId("run-ended-text").textContent()} — wall ${
      ((Date.now() - tRun) / 1000).toFixed(0)
    } s, Chromium CPU ${(chromiumCpu() - cpu0).toFixed(0)} s, load ${load()}`,
  );
  for (const id of seen.keys()) {
    const rows = await page.locator(`li[data-cell-id="${id}"]`).getByTestId("progress-history").locator(
      "[data-testid=progress-entry]",
    ).allTextContents();
    if (rows.length) log(`progress log of ${id}:\n    ${rows.map((r) => r.replace(/\s+/g, " ")).join("\n    ")}`);
  }
  const results = page.getByTestId("demo-results");
  await results.waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(ARTIFACTS, `${tag}-end.png`) });
  await results.screenshot({ path: join(ARTIFACTS, `${tag}-results.png`) });
  log(`before/after table: ${(await page.getByTestId("results-table").textContent())?.replace(/\s+/g, " ")}`);
  log(
    `page errors: ${errors.filter((e) => !/onnxruntime|VerifyEachNodeIsAssignedToAnEp/.test(e)).join(" | ") || "none"}`,
  );
} finally {
  await browser.close();
  await server.close();
}
