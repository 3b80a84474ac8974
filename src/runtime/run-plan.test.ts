import { assert, assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { type CellId, parseNotebook, setTitle, updateParams } from "../core/notebook.ts";
import { classifyRunError, planRun, runIdOf } from "./run-plan.ts";

function demoDoc() {
  const r = parseNotebook(demo);
  if (!r.ok) throw new Error("demo notebook invalid");
  return r.doc;
}

Deno.test("run plan: all, one cell with its setup and earlier training, from a cell on", () => {
  const doc = demoDoc();
  const setup = ["data", "model", "prompt", "reward"];
  const base = ["base-concepts", "base-templates", "base-db", "base-written"],
    warm = ["warm-concepts", "warm-templates", "warm-db", "warm-written"];
  const after = ["after-concepts", "after-templates", "after-db", "after-written"];
  assertEquals(planRun(doc, "all").cells.map((c) => c.id), [
    ...setup,
    ...base,
    "warmup",
    ...warm,
    "grpo",
    ...after,
    "sc",
    "export",
    "ask",
  ]);
  assertEquals(planRun(doc, "cell", "base-concepts").cells.map((c) => c.id), [...setup, "base-concepts"]);
  // An evaluation after training needs the trained adapter: the training cells come first (restored from checkpoints).
  assertEquals(planRun(doc, "cell", "after-db").cells.map((c) => c.id), [...setup, "warmup", "grpo", "after-db"]);
  assertEquals(planRun(doc, "from", "grpo").cells.map((c) => c.id), [
    ...setup,
    "warmup",
    "grpo",
    ...after,
    "sc",
    "export",
    "ask",
  ]);
  // Exporting the adapter alone restores the training cells first (from their checkpoints).
  assertEquals(planRun(doc, "cell", "export").cells.map((c) => c.id), [...setup, "warmup", "grpo", "export"]);
  assertEquals(planRun(doc, "cell", "data").cells.map((c) => c.id), ["data"]);
  let threw = "";
  try {
    planRun(doc, "cell", "gpu");
  } catch (e) {
    threw = String(e);
  }
  assert(threw.includes("does not run"), threw);
});

Deno.test("run plan: the run folder follows the runnable cells' parameters, not the title or markdown", () => {
  const doc = demoDoc();
  const id = runIdOf(doc);
  assert(/^nb-[0-9a-f]{8}$/.test(id), id);
  assertEquals(runIdOf(setTitle(doc, "another title")), id);
  assertEquals(runIdOf(updateParams(doc, "intro" as CellId, "markdown", { source: "changed" })), id);
  assert(
    runIdOf(updateParams(doc, "grpo" as CellId, "grpo", { steps: 41 })) !== id,
    "a changed GRPO parameter gives a fresh folder",
  );
});

Deno.test("run errors: kinds from the runners' messages", () => {
  assertEquals(classifyRunError('cell "grpo" (grpo): run cancelled: stopped by the user'), "cancelled");
  assertEquals(classifyRunError('cell "grpo" (grpo): run cancelled: GPU device lost (unknown): reset'), "device-lost");
  assertEquals(classifyRunError("navigator.gpu is missing"), "no-webgpu");
  assertEquals(
    classifyRunError(
      'cell "model" (model): the demo model is not in this build: nothing loadable at http://x/model/ (HTTP 404)',
    ),
    "demo-model-missing",
  );
  assertEquals(classifyRunError('cell "baseline" (evaluate): sql worker died: out of memory'), "sql-worker");
  assertEquals(
    classifyRunError(
      'cell "grpo" (grpo): checkpoint under checkpoints/grpo was made with other parameters; use a fresh output folder or remove it',
    ),
    "checkpoint",
  );
  assertEquals(classifyRunError('cell "model" (model): fetching http://x/m/config.json: HTTP 500'), "model");
  assertEquals(classifyRunError('cell "data" (dataset): http://x/demo/train.jsonl: HTTP 404'), "data");
  assertEquals(classifyRunError("something else"), "other");
});
