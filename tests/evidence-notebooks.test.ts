// The PRM evidence notebooks bench/evidence/h200.sh runs (bench/evidence/*.json): each parses as a notebook, and those
// on the built-in demo data name only the demo's splits (src/core/demo.ts) — a notebook written before the demo's splits
// changed would otherwise fail only on the GPU machine, minutes into a device call. Those on the demo model fit its
// positions (the sampler refuses a prompt budget plus maxNewTokens above them), and the PRM notebooks start with
// the CoCTE cold start (a warm-up sft on the golds as chains of CTEs, then a greedy evaluation) before any PRM cell.
import { assert, assertEquals } from "./assert.ts";
import { parseNotebook } from "../src/core/notebook.ts";
import { DEMO_SPLITS } from "../src/core/demo.ts";

const dir = new URL("../bench/evidence/", import.meta.url);
const files = [...Deno.readDirSync(dir)].filter((e) => e.isFile && e.name.endsWith(".json")).map((e) => e.name).sort();

Deno.test("evidence notebooks: every bench/evidence/*.json notebook parses; the demo ones use the demo's splits", () => {
  let notebooks = 0, demo = 0;
  for (const name of files) {
    const json = JSON.parse(Deno.readTextFileSync(new URL(name, dir)));
    if (!Array.isArray(json?.cells)) continue;
    notebooks++;
    const r = parseNotebook(json);
    assert(r.ok, `${name}: ${r.ok ? "" : JSON.stringify(r.errors).slice(0, 400)}`);
    const cells = json.cells as { id: string; type: string; params?: Record<string, unknown> }[];
    if (!cells.some((c) => c.type === "dataset" && c.params?.source === "demo")) continue;
    demo++;
    for (const c of cells) {
      const split = c.params?.split;
      if (typeof split === "string" && split !== "") {
        assert(
          (DEMO_SPLITS as readonly string[]).includes(split),
          `${name}, cell ${c.id}: split "${split}" is not one of the demo's (${DEMO_SPLITS.join(", ")})`,
        );
      }
    }
  }
  assert(notebooks >= 6 && demo >= 3, `${notebooks} notebooks, ${demo} on the demo data`);
});

const DEMO_POSITIONS = JSON.parse(Deno.readTextFileSync(new URL("../public/model/config.json", import.meta.url)))
  .max_position_embeddings as number;
type EvCell = { id: string; type: string; params?: Record<string, unknown> };
const notebook = (name: string): EvCell[] => JSON.parse(Deno.readTextFileSync(new URL(name, dir))).cells;

Deno.test("evidence notebooks: on the demo model, the prompt budget plus any cell's maxNewTokens fits the model's positions", () => {
  for (const name of files.filter((f) => Array.isArray(JSON.parse(Deno.readTextFileSync(new URL(f, dir)))?.cells))) {
    const cells = notebook(name);
    if (!cells.some((c) => c.type === "model" && c.params?.source === "demo")) continue;
    const budget = cells.find((c) => c.type === "prompt")?.params?.maxPromptTokens;
    if (typeof budget !== "number") continue;
    for (const c of cells) {
      const n = c.params?.maxNewTokens;
      if (typeof n === "number") {
        assert(
          budget + n <= DEMO_POSITIONS,
          `${name}, cell ${c.id}: maxPromptTokens ${budget} + maxNewTokens ${n} > ${DEMO_POSITIONS}`,
        );
      }
    }
  }
});

Deno.test("evidence notebooks: the PRM notebooks start with the CoCTE cold start and evaluate it; the demo ones in BIRD mode", () => {
  const prm = files.filter((f) => f.startsWith("prm-"));
  assert(prm.length >= 6, prm.join(", "));
  for (const name of prm) {
    const cells = notebook(name);
    const ids = cells.map((c) => c.id);
    const cold = cells.findIndex((c) => c.type === "warmup");
    assert(cold >= 0, `${name}: no warm-up`);
    assertEquals(
      [cells[cold].params?.method, cells[cold].params?.sftTargets],
      ["sft", "cocte"],
      `${name}: the cold start`,
    );
    const prompt = cells.find((c) => c.type === "prompt");
    assertEquals(prompt?.params?.template, "chain-of-ctes@2", name);
    assert(
      cells[cold + 1]?.type === "evaluate",
      `${name}: an evaluation right after the cold start (${ids.join(", ")})`,
    );
    const firstPrm = cells.findIndex((c) => c.type === "prmdata" || c.type === "prmtrain" || c.type === "grpo");
    assert(firstPrm > cold + 1, `${name}: the cold start before PRM data, PRM train and GRPO (${ids.join(", ")})`);
    if (name.startsWith("prm-demo")) assertEquals(prompt?.params?.evidence, true, `${name}: BIRD mode`);
    // GRPO with PRM rewards names its PRM: the ORM trains after it (the 2026-12-04 runs' GRPO got the ORM).
    const grpo = cells.find((c) => c.type === "grpo");
    if (grpo?.params?.stepAdvantage) assertEquals(grpo.params.prm, "prm", `${name}: GRPO's PRM`);
  }
});
