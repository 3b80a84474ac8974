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
import type { Locator, Page } from "playwright-core";
import { DIST, launchChromium, openNotebook, screenshot, waitForCell, watchErrors } from "./harness.ts";

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript",
  ".css": "text/css",
  ".json": "application/json",
  ".wasm": "application/wasm",
};

/** Serves dist/ and `dir`'s tiny/ (the model) and data/ folders, counting requests for /tiny/ by method. */
function serve(dir: string) {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = normalize(decodeURIComponent(new URL(req.url).pathname)).replace(/^(\.\.[/\\])+/, "");
    let file: string;
    if (path.startsWith("/tiny/") || path.startsWith("/data/")) {
      if (path.startsWith("/tiny/")) hits.push(`${req.method} ${path}`);
      file = join(dir, path);
      if (!existsSync(file)) return new Response("not found", { status: 404 });
    } else {
      file = join(DIST, path === "/" ? "index.html" : path);
      if (!existsSync(file)) file = join(DIST, "index.html");
    }
    const body = await Deno.readFile(file);
    const headers = {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": String(body.byteLength),
    };
    return new Response(req.method === "HEAD" ? null : body, { headers });
  });
  return { url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}/`, hits, close: () => server.shutdown() };
}

const QUESTIONS = [
  { db_id: "pets", question: "How many pets are cats?", query: "SELECT count(*) FROM pets WHERE kind = 'cat'" },
  { db_id: "pets", question: "List the names of all pets.", query: "SELECT name FROM pets" },
];

/** A temp folder with pets.sqlite and questions.jsonl (to upload), data/ (the same over HTTP) and tiny/ (the model). */
async function fixtures(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-run-upload-" });
  const SQL = await loadSqlJsDeno();
  const db = new SQL.Database();
  db.run(
    "CREATE TABLE pets (id INTEGER PRIMARY KEY, name TEXT, kind TEXT); INSERT INTO pets VALUES (1, 'Rex', 'dog'), (2, 'Tom', 'cat'), (3, 'Kit', 'cat');",
  );
  const schema = introspectSchema({
    exec: (sql) => db.exec(sql).map((x) => ({ columns: x.columns, values: x.values })),
  }, "pets");
  const bytes = db.export();
  db.close();
  const questions = QUESTIONS.map((q) => JSON.stringify(q)).join("\n") + "\n";
  await Deno.writeFile(`${dir}/pets.sqlite`, bytes);
  await Deno.writeTextFile(`${dir}/questions.jsonl`, questions);
  await Deno.mkdir(`${dir}/data/pets`, { recursive: true });
  await Deno.writeFile(`${dir}/data/pets/pets.sqlite`, bytes);
  await Deno.writeTextFile(`${dir}/data/questions.jsonl`, questions);
  const chat = new ChatTemplate(CHATML_TEMPLATE);
  const corpus = QUESTIONS.map((q) =>
    chat.render(buildPrompt({ question: q.question }, schema, { template: "omnisql@1" }).messages)
  );
  await writeVaryingLengthModel(`${dir}/tiny`, { seed: 7, corpus });
  return dir;
}

const NOTEBOOK = {
  version: 1,
  title: "Uploaded pets",
  cells: [
    {
      id: "data",
      type: "dataset",
      params: { source: "upload", name: "pets", format: "spider", split: "test", devFraction: 0, seed: 1 },
    },
    {
      id: "model",
      type: "model",
      params: { source: "url", url: "tiny/", revision: "main", dtype: "f32", loraRank: 4, loraAlpha: 8 },
    },
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
    const dir = await fixtures();
    const server = serve(dir);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
      const errors = watchErrors(page);
      await openNotebook(page, server.url, NOTEBOOK);
      const cell = (id: string) => page.locator(`li[data-cell-id="${id}"]`);
      const status = (id: string) => cell(id).getByTestId("run-status").getAttribute("data-status");

      // No files yet: the dataset cell says what to do; the model is not fetched.
      await cell("eval").getByTestId("run-cell").click();
      const err = cell("data").getByTestId("cell-error");
      await err.waitFor({ timeout: 10_000 });
      assertEquals(await err.getAttribute("data-kind"), "data");
      assert(
        ((await err.textContent()) ?? "").includes(
          "upload a questions file and its databases in the dataset cell first",
        ),
        (await err.textContent()) ?? "",
      );
      assertEquals(await status("data"), "failed");
      assertEquals(server.hits, []);

      // Upload, run: the evaluate cell reads the uploaded questions and database.
      await cell("data").getByTestId("upload-questions").setInputFiles(`${dir}/questions.jsonl`);
      await cell("data").getByTestId("upload-dbs").setInputFiles(`${dir}/pets.sqlite`);
      await cell("data").getByTestId("question-count").waitFor();
      await cell("eval").getByTestId("run-cell").click();
      await waitForCell(page, "eval", { ms: 100_000 });
      assertEquals(await cell("data").getByTestId("cell-error").count(), 0, "the earlier error is gone");
      const table = (await cell("eval").getByTestId("accuracy-table").textContent()) ?? "";
      assert(/overall\s*2/.test(table), `2 uploaded questions evaluated: ${table}`);
      await cell("eval").getByTestId("open-inspector").click();
      const inspector = cell("eval").locator("rl-reward-inspector");
      await inspector.locator("[data-testid=sample]").first().waitFor();
      const shown = await page.evaluate(() => {
        const nb = document.querySelector("rl-notebook") as unknown as {
          runs: { state(id: string): { samples: { question: string; gold: { rows: unknown[][] } | null }[] } };
        };
        return nb.runs.state("eval").samples.map((s) => [s.question, s.gold?.rows.length ?? -1]);
      });
      assertEquals(
        shown.sort(),
        [["How many pets are cats?", 1], ["List the names of all pets.", 3]],
        "samples of the uploaded questions, gold rows from the uploaded database",
      );
      await screenshot(page, "run-upload-evaluate");
      // The run got copies: the page's own bytes still open in the dataset cell's browser.
      await cell("data").getByTestId("db-select").selectOption("pets");
      await cell("data").getByTestId("db-tables").waitFor({ timeout: 30_000 });
      assert(
        ((await cell("data").getByTestId("db-tables").textContent()) ?? "").includes("(3 rows)"),
        "uploaded database still browsable after the run",
      );

      const gets = () => server.hits.filter((h) => h.startsWith("GET ")).length;
      const firstGets = gets();
      assert(
        firstGets >= 3 && server.hits.some((h) => h === "GET /tiny/model.safetensors"),
        `the first run downloads the model: ${server.hits}`,
      );
      const usage = cell("model").getByTestId("model-cache-usage");
      await page.waitForFunction(
        () =>
          /\d+ files/.test(
            document.querySelector("rl-notebook")?.shadowRoot?.querySelector('li[data-cell-id="model"] rl-cell-run')
              ?.shadowRoot?.querySelector("[data-testid=model-cache-usage]")?.textContent ?? "",
          ),
        null,
        { timeout: 10_000 },
      );
      const files = Number(/(\d+) files/.exec((await usage.textContent()) ?? "")?.[1]);
      assertEquals(files, firstGets, `every downloaded model file is cached: ${await usage.textContent()}`);

      // Second run: HEAD requests check the cached files; nothing is downloaded again.
      const before = server.hits.length;
      await cell("eval").getByTestId("run-cell").click();
      await waitForCell(page, "eval", { ms: 100_000 });
      const second = server.hits.slice(before);
      assertEquals(second.filter((h) => h.startsWith("GET ")), [], `second run: ${second}`);
      assert(second.includes("HEAD /tiny/model.safetensors"), `second run checks the cached copy: ${second}`);
      await cell("model").scrollIntoViewIfNeeded();
      await screenshot(page, "run-upload-model-cache");

      // Clearing the cache: the model cell says it is empty.
      await cell("model").getByTestId("clear-model-cache").click();
      await page.waitForFunction(
        () =>
          /none/.test(
            document.querySelector("rl-notebook")?.shadowRoot?.querySelector('li[data-cell-id="model"] rl-cell-run')
              ?.shadowRoot?.querySelector("[data-testid=model-cache-usage]")?.textContent ?? "",
          ),
        null,
        { timeout: 10_000 },
      );
      assertEquals(await cell("model").getByTestId("clear-model-cache").count(), 0);
      assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
    } finally {
      await browser.close();
      await server.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/**
 * GRPO steps of GRPO_NOTEBOOK: enough that the Stop test's click, made once step 1 is checkpointed, lands before the
 * last step has finished even on a loaded machine.
 */
const GRPO_STEPS = 5;

/** The same pets data over HTTP (it survives a reload, unlike uploads), an evaluate cell and a GRPO_STEPS-step GRPO cell. */
const GRPO_NOTEBOOK = {
  version: 1,
  title: "Pets over HTTP",
  cells: [
    {
      id: "data",
      type: "dataset",
      params: {
        source: "url",
        name: "pets",
        format: "spider",
        split: "train",
        questionsUrl: "data/questions.jsonl",
        dbRoot: "data",
        devFraction: 0,
        seed: 1,
      },
    },
    {
      id: "model",
      type: "model",
      params: { source: "url", url: "tiny/", revision: "main", dtype: "f32", loraRank: 4, loraAlpha: 8 },
    },
    { id: "prompt", type: "prompt", params: { template: "omnisql@1", maxPromptTokens: 800 } },
    { id: "reward", type: "reward", params: { comparison: "set" } },
    { id: "eval", type: "evaluate", params: { split: "train", n: 2, k: 1, temperature: 0, maxNewTokens: 4 } },
    {
      id: "grpo",
      type: "grpo",
      params: { G: 2, steps: GRPO_STEPS, batchQuestions: 1, maxNewTokens: 32, evalEvery: 0 },
    },
  ],
};

/** Opens GRPO_NOTEBOOK over a fresh fixture folder and browser; `body` gets the page and a cell locator. */
async function withGrpoNotebook(
  body: (page: Page, cell: (id: string) => Locator, errors: string[]) => Promise<void>,
): Promise<void> {
  const dir = await fixtures();
  const server = serve(dir);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } });
    const errors = watchErrors(page);
    await openNotebook(page, server.url, GRPO_NOTEBOOK);
    await body(page, (id) => page.locator(`li[data-cell-id="${id}"]`), errors);
    assertEquals(errors.filter((e) => !/VerifyEachNodeIsAssignedToAnEp/.test(e)), []);
  } finally {
    await browser.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
}

type Nb = {
  runs: {
    state(id: string): { samples: { question: string; phase: string }[]; metrics: { phase: string; step: number }[] };
  };
};

Deno.test({
  name: "run in the page: an evaluate cell's samples (reward inspector) come back after a reload",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withGrpoNotebook(async (page, cell) => {
      const samplesOf = (id: string) =>
        page.evaluate((id) =>
          (document.querySelector("rl-notebook") as unknown as Nb).runs.state(id).samples.map((s) =>
            `${s.phase}: ${s.question}`
          ).sort(), id);
      await cell("eval").getByTestId("run-cell").click();
      await waitForCell(page, "eval", { ms: 100_000 });
      const live = await samplesOf("eval");
      assertEquals(live, ["eval: How many pets are cats?", "eval: List the names of all pets."]);
      await page.reload();
      await cell("eval").getByTestId("accuracy-table").waitFor({ timeout: 30_000 });
      assertEquals(await samplesOf("eval"), live, "the samples after the reload are the run's");
      await cell("eval").getByTestId("open-inspector").click();
      await cell("eval").locator("rl-reward-inspector [data-testid=sample]").first().waitFor();
      await screenshot(page, "run-reload-evaluate-samples");
    }),
});

Deno.test({
  name:
    "run in the page: Stop a GRPO run before its first step finishes (cell says nothing was kept), and after a checkpoint (kept), then Run resumes from it",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: () =>
    withGrpoNotebook(async (page, cell) => {
      const grpo = cell("grpo");
      const status = () =>
        document.querySelector("rl-notebook")?.shadowRoot?.querySelector('li[data-cell-id="grpo"] rl-cell-run')
          ?.shadowRoot?.querySelector("[data-testid=run-status]")?.getAttribute("data-status");
      const msg = grpo.getByTestId("progress-message");
      /** The run folder's GRPO checkpoint step (0: none) and status, as the worker lists them. */
      const folder = async () => {
        const runs = await page.evaluate(async () => {
          const nb = document.querySelector("rl-notebook") as unknown as {
            runs: { api: { listRuns(): Promise<{ status: string; checkpoints?: Record<string, number> }[]> } };
          };
          return await nb.runs.api.listRuns();
        });
        return { step: runs[0]?.checkpoints?.grpo ?? 0, status: runs[0]?.status };
      };
      /** Clicks Stop and waits for the cell to say stopped; returns the folder then and the cell's error text. */
      const stop = async (when: string) => {
        await grpo.getByTestId("stop-cell").click();
        await page.waitForFunction(`(${status})() === "stopped"`, null, { timeout: 60_000 }).catch(async (e) => {
          throw new Error(
            `the grpo cell did not say stopped within 60 s of Stop ${when}: status ${await page.evaluate(
              status,
            )}, message "${await msg.textContent().catch(() => "")}" (${e})`,
          );
        });
        const err = grpo.getByTestId("cell-error");
        assertEquals(await err.getAttribute("data-kind"), "cancelled");
        const text = ((await err.textContent()) ?? "").replace(/\s+/g, " ");
        assert(text.includes("stopped by the user"), text);
        assertEquals(await grpo.getByTestId("run-cell").isEnabled(), true, "Run works again");
        assertEquals(await page.getByTestId("run-all").count(), 1, "the toolbar is back to Run all");
        const f = await folder();
        assertEquals(f.status, "stopped");
        return { ...f, text };
      };

      // Stop as soon as step 1 starts: Stop is honoured between decoding steps, so it lands before the step (its
      // sampling, the trainer's first update, its checkpoint) has finished. The cell says nothing was kept.
      await grpo.getByTestId("run-cell").click();
      await msg.waitFor({ timeout: 100_000 });
      assert(/step 1\//.test((await msg.textContent()) ?? ""), (await msg.textContent()) ?? "");
      const early = await stop("at the start of step 1");
      assertEquals(early.step, 0, "no checkpoint: Stop came before the first step finished");
      assert(
        early.text.includes(
          `No step of this cell had finished, so it has no checkpoint: running it again starts at step 1 of ${GRPO_STEPS}.`,
        ),
        early.text,
      );
      assert(!/checkpoints made so far are kept/i.test(early.text), `no promise of a checkpoint: ${early.text}`);
      await grpo.scrollIntoViewIfNeeded();
      await screenshot(page, "run-grpo-stopped-before-a-step");

      // Run again and Stop once a step is checkpointed: the cell says which, the folder keeps it.
      await grpo.getByTestId("run-cell").click();
      const t0 = Date.now();
      while ((await folder()).step < 1) {
        if (Date.now() - t0 > 120_000) throw new Error(`no GRPO checkpoint within 120 s: "${await msg.textContent()}"`);
        await page.waitForTimeout(100);
      }
      const stopped = await stop("after the first checkpoint");
      const stoppedAt = stopped.step;
      assert(
        stoppedAt >= 1 && stoppedAt < GRPO_STEPS,
        `checkpoint kept at step ${stoppedAt} of ${GRPO_STEPS}: the Stop came too late to stop mid-run`,
      );
      assert(
        stopped.text.includes(
          `Its checkpoint is kept at step ${stoppedAt} of ${GRPO_STEPS}: running it again continues from step ${
            stoppedAt + 1
          }.`,
        ),
        stopped.text,
      );
      await grpo.scrollIntoViewIfNeeded();
      await screenshot(page, "run-grpo-stopped");

      // Run again: it continues from the checkpoint and finishes the remaining steps.
      await grpo.getByTestId("run-cell").click();
      await waitForCell(page, "grpo", { ms: 100_000 });
      const report = (await grpo.getByTestId("grpo-report").textContent()) ?? "";
      assert(report.includes(`${GRPO_STEPS} steps (resumed from step ${stoppedAt})`), `report: ${report}`);
      const steps = await page.evaluate(() =>
        (document.querySelector("rl-notebook") as unknown as Nb).runs.state("grpo").metrics.filter((r) =>
          r.phase === "grpo"
        ).map((r) => r.step)
      );
      assertEquals(
        steps,
        Array.from({ length: GRPO_STEPS - stoppedAt }, (_, i) => stoppedAt + 1 + i),
        "only the remaining steps ran",
      );
      assertEquals(
        await cell("model").getByTestId("run-status").getAttribute("data-status"),
        "done",
        "the setup cells ran again",
      );
      await screenshot(page, "run-grpo-resumed-after-stop");
    }),
});
