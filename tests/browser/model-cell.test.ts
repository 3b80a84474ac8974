// The model cell in the page (SwiftShader WebGPU): Stop while the model's weights are still coming
// (the server holds them back, so only the abort can end the load) shows "stopped"; running the
// cell again loads the tiny model and the cell shows what it loaded (architecture, layers, hidden
// size, parameters, vocabulary, dtype, LoRA, provider, trainer projections, context, time, bytes).
import { existsSync } from "node:fs";
import { extname, join, normalize } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { DIST, launchChromium, screenshot, waitForCell, watchErrors } from "./harness.ts";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".mjs": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

/** Serves dist/ with the tiny model at model/; the first request for the weights waits until `release()`. */
function serveHeld(overlay: string) {
  let release = () => {};
  const held = new Promise<void>((r) => (release = r));
  let weightGets = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = normalize(decodeURIComponent(new URL(req.url).pathname)).replace(/^(\.\.[/\\])+/, "");
    if (path === "/model/model.safetensors" && req.method === "GET" && weightGets++ === 0) await held;
    const over = join(overlay, path);
    let file = existsSync(over) && path !== "/" ? over : join(DIST, path === "/" ? "index.html" : path);
    if (!existsSync(file)) {
      if (path.startsWith("/model/")) return new Response("not found", { status: 404 });
      file = join(DIST, "index.html");
    }
    return new Response(await Deno.readFile(file), {
      headers: { "content-type": TYPES[extname(file)] ?? "application/octet-stream" },
    });
  });
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`,
    release,
    close: () => (release(), server.shutdown()),
  };
}

Deno.test({
  name: "run in the page: Stop while the model loads; the model cell then shows what it loaded",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-model-cell-" });
    await writeVaryingLengthModel(`${dir}/model`, { seed: 5 });
    const server = serveHeld(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1100, height: 1100 } });
      const errors = watchErrors(page);
      const nb = JSON.stringify({
        ...demo,
        cells: demo.cells.filter((c) => ["intro", "data", "model"].includes(c.id)),
      });
      await page.addInitScript((text) => localStorage.setItem("rlvr-notebook-autosave", text), nb);
      await page.goto(server.url);
      const cell = page.locator(`li[data-cell-id="model"]`);
      const until = (want: string, ms: number) => waitForCell(page, "model", { want, ms, every: 200 });

      // 1. Stop while the weights are held back by the server: only the abort can end this load.
      await cell.getByTestId("run-cell").click();
      await until("running", 60_000);
      await cell.getByTestId("progress-message").waitFor({ timeout: 60_000 });
      await page.waitForTimeout(500);
      const loading = (await cell.getByTestId("progress-message").textContent()) ?? "";
      await cell.getByTestId("stop-cell").click();
      await until("stopped", 60_000);
      const err = cell.getByTestId("cell-error");
      assertEquals(await err.getAttribute("data-kind"), "cancelled");
      assert(((await err.textContent()) ?? "").includes("stopped by the user"), `error: ${await err.textContent()}`);
      assertEquals(await cell.getByTestId("model-summary").count(), 0);
      console.log(`stopped during "${loading}"`);
      await screenshot(page, "model-cell-stopped");

      // 2. Again, with the weights served: the summary of what was loaded.
      server.release();
      await cell.getByTestId("run-cell").click();
      await until("done", 240_000);
      const table = cell.getByTestId("model-summary");
      await table.waitFor();
      const rows = Object.fromEntries(
        await table.locator("tr").evaluateAll((trs) =>
          trs.map((tr) => [tr.querySelector("th")?.textContent ?? "", tr.querySelector("td")?.textContent ?? ""])
        ),
      );
      console.log(JSON.stringify(rows, null, 1));
      assert(rows["model"]?.startsWith("demo ("), rows["model"]);
      assert(/^qwen2, 2 layers, hidden 48$/.test(rows["architecture"] ?? ""), rows["architecture"]);
      assert(/^\d+(\.\d)?k$/.test(rows["parameters"] ?? ""), rows["parameters"]);
      assertEquals(rows["weights as run"], "f32: f32 weights, f32 compute");
      assertEquals(rows["LoRA"], "rank 16, alpha 32 on q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj");
      assert(["webgpu", "wasm"].includes(rows["policy runs on"] ?? ""), rows["policy runs on"]);
      assert(["f32", "f16"].includes(rows["trainer projections"] ?? ""), rows["trainer projections"]);
      assertEquals(rows["context length"], "2048 tokens (max positions 2048)");
      // The load time and where it went: the phases of 0.1 s or more, the shader compilation among them.
      assert(/^\d+\.\d s \(.*shader compilation \d+\.\d s.*\)$/.test(rows["load time"] ?? ""), rows["load time"]);
      assert(/fetched over HTTP/.test(rows["files"] ?? ""), rows["files"]);
      await screenshot(page, "model-cell-summary");
      // Issue 48: onnxruntime's node-placement warnings (VerifyEachNodeIsAssignedToAnEp, two per session, about ten
      // per model load) printed as console errors; sessions now log errors only.
      assertEquals(errors, []);
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
