import { assert, assertEquals } from "../../tests/assert.ts";
import {
  addCell,
  type CellId,
  defaultParams,
  emptyNotebook,
  getCell,
  moveCell,
  type Notebook,
  parseNotebook,
  removeCell,
  setCollapsed,
  updateParams,
  validateParams,
} from "./notebook.ts";
import { CELL_TYPES } from "./notebook-params.ts";
import { REWARD_PRESETS } from "./rewards.ts";
import { Rng } from "./rng.ts";
import { decodeShareHash, encodeShareHash } from "./share.ts";

function throws(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (e) {
    assert(e instanceof Error && pattern.test(e.message), `wrong error: ${String(e)}`);
    return;
  }
  throw new Error(`expected an error matching ${pattern}`);
}

function fullNotebook(): Notebook {
  let doc = emptyNotebook("Spider GRPO");
  for (const t of CELL_TYPES) doc = addCell(doc, t);
  doc = updateParams(doc, doc.cells[0].id, "markdown", { source: "# Hello\n<script>alert(1)</script>" });
  doc = updateParams(doc, doc.cells[2].id, "dataset", {
    source: "url",
    questionsUrl: "https://example.org/q.jsonl",
    dbRoot: "/data/spider/",
  });
  doc = updateParams(doc, doc.cells[5].id, "reward", { spec: REWARD_PRESETS["reasoning-r1"], comparison: "bag" });
  doc = updateParams(doc, doc.cells[7].id, "select", {
    templates: ["omnisql@1", "think-answer@1"],
    models: ["demo", "Qwen/Qwen2.5-Coder-0.5B-Instruct"],
  });
  return doc;
}

function deepFreeze<T>(x: T): T {
  if (typeof x === "object" && x !== null) {
    Object.freeze(x);
    for (const v of Object.values(x)) deepFreeze(v);
  }
  return x;
}

Deno.test("notebook: every cell type round-trips through JSON unchanged, without warnings", () => {
  const doc = fullNotebook();
  assertEquals(doc.cells.map((c) => c.type), [...CELL_TYPES]);
  assertEquals(doc.cells.map((c) => c.id), CELL_TYPES.map((_, i) => `c${i + 1}`));
  const r = parseNotebook(JSON.parse(JSON.stringify(doc)));
  assert(r.ok, JSON.stringify(r));
  assertEquals(r.doc, doc);
  assertEquals(r.warnings, []);
});

Deno.test("parseNotebook: defaults filled in, ids assigned without clashing with later ones", () => {
  const r = parseNotebook({
    version: 1,
    cells: [{ type: "grpo" }, { type: "markdown", id: "c1", params: { source: "hi" } }, { type: "gpu" }],
  });
  assert(r.ok, JSON.stringify(r));
  assertEquals(r.doc.title, "Untitled");
  assertEquals(r.doc.cells.map((c) => c.id), ["c2", "c1", "c3"]);
  const g = r.doc.cells[0];
  assert(g.type === "grpo");
  assertEquals(g.params, defaultParams("grpo"));
  assertEquals(
    [g.params.G, g.params.eps_low, g.params.eps_high, g.params.aggregation, g.params.advantage, g.params.kl],
    [8, 0.2, 0.28, "token-mean", "mean-std", 0],
  );
  assertEquals(r.doc.cells[2].params, {});
});

Deno.test("parseNotebook: errors carry paths; unknown types, duplicates and versions are errors", () => {
  const r = parseNotebook({
    version: 1,
    title: "t",
    cells: [
      { type: "grpo", id: "a", params: { lr: "fast", eps_low: 1.5, G: 2.5, aggregation: "mean", kl: 0.1 } },
      { type: "shell", id: "b", params: { cmd: "rm -rf /" } },
      { type: "markdown", id: "a" },
      { type: "model", id: "m", params: { source: "hub" } },
      { type: "dataset", id: "d", params: { source: "url", questionsUrl: "javascript:alert(1)" } },
      {
        type: "reward",
        id: "r",
        params: { spec: { components: [{ name: "bogus", weight: 1 }] }, comparison: "fuzzy" },
      },
      "cell",
      { type: "evaluate", id: "bad id!" },
      { type: "prompt", id: "p", params: { template: "mine@9" } },
      { type: "select", id: "s", params: { templates: ["omnisql@1", "nope@1"] } },
    ],
  });
  assert(!r.ok);
  const paths = r.errors.map((e) => e.path);
  assertEquals(paths, [
    "cells[0].params.G",
    "cells[0].params.lr",
    "cells[0].params.eps_low",
    "cells[0].params.aggregation",
    "cells[1].type",
    "cells[2].id",
    "cells[3].params.repo",
    "cells[4].params.questionsUrl",
    "cells[4].params.questionsUrl",
    "cells[4].params.dbRoot",
    "cells[5].params.spec",
    "cells[5].params.comparison",
    "cells[6]",
    "cells[7].id",
    "cells[8].params.template",
    "cells[9].params.templates",
  ]);
  assert(/unknown reward component "bogus"/.test(r.errors[10].message), r.errors[10].message);
  assert(/unknown prompt template "mine@9"/.test(r.errors[14].message), r.errors[14].message);
  assert(/unknown cell type "shell"/.test(r.errors[4].message), r.errors[4].message);
  assert(/duplicate/.test(r.errors[5].message));
  const v = parseNotebook({ version: 2, cells: [] });
  assert(!v.ok && v.errors[0].path === "version" && /unsupported version 2/.test(v.errors[0].message));
  for (const bad of [null, 42, "x", [], undefined, { version: 1, cells: {} }, { version: 1, title: 7 }]) {
    const b = parseNotebook(bad);
    assert(!b.ok && b.errors.length > 0, `accepted ${JSON.stringify(bad)}`);
  }
});

Deno.test("model cell: adapter is an optional http(s) or relative URL; other schemes and non-strings are refused", () => {
  const ok = validateParams("model", {
    source: "url",
    url: "/models/base",
    adapter: "runs/x/adapter",
    loraRank: 8,
    loraAlpha: 16,
  });
  assert(ok.ok, JSON.stringify(ok));
  assertEquals(ok.params.adapter, "runs/x/adapter");
  assertEquals(ok.params.loraRank, 8);
  const http = validateParams("model", { adapter: "https://example.org/adapters/spider-r16/" });
  assert(http.ok && http.params.adapter === "https://example.org/adapters/spider-r16/");
  // Absent, or emptied in the form: no adapter (a fresh one, B = 0), and no key in the document.
  for (const params of [{}, { adapter: "" }]) {
    const r = validateParams("model", params);
    assert(r.ok && !("adapter" in r.params), JSON.stringify(r));
  }
  for (
    const [bad, pattern] of [
      ["javascript:alert(1)", /not an http\(s\) or relative URL/],
      ["file:///etc/passwd", /not an http\(s\) or relative URL/],
      [7, /expected a string/],
      ["x".repeat(5000), /longer than 4096/],
    ] as const
  ) {
    const r = validateParams("model", { adapter: bad });
    assert(!r.ok, `accepted ${String(bad).slice(0, 40)}`);
    assertEquals(r.errors.map((e) => e.path), ["params.adapter"]);
    assert(pattern.test(r.errors[0].message), r.errors[0].message);
  }
  // In a document: the error carries the cell's path; a good one round-trips unchanged.
  const doc = parseNotebook({
    version: 1,
    title: "t",
    cells: [{ type: "model", id: "m", params: { adapter: "data:text/plain,x" } }],
  });
  assert(!doc.ok && doc.errors[0].path === "cells[0].params.adapter", JSON.stringify(doc));
  const good = parseNotebook({
    version: 1,
    title: "t",
    cells: [{ type: "model", id: "m", params: { adapter: "../adapters/a" } }],
  });
  assert(good.ok && good.warnings.length === 0);
  assertEquals((good.doc.cells[0].params as { adapter?: string }).adapter, "../adapters/a");
});

Deno.test("parseNotebook: unknown fields are dropped and reported as warnings", () => {
  const r = parseNotebook({
    version: 1,
    extra: 1,
    cells: [{ type: "export", id: "x", output: "cached", params: { what: "metrics", path: "/etc" } }],
  });
  assert(r.ok);
  assertEquals(r.doc.cells[0], { id: "x", type: "export", collapsed: false, params: { what: "metrics" } });
  assertEquals(r.warnings.map((w) => w.path), ["extra", "cells[0].output", "cells[0].params.path"]);
});

Deno.test("parseNotebook: never throws on mutated documents; accepted output re-parses to itself", () => {
  const rng = new Rng(2024);
  const base = JSON.parse(JSON.stringify(fullNotebook()));
  const junk: unknown[] = [
    null,
    -1,
    1e308,
    "",
    "x".repeat(600),
    [],
    {},
    true,
    [1, "a"],
    { a: { b: 1 } },
    NaN,
    0.5,
    "__proto__",
    10n,
    Symbol("s"),
  ];
  const paths = (x: unknown, pre: (string | number)[] = []): (string | number)[][] =>
    typeof x === "object" && x !== null
      ? Object.entries(x).flatMap((
        [k, v],
      ) => [[...pre, Array.isArray(x) ? Number(k) : k], ...paths(v, [...pre, Array.isArray(x) ? Number(k) : k])])
      : [];
  let accepted = 0;
  for (let trial = 0; trial < 300; trial++) {
    const doc = JSON.parse(JSON.stringify(base));
    const all = paths(doc);
    for (let m = 0; m < 1 + rng.int(3); m++) {
      const p = all[rng.int(all.length)];
      let o = doc;
      for (const k of p.slice(0, -1)) o = o?.[k];
      if (typeof o === "object" && o !== null) o[p[p.length - 1]] = junk[rng.int(junk.length)];
    }
    const r = parseNotebook(doc);
    if (r.ok) {
      accepted++;
      const again = parseNotebook(JSON.parse(JSON.stringify(r.doc)));
      assert(again.ok && again.warnings.length === 0, `trial ${trial}: output does not re-parse cleanly`);
      assertEquals(again.doc, r.doc);
    } else {
      assert(r.errors.every((e) => typeof e.path === "string" && e.message.length > 0));
    }
  }
  assert(accepted > 0 && accepted < 300, `accepted ${accepted} of 300: the fuzz should hit both outcomes`);
});

Deno.test("actions: add, remove, move, update, collapse are pure and validated", () => {
  const doc = deepFreeze(fullNotebook());
  const before = JSON.stringify(doc);
  const grpoId = doc.cells[CELL_TYPES.indexOf("grpo")].id;
  const a = addCell(doc, "markdown", { at: 0, params: { source: "intro" } });
  assertEquals(a.cells[0].type, "markdown");
  assertEquals(a.cells.length, doc.cells.length + 1);
  assert(!doc.cells.some((c) => c.id === a.cells[0].id), "fresh id");
  const r = removeCell(a, a.cells[0].id);
  assertEquals(r, doc);
  const m = moveCell(doc, grpoId, 0);
  assertEquals(m.cells[0].id, grpoId);
  assertEquals(moveCell(m, grpoId, CELL_TYPES.indexOf("grpo")), doc);
  assertEquals(moveCell(doc, grpoId, 999).cells.at(-1)?.id, grpoId);
  const u = updateParams(doc, grpoId, "grpo", { eps_high: 0.4, aggregation: "seq-mean-token-sum-norm" });
  const g = getCell(u, grpoId, "grpo");
  assert(
    g !== undefined && g.params.eps_high === 0.4 && g.params.aggregation === "seq-mean-token-sum-norm" &&
      g.params.G === 8,
  );
  throws(() => updateParams(doc, grpoId, "grpo", { G: 1 }), /params\.G: 1 is outside/);
  throws(() => updateParams(doc, grpoId, "warmup", { lr: 1 }), /is a grpo cell/);
  throws(() => removeCell(doc, "nope" as CellId), /no cell/);
  throws(() => addCell(doc, "gpu", { id: grpoId }), /taken/);
  throws(() => addCell(doc, "evaluate", { params: { n: 0 } }), /params\.n/);
  const c = setCollapsed(doc, grpoId, true);
  assertEquals(getCell(c, grpoId, "grpo")?.collapsed, true);
  assertEquals(getCell(c, grpoId, "model"), undefined);
  assertEquals(JSON.stringify(doc), before, "the input document is unchanged");
  const okForm = validateParams("selfconsistency", { N: 16, vote: "logprob" });
  assert(okForm.ok && okForm.params.N === 16 && okForm.params.logprobWeight === "exp-mean");
  const badForm = validateParams("selfconsistency", { N: 0 });
  assert(!badForm.ok && badForm.errors[0].path === "params.N");
});

Deno.test("shipped notebooks (notebooks/*.json) parse without errors or warnings and survive a share link", async () => {
  const dir = new URL("../../notebooks/", import.meta.url);
  let n = 0;
  for await (const e of Deno.readDir(dir)) {
    if (!e.name.endsWith(".json")) continue;
    const raw: unknown = JSON.parse(await Deno.readTextFile(new URL(e.name, dir)));
    const r = parseNotebook(raw);
    assert(r.ok, `${e.name}: ${JSON.stringify(r)}`);
    assertEquals(r.warnings, [], e.name);
    const back = decodeShareHash(encodeShareHash(r.doc));
    assert(back.ok, e.name);
    assertEquals(back.doc, r.doc, e.name);
    n++;
  }
  assert(n > 0, "no shipped notebooks found");
});
