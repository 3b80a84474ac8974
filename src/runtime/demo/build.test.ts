import { assert, assertEquals } from "../../../tests/assert.ts";
import { loadSqlJsDeno } from "../sql-wasm.ts";
import { buildDemo } from "./build.ts";

const SQL = await loadSqlJsDeno();

Deno.test("demo: deterministic, every gold query runs and most return rows; splits never share a template", () => {
  const a = buildDemo(SQL, 7);
  const b = buildDemo(SQL, 7);
  for (let i = 0; i < a.databases.length; i++) {
    assertEquals(a.databases[i].bytes, b.databases[i].bytes, `database ${a.databases[i].id} is reproducible`);
  }
  assertEquals(a.splits, b.splits);
  const dbs = new Map(a.databases.map((d) => [d.id, new SQL.Database(d.bytes)]));
  let empty = 0;
  let total = 0;
  const all = [...a.splits.train, ...a.splits.test, ...a.splits.heldout];
  for (const t of all) {
    const db = dbs.get(t.db_id);
    assert(db, `database ${t.db_id}`);
    const res = db.exec(t.gold_sql);
    total++;
    const rows = res[0]?.values ?? [];
    if (rows.length === 0 || rows.every((r) => r.every((v) => v === null))) empty++;
  }
  assert(empty / total < 0.05, `${empty}/${total} gold queries return nothing`);
  const trainT = new Set(a.splits.train.map((t) => t.template));
  for (const t of a.splits.test) assert(!trainT.has(t.template), `template ${t.template} is in train and test`);
  const heldDbs = new Set(a.splits.heldout.map((t) => t.db_id));
  for (const t of [...a.splits.train, ...a.splits.test]) assert(!heldDbs.has(t.db_id), "held-out database leaks");
  assert(a.splits.train.length > 100 && a.splits.test.length > 20 && a.splits.heldout.length > 10, "split sizes");
  // Organisation-specific definitions are carried in evidence.
  assert(all.filter((t) => t.evidence).length > all.length / 3, "many questions carry evidence");
  for (const db of dbs.values()) db.close();
});

Deno.test("demo: the data looks like real data (NULLs, skew)", () => {
  const d = buildDemo(SQL, 1);
  const shop = new SQL.Database(d.databases.find((x) => x.id === "shop")!.bytes);
  const nullSegments = Number(shop.exec("SELECT COUNT(*) FROM customers WHERE segment IS NULL")[0].values[0][0]);
  assert(nullSegments > 50, `NULL segments ${nullSegments}`);
  const top = shop.exec("SELECT COUNT(*) c FROM orders GROUP BY customer_id ORDER BY c DESC LIMIT 1")[0].values[0][0];
  const median = shop.exec("SELECT COUNT(*) c FROM orders GROUP BY customer_id ORDER BY c LIMIT 1 OFFSET (SELECT COUNT(DISTINCT customer_id)/2 FROM orders)")[0].values[0][0];
  assert(Number(top) > 4 * Number(median), `skewed orders per customer: top ${top}, median ${median}`);
  shop.close();
});

Deno.test("demo: public/demo is exactly what `rlvr make-demo` generates", async () => {
  const root = new URL("../../../public/demo/", import.meta.url);
  const manifest = JSON.parse(await Deno.readTextFile(new URL("manifest.json", root)));
  const demo = buildDemo(SQL, manifest.seed);
  for (const d of demo.databases) {
    const shipped = await Deno.readFile(new URL(`${d.id}/${d.id}.sqlite`, root));
    assertEquals(shipped, d.bytes, `public/demo/${d.id}/${d.id}.sqlite is stale: run npx rlvr make-demo`);
  }
  for (const [name, tasks] of Object.entries(demo.splits)) {
    const shipped = await Deno.readTextFile(new URL(`${name}.jsonl`, root));
    assertEquals(shipped, tasks.map((t) => JSON.stringify(t)).join("\n") + "\n", `public/demo/${name}.jsonl is stale`);
  }
});
