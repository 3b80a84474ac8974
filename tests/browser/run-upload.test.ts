// Runs on uploaded files, and the model-file cache, in the page (SwiftShader WebGPU). Made at test
// time: a one-table SQLite database (sql.js), a two-question JSONL file, and a tiny random model
// whose tokenizer is trained on the prompts, served at `tiny/` by a server that counts GET and
// HEAD requests. A notebook whose dataset cell has source "upload" and whose model cell has
// source "url":
//  - Run before uploading: the dataset cell says to upload first, nothing is fetched;
//  - upload, Run the evaluate cell: accuracy table, the inspector shows both questions' samples;
//  - Run again: the model files come from the OPFS cache (HEAD requests only, no GET);
//  - "Clear cached model files" in the model cell empties the cache.
import { existsSync } from "node:fs";
import { extname, join, normalize } from "node:path";
import { assert, assertEquals } from "../assert.ts";
import { ChatTemplate } from "../../src/core/chat-template.ts";
import { buildPrompt } from "../../src/core/prompts.ts";
import { introspectSchema } from "../../src/core/schema.ts";
import { CHATML_TEMPLATE } from "../../src/model/tiny.ts";
import { writeVaryingLengthModel } from "../../src/runtime/recipe/fixtures.deno.ts";
import { loadSqlJsDeno } from "../../src/runtime/sql-wasm.ts";
import { DIST, launchChromium, screenshot, watchErrors } from "./harness.ts";

const TYPES: Record<string, string> = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".wasm": "application/wasm" };

/** Serves dist/ and the model folder `modelDir` at /tiny/, counting requests for /tiny/ by method. */
function serve(modelDir: string) {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = normalize(decodeURIComponent(new URL(req.url).pathname)).replace(/^(\.\.[/\\])+/, "");
    let file: string;
    if (path.startsWith("/tiny/")) {
      hits.push(`${req.method} ${path}`);
      file = join(modelDir, path.slice("/tiny/".length));
      if (!existsSync(file)) return new Response("not found", { status: 404 });
    } else {
      file = join(DIST, path === "/" ? "index.html" : path);
      if (!existsSync(file)) file = join(DIST, "index.html");
    }
    const body = await Deno.readFile(file);
    const headers = { "content-type": TYPES[extname(file)] ?? "application/octet-stream", "content-length": String(body.byteLength) };
    return new Response(req.method === "HEAD" ? null : body, { headers });
  });
  return { url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`, hits, close: () => server.shutdown() };
}

const QUESTIONS = [
  { db_id: "pets", question: "How many pets are cats?", query: "SELECT count(*) FROM pets WHERE kind = 'cat'" },
  { db_id: "pets", question: "List the names of all pets.", query: "SELECT name FROM pets" },
];

const NOTEBOOK = {
  version: 1,
  title: "Uploaded pets",
  cells: [
    { id: "data", type: "dataset", params: { source: "upload", name: "pets", format: "spider", split: "test", devFraction: 0, seed: 1 } },
    { id: "model", type: "model", params: { source: "url", url: "tiny/", revision: "main", dtype: "f32", loraRank: 4, loraAlpha: 8 } },
    { id: "prompt", type: "prompt", params: { template: "omnisql@1", maxPromptTokens: 800 } },
    { id: "reward", type: "reward", params: { comparison: "set" } },
    { id: "eval", type: "evaluate", params: { split: "test", n: 2, k: 1, temperature: 0, maxNewTokens: 4 } },
  ],
};

Deno.test({
  name: "run in the page on uploaded files; model files cached in OPFS (second run downloads nothing); clear the cache",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-run-upload-" });
    const SQL = await loadSqlJsDeno();
    const db = new SQL.Database();
    db.run("CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT, kind TEXT); INSERT INTO pets VALUES (1, 'Rex', 'dog'), (2, 'Tom', 'cat'), (3, 'Kit', 'cat');");
    const schema = introspectSchema({ exec: (sql) => db.exec(sql).map((x) => ({ columns: x.columns, values: x.values })) }, "pets");
    await Deno.writeFile(`${dir}/pets.sqlite`, db.export());
    db.close();
    await Deno.writeTextFile(`${dir}/questions.jsonl`, QUESTIONS.map((q) => JSON.stringify(q)).join("\n") + "\n");
    const chat = new ChatTemplate(CHATML_TEMPLATE);
    const corpus = QUESTIONS.map((q) => chat.render(buildPrompt({ question: q.question }, schema, { template: "omnisql@1" }).messages));
    await writeVaryingLengthModel(`${dir}/tiny`, { seed: 7, corpus });
    const server = serve(`${dir}/tiny`);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      await page.addInitScript((text) => {
        if (!sessionStorage.getItem("seeded")) {
          localStorage.setItem("rlvr-notebook-autosave", text);
          sessionStorage.setItem("seeded", "1");
        }
      }, JSON.stringify(NOTEBOOK));
      await page.goto(server.url);
      const cell = (id: string) => page.locator(`li[data-cell-id="${id}"]`);
      const status = (id: string) => cell(id).getByTestId("run-status").getAttribute("data-status");
      const done = async (id: string, ms: number) => {
        const t0 = Date.now();
        for (;;) {
          const s = await status(id);
          if (s === "done") return;
          if (s === "failed" || s === "stopped") throw new Error(`cell ${id} ${s}: ${await page.locator("[data-testid=cell-error]").allTextContents()}`);
          if (Date.now() - t0 > ms) throw new Error(`cell ${id} still ${s} after ${ms} ms`);
          await page.waitForTimeout(250);
        }
      };

      // No files yet: the dataset cell says what to do; the model is not fetched.
      await cell("eval").getByTestId("run-cell").click();
      const err = cell("data").getByTestId("cell-error");
      await err.waitFor({ timeout: 10_000 });
      assertEquals(await err.getAttribute("data-kind"), "data");
      assert(((await err.textContent()) ?? "").includes("upload a questions file and its databases in the dataset cell first"), (await err.textContent()) ?? "");
      assertEquals(await status("data"), "failed");
      assertEquals(server.hits, []);

      // Upload, run: the evaluate cell reads the uploaded questions and database.
      await cell("data").getByTestId("upload-questions").setInputFiles(`${dir}/questions.jsonl`);
      await cell("data").getByTestId("upload-dbs").setInputFiles(`${dir}/pets.sqlite`);
      await cell("data").getByTestId("question-count").waitFor();
      await cell("eval").getByTestId("run-cell").click();
      await done("eval", 100_000);
      assertEquals(await cell("data").getByTestId("cell-error").count(), 0, "the earlier error is gone");
      const table = (await cell("eval").getByTestId("accuracy-table").textContent()) ?? "";
      assert(/overall\s*2/.test(table), `2 uploaded questions evaluated: ${table}`);
      await cell("eval").getByTestId("open-inspector").click();
      const inspector = cell("eval").locator("rl-reward-inspector");
      await inspector.locator("[data-testid=sample]").first().waitFor();
      const shown = await page.evaluate(() => {
        const nb = document.querySelector("rl-notebook") as unknown as { runs: { state(id: string): { samples: { question: string; gold: { rows: unknown[][] } | null }[] } } };
        return nb.runs.state("eval").samples.map((s) => [s.question, s.gold?.rows.length ?? -1]);
      });
      assertEquals(shown.sort(), [["How many pets are cats?", 1], ["List the names of all pets.", 3]], "samples of the uploaded questions, gold rows from the uploaded database");
      await screenshot(page, "run-upload-evaluate");

      const gets = () => server.hits.filter((h) => h.startsWith("GET ")).length;
      const firstGets = gets();
      assert(firstGets >= 3 && server.hits.some((h) => h === "GET /tiny/model.safetensors"), `the first run downloads the model: ${server.hits}`);
      const usage = cell("model").getByTestId("model-cache-usage");
      await page.waitForFunction(() => /\d+ files/.test(document.querySelector("rl-notebook")?.shadowRoot?.querySelector('li[data-cell-id="model"] rl-cell-run')?.shadowRoot?.querySelector("[data-testid=model-cache-usage]")?.textContent ?? ""), null, { timeout: 10_000 });
      const files = Number(/(\d+) files/.exec((await usage.textContent()) ?? "")?.[1]);
      assertEquals(files, firstGets, `every downloaded model file is cached: ${await usage.textContent()}`);

      // Second run: HEAD requests check the cached files; nothing is downloaded again.
      const before = server.hits.length;
      await cell("eval").getByTestId("run-cell").click();
      await done("eval", 100_000);
      const second = server.hits.slice(before);
      assertEquals(second.filter((h) => h.startsWith("GET ")), [], `second run: ${second}`);
      assert(second.includes("HEAD /tiny/model.safetensors"), `second run checks the cached copy: ${second}`);
      await cell("model").scrollIntoViewIfNeeded();
      await screenshot(page, "run-upload-model-cache");

      // Clearing the cache: the model cell says it is empty.
      await cell("model").getByTestId("clear-model-cache").click();
      await page.waitForFunction(() => /none/.test(document.querySelector("rl-notebook")?.shadowRoot?.querySelector('li[data-cell-id="model"] rl-cell-run')?.shadowRoot?.querySelector("[data-testid=model-cache-usage]")?.textContent ?? ""), null, { timeout: 10_000 });
      assertEquals(await cell("model").getByTestId("clear-model-cache").count(), 0);
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
