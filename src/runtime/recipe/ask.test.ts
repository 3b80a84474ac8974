import { assert, assertEquals } from "../../../tests/assert.ts";

/** The error `fn` throws, checked to hold `part`. */
function assertThrows(fn: () => unknown, _kind: ErrorConstructor, part: string): void {
  try {
    fn();
  } catch (e) {
    assert(e instanceof Error && e.message.includes(part), `${String(e)} holds ${part}`);
    return;
  }
  throw new Error(`expected an error holding ${part}`);
}
import demo from "../../../notebooks/demo.json" with { type: "json" };
import { parseNotebook, updateParams } from "../../core/notebook.ts";
import type { CellId } from "../../core/notebook.ts";
import { DEMO_SPLITS } from "../../core/demo.ts";
import type { Task } from "../../core/types.ts";
import type { LoraAdapter } from "../../model/lora.ts";
import { saveCheckpoint } from "../checkpoint.ts";
import { planRun, runIdOf } from "../run-plan.ts";
import { MemoryStore } from "../store.ts";
import type { AskReport } from "../records.ts";
import { adapterOf, checkpointStages, definitionsOf, definitionsUsed, formatAsk, pickStage, stageKind } from "./ask.ts";

const ROOT = new URL("../../../", import.meta.url);
const readJsonl = async (name: string): Promise<Task[]> =>
  (await Deno.readTextFile(new URL(`public/demo/${name}.jsonl`, ROOT))).trim().split("\n").map((l) => JSON.parse(l));

function demoDoc() {
  const r = parseNotebook(demo);
  if (!r.ok) throw new Error("demo notebook invalid");
  return r.doc;
}

const tensors = () => new Map([["lora.x", { shape: [1, 2], data: Float32Array.of(1, 2) }]]);

Deno.test("ask stages: warm-up and GRPO checkpoints of a run folder, oldest first; a PRM's and a damaged one left out", async () => {
  const store = new MemoryStore();
  const wait = () => new Promise((r) => setTimeout(r, 5));
  // The state each stage runner saves (warmup.ts saveRound, grpo.ts, prm-train.ts).
  await saveCheckpoint(store, "checkpoints/warmup", {
    step: 3,
    cursor: 0,
    rng: {},
    tensors: tensors(),
    state: { config: "{}", rounds: [], trainerStep: 12 },
  });
  await wait();
  await saveCheckpoint(store, "checkpoints/prm", {
    step: 2,
    cursor: 0,
    rng: {},
    tensors: tensors(),
    state: { config: "{}", trainerStep: 4, epochLoss: [0.5] },
  });
  await wait();
  for (const step of [1, 2]) {
    await saveCheckpoint(store, "checkpoints/grpo", {
      step,
      cursor: step,
      rng: {},
      tensors: tensors(),
      state: { config: "{}", trainerStep: step, focus: null, heldout: [], equalSum: 0, skipped: 0 },
    });
  }
  await store.write("checkpoints/broken/latest.json", "{not json");
  const stages = await checkpointStages(store);
  assertEquals(stages.map((s) => [s.cellId, s.kind, s.step]), [["warmup", "warmup", 3], ["grpo", "grpo", 2]]);
  assertEquals(pickStage(stages, "")?.cellId, "grpo", "the newest by default");
  assertEquals(pickStage(stages, "warmup")?.step, 3);
  assertThrows(
    () => pickStage(stages, "sc"),
    Error,
    'stage "sc" has no checkpoint in this run (checkpointed: warmup, grpo)',
  );
  assertEquals(pickStage([], ""), null, "no checkpoint: the base model alone");
  assertEquals(await checkpointStages(new MemoryStore()), []);
  assertEquals(stageKind({ trainerStep: 1, rounds: [] }), "warmup");
  assertEquals(stageKind({ trainerStep: 1, epochLoss: [] }), null);
});

Deno.test("ask definitions: the demo's evidence gives exactly public/demo/concepts.json's fragments for every database", async () => {
  const tasks = (await Promise.all(DEMO_SPLITS.map(readJsonl))).flat();
  const concepts = JSON.parse(await Deno.readTextFile(new URL("public/demo/concepts.json", ROOT))) as {
    db: string;
    term: string;
    fragment: string;
  }[];
  for (const db of new Set(concepts.map((c) => c.db))) {
    const want = concepts.filter((c) => c.db === db).map((c) => [c.term, c.fragment]).sort();
    assertEquals(definitionsOf(tasks, db).map((d) => [d.term, d.fragment]).sort(), want, db);
  }
});

Deno.test("ask definitions: an answer uses a definition up to spacing, case and table aliases (recall matching), not a look-alike", async () => {
  const defs = definitionsOf(await readJsonl("train"), "shop");
  const used = (sql: string) => definitionsUsed(sql, defs).map((d) => d.term);
  assertEquals(
    used(
      "SELECT c.country, COUNT(*) FROM customers AS c WHERE c.customer_id IN (SELECT orders.customer_id FROM orders GROUP BY orders.customer_id HAVING count(*)>=4) GROUP BY c.country",
    ),
    ["loyal customer"],
  );
  assertEquals(
    used(
      "SELECT country, COUNT(*) FROM customers WHERE customer_id IN (SELECT customer_id FROM orders GROUP BY customer_id HAVING COUNT(*) >= 3) GROUP BY country",
    ),
    [],
    "another threshold is not the definition",
  );
  // A measure: its aggregate and its condition, with the question's own joins between them.
  assertEquals(
    used(
      "SELECT SUM(oi.quantity * oi.unit_price) FROM order_items oi JOIN orders o ON o.order_id = oi.order_id JOIN customers c ON c.customer_id = o.customer_id WHERE c.country = 'PL' AND o.status = 'delivered'",
    ),
    ["revenue"],
  );
});

Deno.test("ask cell: the demo notebook ends with one, pre-filled with a question about a demo database that is in no split", async () => {
  const doc = demoDoc();
  const last = doc.cells.at(-1)!;
  assert(last.type === "ask", `the last cell is ${last.type}`);
  const norm = (q: string) => q.toLowerCase().replace(/[^a-z0-9]+/g, " ").trim();
  const q = norm(last.params.question);
  assert(q.length > 10, "pre-filled");
  const all = (await Promise.all([...DEMO_SPLITS, "generic"].map(readJsonl))).flat();
  assert(all.length > 600, `read the splits (${all.length})`);
  assert(all.some((t) => t.db_id === last.params.db), `database ${last.params.db} is a demo database`);
  const same = all.filter((t) => norm(t.question) === q);
  assertEquals(same.map((t) => t.id), [], "the question is in no split");
});

Deno.test("ask plan: asking runs the setup cells and the ask cell (no training); a new question keeps the run folder", () => {
  const doc = demoDoc();
  const plan = planRun(doc, "cell", "ask");
  assertEquals(plan.cells.map((c) => c.id), ["data", "model", "prompt", "reward", "ask"]);
  assertEquals(planRun(doc, "from", "ask").cells.map((c) => c.id), ["data", "model", "prompt", "reward", "ask"]);
  assertEquals(planRun(doc, "all").cells.at(-1)?.id, "ask", "Run all asks at the end");
  const other = updateParams(doc, "ask" as CellId, "ask", { question: "Which products sell best?" });
  assertEquals(runIdOf(other), runIdOf(doc));
  const noAsk = { ...doc, cells: doc.cells.filter((c) => c.type !== "ask") };
  assertEquals(runIdOf(noAsk), runIdOf(doc), "the same folder as the notebook without it");
  // Training cells still plan their checkpointed prefix for the other cells.
  assert(planRun(doc, "cell", "after-concepts").cells.some((c) => c.id === "grpo"));
});

Deno.test("ask adapter: a checkpoint's lora.* tensors as the runtime's adapter; a missing one named", () => {
  const like: LoraAdapter = {
    r: 1,
    alpha: 2,
    targets: ["q_proj"],
    tensors: new Map([["a", { shape: [1, 2], data: new Float32Array(2) }]]),
  };
  const got = adapterOf(like, new Map([["lora.a", { shape: [1, 2], data: Float32Array.of(3, 4) }]]), "ck");
  assertEquals([...got.tensors.get("a")!.data], [3, 4]);
  assertEquals([got.r, got.alpha, got.targets], [1, 2, ["q_proj"]]);
  assertThrows(() => adapterOf(like, new Map(), "checkpoints/grpo"), Error, "checkpoints/grpo lacks lora.a");
});

Deno.test("ask report as text: both answers, rows or the error, definitions used", () => {
  const r: AskReport = {
    kind: "ask",
    cellId: "ask",
    question: "How many loyal customers?",
    db: "shop",
    base: {
      stage: null,
      completion: "SELECT COUNT(*) FROM custom",
      sql: "SELECT COUNT(*) FROM custom",
      error: { kind: "runtime", message: "no such table: custom" },
      result: null,
      definitions: [],
    },
    trained: {
      stage: { cellId: "grpo", kind: "grpo", step: 40, savedAt: "" },
      completion: "",
      sql: "SELECT COUNT(*) FROM customers",
      error: null,
      result: { columns: ["n"], rows: [[7]], rowCount: 1, truncated: false, capped: false },
      definitions: [{ term: "loyal customer", fragment: "x" }],
    },
    stages: [],
    known: 4,
  };
  const t = formatAsk(r);
  for (
    const w of [
      "no such table: custom",
      'after "grpo" (grpo, step 40)',
      "1 row; first: [7]",
      "definitions used: loyal customer",
    ]
  ) {
    assert(t.includes(w), `${w} in:\n${t}`);
  }
});
