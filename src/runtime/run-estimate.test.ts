import { assert, assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { type Notebook, parseNotebook } from "../core/notebook.ts";
import { estimateRun, LONG_RUN_SECONDS, QUICK, quickPreset, remainingSeconds } from "./run-estimate.ts";
import { etaOf } from "./recipe/context.ts";

function demoDoc(): Notebook {
  const r = parseNotebook(demo);
  if (!r.ok) throw new Error("demo notebook invalid");
  return r.doc;
}

/** The matmul check's figure on SwiftShader in headless Chromium on the 2-core CI machine (issue #48). */
const SWIFTSHADER_GFLOPS = 2.4;

Deno.test("run estimate (issue #48 item 1): the demo is hours on SwiftShader, minutes on a GPU; the quick version a small part of it", () => {
  const doc = demoDoc();
  const slow = estimateRun(doc, { gflops: SWIFTSHADER_GFLOPS });
  const fast = estimateRun(doc, { gflops: 5000 });
  // Every runnable cell has a line; nothing else does.
  assertEquals(
    slow.cells.map((c) => c.id),
    doc.cells.filter((c) => c.type !== "markdown" && c.type !== "gpu").map((c) => c.id),
  );
  assert(slow.seconds > 2 * 3600, `the demo on SwiftShader: ${slow.seconds} s`);
  assert(fast.seconds < LONG_RUN_SECONDS, `the demo on a GPU: ${fast.seconds} s`);
  assertEquals(slow.seconds, slow.cells.reduce((a, c) => a + c.seconds, 0));
  const q = quickPreset(doc);
  const quick = estimateRun(q.doc, { gflops: SWIFTSHADER_GFLOPS });
  assert(quick.seconds < slow.seconds / 50, `the quick version on SwiftShader: ${quick.seconds} s of ${slow.seconds}`);
});

Deno.test("quick preset: the same notebook smaller, saying what it gives up; a before/after on one split remains", () => {
  const doc = demoDoc();
  const { doc: q, givesUp } = quickPreset(doc);
  assert(q.title.endsWith("(quick version)"));
  const ds = q.cells.find((c) => c.type === "dataset");
  assertEquals(ds?.type === "dataset" ? ds.params.limit : null, QUICK.questions);
  const evals = q.cells.flatMap((c) => (c.type === "evaluate" ? [c.params] : []));
  assert(evals.length >= 2, "a baseline and an evaluation after training");
  assert(
    evals.every((p) => p.split === "test-concepts" && p.n <= QUICK.questions && p.maxNewTokens <= QUICK.maxNewTokens),
  );
  // Training stays, smaller; cells keep their ids and order (the outputs map onto the same cells).
  const ids: string[] = q.cells.map((c) => c.id);
  assert(ids.indexOf("base-concepts") < ids.indexOf("warmup") && ids.indexOf("warmup") < ids.indexOf("after-concepts"));
  const g = q.cells.find((c) => c.type === "grpo");
  assert(g?.type === "grpo" && g.params.steps <= QUICK.grpoSteps && g.params.evalEvery === 0);
  assert(!q.cells.some((c) => c.type === "selfconsistency"));
  for (const word of ["questions per split", "only test-concepts", "warm-up round", "GRPO step", "self-consistency"]) {
    assert(givesUp.some((l) => l.includes(word)), `gives up "${word}": ${givesUp.join("; ")}`);
  }
  const w = q.cells.find((c) => c.type === "warmup");
  assert(w?.type === "warmup" && w.params.rounds === 1 && w.params.epochs === 1);
  assertEquals(w.params.rftPerQuestion, QUICK.rftPerQuestion);
  assert(givesUp.some((l) => l.includes("per question trained in the warm-up")), givesUp.join("; "));
  // Prompts are the cost on a software GPU: their budget shrinks, the template and the question stay.
  const pc = q.cells.find((c) => c.type === "prompt");
  const full = doc.cells.find((c) => c.type === "prompt");
  assert(pc?.type === "prompt" && full?.type === "prompt");
  assertEquals(pc.params, { ...full.params, maxPromptTokens: QUICK.promptTokens });
  assert(givesUp.some((l) => l.startsWith(`prompts of at most ${QUICK.promptTokens} tokens`)), givesUp.join("; "));
  const ask = q.cells.find((c) => c.type === "ask");
  assert(ask?.type === "ask" && ask.params.maxNewTokens <= QUICK.maxNewTokens, "Run all answers the ask cell too");
  // Already quick: nothing more to give up, the same document.
  const again = quickPreset(q);
  assertEquals(again.givesUp, []);
  assertEquals(again.doc, q);
});

Deno.test("run estimate: the whole run's time left follows the finished cells' pace and the running cell's own estimate", () => {
  const plan = {
    gflops: 1,
    seconds: 700,
    cells: [
      { id: "data", type: "dataset" as const, seconds: 0, what: "" },
      { id: "model", type: "model" as const, seconds: 100, what: "" },
      { id: "eval", type: "evaluate" as const, seconds: 200, what: "" },
      { id: "grpo", type: "grpo" as const, seconds: 400, what: "" },
    ],
  };
  assertEquals(remainingSeconds(plan, new Map(), null), 700);
  // The evaluation took twice its plan: the rest is expected to, too; a model's load says nothing of the pace.
  assertEquals(remainingSeconds(plan, new Map([["data", 1], ["model", 20], ["eval", 400]]), null), 800);
  // The running cell's own estimate replaces its planned time; before it has one, its share not yet done.
  assertEquals(
    remainingSeconds(plan, new Map([["data", 1], ["model", 200]]), { id: "eval", etaSeconds: 50, fraction: 0.5 }),
    450,
  );
  assertEquals(
    remainingSeconds(plan, new Map([["data", 1], ["model", 200], ["eval", 400]]), {
      id: "grpo",
      etaSeconds: null,
      fraction: 0.25,
    }),
    600,
  );
  // A reused cell (NaN: took no time here) says nothing of the device's pace.
  assertEquals(remainingSeconds(plan, new Map([["model", 100], ["eval", NaN]]), null), 400);
});

Deno.test("cell time left (issue #48 item 2): 'measuring' until a tenth is done, so it cannot fall from 364 h to 2 h", () => {
  // The first batch's prefill dominated the early fractions: 26 s at 0.002% read as hundreds of hours.
  assertEquals([etaOf(0.00002, 26), etaOf(0.05, 600), etaOf(0, 10)], [null, null, null]);
  assertEquals(etaOf(0.1, 100), 900);
  assertEquals(etaOf(0.5, 100), 100);
});

Deno.test("quick preset (issue #48): the demo's quick version reads at most 13 prompts and trains at most 8 sequences", () => {
  // On a software GPU a run's time is the prompts it prefills (~700 tokens each) and the prompt + answer sequences it
  // trains; the quick demo has to finish in minutes there, so these are what the preset bounds.
  const { doc: q } = quickPreset(demoDoc());
  const ds = q.cells.find((c) => c.type === "dataset");
  const train = ds?.type === "dataset" ? ds.params.limit ?? Infinity : Infinity;
  let prompts = 0, trained = 0;
  for (const c of q.cells) {
    if (c.type === "evaluate") prompts += c.params.n;
    if (c.type === "warmup") {
      prompts += c.params.rounds * train;
      trained += c.params.rounds * c.params.epochs * train *
        Math.min(c.params.samplesPerQuestion, c.params.rftPerQuestion);
    }
    if (c.type === "grpo") {
      prompts += c.params.steps * c.params.batchQuestions * (1 + (c.params.evalEvery ? c.params.evalN : 0));
      trained += c.params.steps * c.params.batchQuestions * c.params.G * (c.params.updatesPerBatch ?? 1);
    }
  }
  assert(prompts <= 13 && trained <= 8, `prompts ${prompts}, sequences trained ${trained}`);
});
