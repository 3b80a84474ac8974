// The model cell's load summary on the page side: it arrives with the model cell's last progress
// (so it shows while later cells run) and stays when a later cell fails; a new run clears it.
import { assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { parseNotebook } from "../core/notebook.ts";
import type { ModelSummary } from "../runtime/recipe/model-summary.ts";
import type { RunEvents, RunOutcome, RunRequest } from "../../workers/gpu.api.ts";
import { type RunApi, RunController } from "./run-controller.ts";

const parsed = parseNotebook(demo);
if (!parsed.ok) throw new Error("demo notebook invalid");
const doc = parsed.doc;

const SUMMARY: ModelSummary = {
  name: "demo",
  source: "http://app/model",
  arch: "qwen2",
  layers: 2,
  hidden: 48,
  parameters: 60_300,
  vocab: 280,
  maxPositionEmbeddings: 2048,
  dtype: "f32",
  lora: { rank: 16, alpha: 32, targets: ["q_proj"] },
  policyProvider: "webgpu",
  trainerProjections: "f32",
  contextLength: 2048,
  loadMs: 4900,
  transferred: { downloadedBytes: 251_000, cachedBytes: 0, viaCache: false },
};

Deno.test("run controller: the model cell's summary comes with its last progress and survives a later cell's failure", async () => {
  let seenWhileRunning: ModelSummary | null = null;
  let c: RunController | null = null;
  let stopNext = false;
  const play = (_req: RunRequest, ev: RunEvents): RunOutcome => {
    if (stopNext) {
      ev.progress({
        cellId: "model",
        stage: "model",
        fraction: 0,
        etaSeconds: null,
        message: "loading the model files…",
      });
      return {
        ok: false,
        error: 'cell "model" (model): run cancelled: stopped by the user',
        cellId: "model",
        stopped: true,
      };
    }
    ev.progress({
      cellId: "model",
      stage: "model",
      fraction: 0.5,
      etaSeconds: 1,
      message: "reading model.safetensors: 0.1 of 0.2 MB",
    });
    assertEquals(c!.state("model").model, null);
    ev.progress({ cellId: "model", stage: "model", fraction: 1, etaSeconds: 0, message: "loaded", model: SUMMARY });
    ev.progress({ cellId: "base-concepts", stage: "evaluate", fraction: 0.1, etaSeconds: 9, message: "decoding 1/44" });
    seenWhileRunning = c!.state("model").model;
    return {
      ok: false,
      error: 'cell "base-concepts" (evaluate): sql worker crashed',
      cellId: "base-concepts",
      stopped: false,
    };
  };
  const api: RunApi = {
    startRun: (req, ev) => Promise.resolve(play(req, ev)),
    stopRun: () => Promise.resolve(true),
    listRuns: () => Promise.resolve([]),
    readRunFile: () => Promise.resolve(null),
    removeRun: () => Promise.resolve(),
    storage: () => Promise.resolve({ kind: "opfs" as const }),
  };
  c = new RunController(api, () => doc, (e) => e, "http://app/");
  await c.run("cell", "base-concepts");
  assertEquals(seenWhileRunning, SUMMARY);
  assertEquals(c.state("model").status, "done");
  assertEquals(c.state("model").model, SUMMARY);
  assertEquals(c.state("base-concepts").status, "failed");
  // A new run starts the cell over: stopped while it loads again, it shows no stale summary.
  stopNext = true;
  await c.run("cell", "model");
  assertEquals([c.state("model").status, c.state("model").model], ["stopped", null]);
});
