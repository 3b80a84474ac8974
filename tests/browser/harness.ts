// Shared set-up of browser tests: a static server over the built app (dist/) on 127.0.0.1 and
// the system Chromium driven by playwright-core, with WebGPU on (SwiftShader on a CPU machine).
import { type Browser, chromium, type Page } from "playwright-core";
import { existsSync, mkdirSync } from "node:fs";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const DIST = join(ROOT, "dist");
export const ARTIFACTS = join(ROOT, "test-results");

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".sqlite": "application/vnd.sqlite3",
};

/** Serves `dir` on a free loopback port; returns its base URL and a shutdown function. */
export function serveStatic(dir = DIST): { url: string; close: () => Promise<void> } {
  if (!existsSync(join(dir, "index.html"))) {
    throw new Error(`${dir}/index.html is missing: run vite build first (npm test does)`);
  }
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = normalize(decodeURIComponent(new URL(req.url).pathname)).replace(/^(\.\.[/\\])+/, "");
    let file = join(dir, path === "/" ? "index.html" : path);
    if (!existsSync(file)) file = join(dir, "index.html");
    try {
      const body = await Deno.readFile(file);
      return new Response(body, {
        headers: {
          "content-type": TYPES[extname(file)] ?? "application/octet-stream",
          // Cross-origin isolation lets onnxruntime-web use threads, as `vite` does in development.
          "cross-origin-opener-policy": "same-origin",
          "cross-origin-embedder-policy": "require-corp",
        },
      });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  const addr = server.addr as Deno.NetAddr;
  return { url: `http://127.0.0.1:${addr.port}/`, close: () => server.shutdown() };
}

/** Serves dist/ with `overlay` on top (a model folder at model/, say); a missing model file is a 404. */
export function serveOverlay(overlay: string): { url: string; close: () => Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = normalize(decodeURIComponent(new URL(req.url).pathname)).replace(/^(\.\.[/\\])+/, "");
    const over = join(overlay, path);
    let file = existsSync(over) && path !== "/" ? over : join(DIST, path === "/" ? "index.html" : path);
    if (!existsSync(file)) {
      if (path.startsWith("/model/")) return new Response("not found", { status: 404 });
      file = join(DIST, "index.html");
    }
    const body = await Deno.readFile(file);
    return new Response(body, { headers: { "content-type": TYPES[extname(file)] ?? "application/octet-stream" } });
  });
  return { url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`, close: () => server.shutdown() };
}

/**
 * Dawn features the tests' Chromium turns off (never the product): Dawn zero-initializes WGSL
 * workgroup memory through VK_KHR_zero_initialize_workgroup_memory where the driver has it, and
 * SwiftShader compiles that in time growing with the workgroup arrays (seconds per pipeline;
 * docs/upstream.md). Off, Tint zeroes the memory in the shader: the same WGSL semantics. The `dawn`
 * kind of `npm test` turns off the same toggle (`DAWN_TEST_TOGGLES` in scripts/test.mjs).
 */
export const CHROMIUM_TEST_DAWN_TOGGLES = ["use_vulkan_zero_initialize_workgroup_memory_extension"];

/** Launches the system Chromium; `webgpu: false` leaves WebGPU off to test the fallback. */
export function launchChromium(opts: { webgpu?: boolean } = {}): Promise<Browser> {
  const { webgpu = true } = opts;
  return chromium.launch({
    executablePath: Deno.env.get("CHROME_PATH") || "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      ...(webgpu
        ? ["--enable-unsafe-webgpu", `--disable-dawn-features=${CHROMIUM_TEST_DAWN_TOGGLES.join(",")}`]
        : ["--disable-features=WebGPU", "--disable-gpu"]),
    ],
  });
}

/** Seeds the page's autosave with `nb` once per tab (a reload keeps what the page saved since), then opens `url`. */
export async function openNotebook(page: Page, url: string, nb: unknown): Promise<void> {
  await page.addInitScript((text) => {
    if (!sessionStorage.getItem("seeded")) {
      localStorage.setItem("rlvr-notebook-autosave", text);
      sessionStorage.setItem("seeded", "1");
    }
  }, JSON.stringify(nb));
  await page.goto(url);
}

/** Collects page errors and console errors, so a test can assert there were none. */
export function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  return errors;
}

/** Saves a screenshot under test-results/ and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Clicks cell `id`'s Run button once the GPU cell above it has filled in (its adapter table grows
 * the page while it loads, and a click during that shift can land beside the button), then checks
 * that the click started a run: the cell leaves "idle" (waiting behind the cells it needs, or
 * running) within `ms`.
 */
export async function clickRun(page: Page, id: string, ms = 30_000): Promise<void> {
  if (await page.locator("li[data-cell-type=gpu]").count()) {
    await page.locator("li[data-cell-type=gpu]").locator("[data-testid=gpu-info], [data-testid=no-webgpu]").first()
      .waitFor({ timeout: ms });
  }
  const cell = page.locator(`li[data-cell-id="${id}"]`);
  await cell.getByTestId("run-cell").click();
  const t0 = Date.now();
  for (;;) {
    const s = await cell.getByTestId("run-status").getAttribute("data-status");
    if (s !== "idle") return;
    if (Date.now() - t0 > ms) throw new Error(`cell ${id}: its Run click started no run (still idle after ${ms} ms)`);
    await page.waitForTimeout(100);
  }
}

/**
 * Polls cell `id`'s run status (`data-status` of its run-status badge) until it is `want` (default
 * "done"). "failed", or "stopped" when that is not what is awaited, throws with the cell's error text
 * (else every cell error on the page); so does the deadline, after `onTimeout` (a screenshot, say),
 * whose text is added to the message.
 */
export async function waitForCell(
  page: Page,
  id: string,
  opts: { want?: string; ms: number; every?: number; onTimeout?: () => Promise<string | void> },
): Promise<void> {
  const want = opts.want ?? "done";
  const cell = page.locator(`li[data-cell-id="${id}"]`);
  const why = async () => {
    const own = cell.getByTestId("cell-error");
    return (await own.count())
      ? ((await own.first().textContent()) ?? "")
      : (await page.locator("[data-testid=cell-error]").allTextContents()).join(" | ");
  };
  // A run that fails in a cell before this one (the model cell, say) leaves this one idle: the cells
  // that were not failed when the wait began and are now say so at once, with their errors.
  const statuses = () =>
    page.locator("li[data-cell-id]").evaluateAll((els) => {
      // The run bar sits in the cell's rl-cell-run, behind its shadow root.
      const find = (root: Element | ShadowRoot): Element | null => {
        const hit = root.querySelector("[data-testid=run-status]");
        if (hit) return hit;
        for (const el of root.querySelectorAll("*")) {
          const inner = el.shadowRoot ? find(el.shadowRoot) : null;
          if (inner) return inner;
        }
        return null;
      };
      return els.map((e) =>
        [e.getAttribute("data-cell-id") ?? "", find(e)?.getAttribute("data-status") ?? ""] as const
      );
    });
  const failedBefore = new Set((await statuses()).filter(([, s]) => s === "failed").map(([c]) => c));
  const t0 = Date.now();
  for (;;) {
    const s = await cell.getByTestId("run-status").getAttribute("data-status");
    if (s === want) return;
    if (s === "failed" || (s === "stopped" && want !== "stopped")) throw new Error(`cell ${id} ${s}: ${await why()}`);
    const others = (await statuses()).filter(([c, st]) => c !== id && st === "failed" && !failedBefore.has(c));
    if (others.length && want !== "failed") {
      const errs = await Promise.all(
        others.map(async ([c]) =>
          `${c}: ${
            (await page.locator(`li[data-cell-id="${c}"] [data-testid=cell-error]`).allTextContents()).join(" | ")
          }`
        ),
      );
      throw new Error(
        `cell ${id} ${s}: the run failed in ${others.map(([c]) => c).join(", ")} — ${
          errs.join("; ").replace(/\s+/g, " ")
        }`,
      );
    }
    if (Date.now() - t0 > opts.ms) {
      const extra = opts.onTimeout ? await opts.onTimeout() : undefined;
      const all = (await statuses()).map(([c, st]) => `${c} ${st}`).join(", ");
      throw new Error(`cell ${id} still ${s} after ${opts.ms} ms (cells: ${all})${extra ? `; ${extra}` : ""}`);
    }
    await page.waitForTimeout(opts.every ?? 250);
  }
}
