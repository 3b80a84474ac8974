import { assertEquals } from "../../tests/assert.ts";
import demo from "../../notebooks/demo.json" with { type: "json" };
import { parseNotebook } from "../core/notebook.ts";
import { databaseChoices, DEMO_DATABASES, stageChoices, stageLabel } from "./ask-model.ts";

function demoDoc() {
  const r = parseNotebook(demo);
  if (!r.ok) throw new Error("demo notebook invalid");
  return r.doc;
}

Deno.test("ask cell model: the demo's databases are the manifest's", async () => {
  const m = JSON.parse(await Deno.readTextFile(new URL("../../public/demo/manifest.json", import.meta.url)));
  assertEquals([...DEMO_DATABASES].sort(), Object.keys(m.databases).sort());
  const cells = demoDoc().cells;
  assertEquals(databaseChoices(cells, "shop"), [...DEMO_DATABASES]);
  assertEquals(databaseChoices(cells, "pets"), [...DEMO_DATABASES, "pets"]);
  const upload = cells.map((c) =>
    c.type === "dataset" ? { ...c, params: { ...c.params, source: "upload" as const } } : c
  );
  assertEquals(databaseChoices(upload, "mine"), null, "not the demo: typed");
});

Deno.test("ask cell model: stages are the training cells with a checkpoint, in notebook order", () => {
  const cells = demoDoc().cells;
  assertEquals(stageChoices(cells, {}), []);
  assertEquals(stageChoices(cells, { grpo: 40, warmup: 3, "prm-x": 9 }), [
    { cellId: "warmup", type: "warmup", step: 3 },
    { cellId: "grpo", type: "grpo", step: 40 },
  ]);
  assertEquals(stageLabel({ cellId: "warmup", type: "warmup", step: 3 }), 'warm-up "warmup", round 3');
  assertEquals(stageLabel({ cellId: "grpo", kind: "grpo", step: 40 }), 'GRPO "grpo", step 40');
});
