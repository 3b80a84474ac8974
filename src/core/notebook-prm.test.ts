import { assert, assertEquals } from "../../tests/assert.ts";
import { defaultParams, parseNotebook, validateParams } from "./notebook.ts";

Deno.test("PRM cells: defaults, and bad values refused with the reason", () => {
  const d = defaultParams("prmdata");
  assertEquals([d.template, d.chains, d.rollouts, d.budget, d.balance, d.dropEmptyGold], [
    "chain-of-ctes@2",
    4,
    4,
    32,
    1,
    true,
  ]);
  assertEquals(defaultParams("prmtrain").labels, "process");
  assert(!("load" in defaultParams("prmtrain")), "no load by default");
  const greedy = validateParams("prmdata", { temperature: 0, chains: 4 });
  assert(!greedy.ok && greedy.errors[0].message.includes("greedy"), JSON.stringify(greedy));
  const labels = validateParams("prmtrain", { labels: "steps" });
  assert(!labels.ok && labels.errors[0].message.includes('"process", "outcome"'), JSON.stringify(labels));
  const ref = validateParams("prmtrain", { data: "not an id!" });
  assert(!ref.ok && ref.errors[0].path === "params.data", JSON.stringify(ref));
  const sc = validateParams("selfconsistency", { prm: ["prm", "bad id"] });
  assert(!sc.ok && sc.errors[0].message.includes("PRM train cell ids"), JSON.stringify(sc));
  const tpl = validateParams("prmdata", { template: "nope@1" });
  assert(!tpl.ok && tpl.errors[0].message.includes("unknown prompt template"), JSON.stringify(tpl));
});

Deno.test("GRPO and self-consistency: the PRM fields are absent at their defaults, so older documents read back unchanged", () => {
  const cells = [
    { id: "g", type: "grpo", params: { G: 4 } },
    { id: "s", type: "selfconsistency", params: { N: 4 } },
    { id: "g2", type: "grpo", params: { stepAdvantage: "chain", prm: "" } },
    { id: "g3", type: "grpo", params: { stepAdvantage: "prm-weighted", prm: "prm" } },
    { id: "s2", type: "selfconsistency", params: { prm: ["prm", "orm"], prmAggregate: "mean" } },
  ];
  const r = parseNotebook({ version: 1, title: "t", cells });
  assert(r.ok, JSON.stringify(!r.ok && r.errors));
  const p = Object.fromEntries(r.doc.cells.map((c) => [c.id, c.params as Record<string, unknown>]));
  for (const id of ["g", "s", "g2"]) {
    assert(
      !("stepAdvantage" in p[id]) && !("prm" in p[id]) && !("prmAggregate" in p[id]),
      `${id}: ${JSON.stringify(p[id])}`,
    );
  }
  assertEquals([p.g3.stepAdvantage, p.g3.prm, p.s2.prm, p.s2.prmAggregate], [
    "prm-weighted",
    "prm",
    ["prm", "orm"],
    "mean",
  ]);
  // A document round-trips exactly.
  const again = parseNotebook(JSON.parse(JSON.stringify(r.doc)));
  assert(again.ok && JSON.stringify(again.doc) === JSON.stringify(r.doc), "round trip");
});
