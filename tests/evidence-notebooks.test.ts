// The evidence notebooks the H200 scripts run (bench/evidence/*.json): each parses as a notebook, and those on the
// built-in demo data name only the demo's splits (src/core/demo.ts) — a notebook written before the demo's splits
// changed would otherwise fail only on the GPU machine, minutes into a device call.
import { assert } from "./assert.ts";
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
        assert((DEMO_SPLITS as readonly string[]).includes(split), `${name}, cell ${c.id}: split "${split}" is not one of the demo's (${DEMO_SPLITS.join(", ")})`);
      }
    }
  }
  assert(notebooks >= 8 && demo >= 3, `${notebooks} notebooks, ${demo} on the demo data`);
});
