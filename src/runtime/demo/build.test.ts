import { assert, assertEquals } from "../../../tests/assert.ts";
import type { SqlJsStatic } from "sql.js";
import { loadSqlJsDeno } from "../sql-wasm.ts";
import { buildDemo, type DemoTask, HELD_OUT_DB } from "./build.ts";
import { CONCEPTS, ENTITY_CONCEPTS } from "./concept-defs.ts";
import { CONCEPT_SPLITS } from "./concepts.ts";

const SQL = await loadSqlJsDeno();

type Db = InstanceType<SqlJsStatic["Database"]>;

function rows(db: Db, sql: string): string {
  return (db.exec(sql)[0]?.values ?? []).map((r) => JSON.stringify(r)).sort().join("\n");
}

Deno.test("demo: deterministic; every gold query returns rows, and other rows than the same query without its concepts", () => {
  const a = buildDemo(SQL, 7);
  const b = buildDemo(SQL, 7);
  for (let i = 0; i < a.databases.length; i++) {
    assertEquals(a.databases[i].bytes, b.databases[i].bytes, `database ${a.databases[i].id} is reproducible`);
  }
  assertEquals(a.splits, b.splits);
  assertEquals(a.generic, b.generic);
  const dbs = new Map(a.databases.map((d) => [d.id, new SQL.Database(d.bytes)]));
  const predicate = new Map(ENTITY_CONCEPTS.map((c) => [c.id, c.predicate]));
  let checked = 0;
  for (const t of [...Object.values(a.splits).flat(), ...a.generic]) {
    const db = dbs.get(t.db_id)!;
    const got = rows(db, t.gold_sql);
    assert(got !== "" && got !== "[null]", `${t.id} returns nothing: ${t.gold_sql}`);
    const preds = (t.concepts ?? []).map((c) => predicate.get(c)).filter((p) => p !== undefined);
    if (preds.length === 0) continue;
    let without = t.gold_sql;
    for (const p of preds) without = without.replace(p, "1");
    assert(without !== t.gold_sql && rows(db, without) !== got, `${t.id}: the concept changes nothing (${t.question})`);
    checked++;
  }
  assert(checked > 300, `${checked} questions checked against their concept-free query`);
  for (const db of dbs.values()) db.close();
});

Deno.test("demo: splits — test-concepts asks new questions about trained concepts, test-templates new frames, heldout-db only the clinic", () => {
  const d = buildDemo(SQL, 20261129);
  const { train } = d.splits;
  const tc = d.splits["test-concepts"], tt = d.splits["test-templates"], held = d.splits["heldout-db"];
  assert(
    train.length >= 200 && tc.length >= 80 && tt.length >= 50 && held.length >= 40,
    `sizes ${train.length} ${tc.length} ${tt.length} ${held.length}`,
  );
  const texts = new Map<string, string>();
  for (const s of CONCEPT_SPLITS) {
    for (const t of d.splits[s]) {
      assert(
        !texts.has(t.question) || texts.get(t.question) === s,
        `"${t.question}" in ${texts.get(t.question)} and ${s}`,
      );
      texts.set(t.question, s);
    }
  }
  const trainConcepts = new Set(train.flatMap((t) => t.concepts ?? []));
  const trainFrames = new Set(train.map((t) => t.template));
  const trainPairs = new Set(
    train.filter((t) => (t.concepts ?? []).length === 2).map((t) => [...t.concepts!].sort().join("+")),
  );
  for (const t of tc) {
    assert(t.concepts?.every((c) => trainConcepts.has(c)), `${t.id}: a concept never trained`);
    assert(trainFrames.has(t.template), `${t.id}: test-concepts uses trained frames`);
    assert(t.novelty && t.novelty.length > 0, `${t.id} says what is new`);
    if (t.novelty.includes("combination")) {
      assert(!trainPairs.has([...t.concepts!].sort().join("+")), `${t.id}: pair trained`);
    }
  }
  for (const kind of ["phrasing", "value", "filter", "combination"]) {
    assert(tc.some((t) => t.novelty?.includes(kind as never)), `test-concepts has ${kind} novelties`);
  }
  for (const t of tt) {
    assert(t.concepts?.every((c) => trainConcepts.has(c)), `${t.id}: a concept never trained`);
    assert(!trainFrames.has(t.template), `${t.id}: frame ${t.template} is trained`);
  }
  assert(held.every((t) => t.db_id === HELD_OUT_DB), "heldout-db is the clinic");
  assert(
    ![...train, ...tc, ...tt, ...d.generic].some((t) => t.db_id === HELD_OUT_DB),
    "the clinic appears nowhere else",
  );
  assert(
    !held.some((t) => t.concepts?.some((c) => trainConcepts.has(c))),
    "no trained concept on the held-out database",
  );
  // Every concept of a training database is trained and tested.
  for (const c of CONCEPTS.filter((c) => !c.id.startsWith(`${HELD_OUT_DB}.`))) {
    assert(trainConcepts.has(c.id), `${c.id} trained`);
    assert([...tc, ...tt].some((t) => t.concepts?.includes(c.id)), `${c.id} tested`);
  }
});

Deno.test("demo: a concept question names its concept and carries exactly its definitions as evidence; generic questions carry none", () => {
  const d = buildDemo(SQL, 20261129);
  const defs = new Map(d.definitions.map((x) => [x.id, x]));
  const words = new Map<string, string[]>(
    CONCEPTS.map((c) => [c.id, c.kind === "entity" ? [c.term[0], c.term[1], c.state] : [c.term]]),
  );
  const all: DemoTask[] = Object.values(d.splits).flat();
  for (const t of all.filter((t) => t.concepts)) {
    for (const c of t.concepts!) {
      assert(
        words.get(c)!.some((w) => t.question.toLowerCase().includes(w.toLowerCase())),
        `${t.id} names ${c}: ${t.question}`,
      );
    }
    assertEquals(t.evidence, t.concepts!.map((c) => defs.get(c)!.definition).join("; "));
    for (const c of t.concepts!) {
      assert(
        t.gold_sql.includes(defs.get(c)!.fragment.split(" WHERE ")[0].replace(/^SUM\([^)]*\) /, "")),
        `${t.id}: its SQL holds ${c}'s definition`,
      );
    }
  }
  for (const t of d.generic) assert(!t.concepts, "generic");
  const termsUsed = CONCEPTS.flatMap((c) => (c.kind === "entity" ? [c.term[0]] : [c.term]));
  for (const t of d.generic) {
    for (const w of termsUsed) {
      assert(
        !t.question.toLowerCase().includes(w.toLowerCase()),
        `generic question names a concept (${w}): ${t.question}`,
      );
    }
  }
});

Deno.test("demo: the data looks like real data (NULLs, skew)", () => {
  const d = buildDemo(SQL, 1);
  const shop = new SQL.Database(d.databases.find((x) => x.id === "shop")!.bytes);
  const nullSegments = Number(shop.exec("SELECT COUNT(*) FROM customers WHERE segment IS NULL")[0].values[0][0]);
  assert(nullSegments > 50, `NULL segments ${nullSegments}`);
  const top = shop.exec("SELECT COUNT(*) c FROM orders GROUP BY customer_id ORDER BY c DESC LIMIT 1")[0].values[0][0];
  const median = shop.exec(
    "SELECT COUNT(*) c FROM orders GROUP BY customer_id ORDER BY c LIMIT 1 OFFSET (SELECT COUNT(DISTINCT customer_id)/2 FROM orders)",
  )[0].values[0][0];
  assert(Number(top) > 4 * Number(median), `skewed orders per customer: top ${top}, median ${median}`);
  shop.close();
});

Deno.test("demo: public/demo is exactly what `rlvr make-demo` generates", async () => {
  const root = new URL("../../../public/demo/", import.meta.url);
  const manifest = JSON.parse(await Deno.readTextFile(new URL("manifest.json", root)));
  const demo = buildDemo(SQL, manifest.seed);
  const jsonl = (xs: readonly unknown[]) => xs.map((t) => JSON.stringify(t)).join("\n") + "\n";
  for (const d of demo.databases) {
    const shipped = await Deno.readFile(new URL(`${d.id}/${d.id}.sqlite`, root));
    assertEquals(shipped, d.bytes, `public/demo/${d.id}/${d.id}.sqlite is stale: run npx rlvr make-demo`);
  }
  assertEquals(Object.keys(manifest.splits), [...CONCEPT_SPLITS]);
  for (const [name, tasks] of Object.entries(demo.splits)) {
    assertEquals(
      await Deno.readTextFile(new URL(`${name}.jsonl`, root)),
      jsonl(tasks),
      `public/demo/${name}.jsonl is stale`,
    );
  }
  assertEquals(
    await Deno.readTextFile(new URL("generic.jsonl", root)),
    jsonl(demo.generic),
    "public/demo/generic.jsonl is stale",
  );
  assertEquals(
    JSON.parse(await Deno.readTextFile(new URL("concepts.json", root))),
    demo.definitions,
    "public/demo/concepts.json is stale",
  );
});

Deno.test("demo: test-written — hand-written questions, >= 80 on trained concepts and >= 20 on the clinic, every gold runs and returns rows", () => {
  const d = buildDemo(SQL, 20261129);
  const written = d.splits["test-written"];
  const trainConcepts = new Set(d.splits.train.flatMap((t) => t.concepts ?? []));
  const onTrained = written.filter((t) => t.concepts?.every((c) => trainConcepts.has(c)));
  const onClinic = written.filter((t) =>
    t.db_id === HELD_OUT_DB && t.concepts?.every((c) => c.startsWith(`${HELD_OUT_DB}.`))
  );
  assert(
    onTrained.length >= 80 && onClinic.length >= 20 && onTrained.length + onClinic.length === written.length,
    `${onTrained.length} trained, ${onClinic.length} clinic of ${written.length}`,
  );
  // Not the generator's: no written question is a frame's or template's text of any seed's other splits.
  const generated = new Set(
    [...Object.entries(d.splits).filter(([s]) => s !== "test-written").flatMap(([, ts]) => ts), ...d.generic].map((t) =>
      t.question.toLowerCase()
    ),
  );
  for (const t of written) {
    assert(!generated.has(t.question.toLowerCase()), `${t.id} is a generated question: ${t.question}`);
  }
  assertEquals(buildDemo(SQL, 7).splits["test-written"], written, "the same for every seed");
  const dbs = new Map(d.databases.map((x) => [x.id, new SQL.Database(x.bytes)]));
  for (const t of written) {
    let got = "";
    try {
      got = rows(dbs.get(t.db_id)!, t.gold_sql);
    } catch (e) {
      throw new Error(`${t.id}: the gold fails on ${t.db_id}: ${e instanceof Error ? e.message : e}\n${t.gold_sql}`);
    }
    assert(got !== "" && got !== "[null]", `${t.id} returns nothing: ${t.gold_sql}`);
  }
  for (const db of dbs.values()) db.close();
});
