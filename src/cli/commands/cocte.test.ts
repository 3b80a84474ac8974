import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { splitChain } from "../../core/cocte.ts";
import { parseQuestions } from "../../core/loaders.ts";
import { loadSqlJs } from "../../runtime/sql-wasm.ts";
import { command } from "./cocte.ts";

Deno.test({
  name: "cocte command: one line per question, steps runnable, reasons for the rest, a dataset of the converted",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-cocte-" });
    try {
      const root = `${dir}/db`;
      await Deno.mkdir(`${root}/shop`, { recursive: true });
      const SQL = await loadSqlJs();
      const db = new SQL.Database();
      db.exec(
        "CREATE TABLE items(id INTEGER PRIMARY KEY, name TEXT, price REAL, cat TEXT); INSERT INTO items VALUES (1,'pen',1.5,'a'),(2,'ink',0.5,'a'),(3,'pad',3.0,'b');",
      );
      await Deno.writeFile(`${root}/shop/shop.sqlite`, (db as unknown as { export(): Uint8Array }).export());
      db.close();
      const lines = [
        { db_id: "shop", question: "q0", query: "SELECT cat, count(*) FROM items WHERE price > 1 GROUP BY cat" },
        { db_id: "shop", question: "q1", query: "SELECT nope FROM items" },
        { db_id: "ghost", question: "q2", query: "SELECT 1" },
        { db_id: "shop", question: "q3", query: "SELECT 1" },
      ];
      await Deno.writeTextFile(`${dir}/q.jsonl`, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
      const res = await command.run([
        "--questions",
        `${dir}/q.jsonl`,
        "--db-root",
        root,
        "--out",
        `${dir}/out.jsonl`,
        "--dataset",
        `${dir}/ds.jsonl`,
        "--workers",
        "1",
      ]);
      assertEquals({
        q: res.questions,
        c: res.converted,
        f: res.failed,
        g: res.gold_failed,
        lengths: res.chain_lengths,
      }, { q: 4, c: 1, f: 3, g: 1, lengths: { "2": 1 } });
      const out = (await Deno.readTextFile(`${dir}/out.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
      assertEquals(out.map((l) => [l.index, l.ok]), [[0, true], [1, false], [2, false], [3, false]]);
      assertEquals(out[1].reason, "gold failed: syntax: no such column: nope");
      assert(String(out[2].reason).startsWith('database: database "ghost"'), out[2].reason);
      assertEquals(out[3].reason, "no rewrite: no step to make");
      const first = out[0];
      assertEquals(first.steps.map((s: { name: string }) => s.name), ["filtered_items", "per_cat"]);
      assertEquals(
        first.steps[1].sql,
        "WITH\nfiltered_items AS (\nSELECT * FROM items WHERE price > 1\n),\nper_cat AS (\nSELECT cat, count(*) AS row_count FROM filtered_items GROUP BY cat\n)\nSELECT * FROM per_cat",
      );
      assertEquals(splitChain(first.cocte).steps.map((s) => s.sql), first.steps.map((s: { body: string }) => s.body));
      const ds = parseQuestions(await Deno.readTextFile(`${dir}/ds.jsonl`));
      assertEquals(ds.items.map((i) => [i.task.id, i.task.gold_sql]), [["0/cocte", first.cocte]]);
      await assertRejects(
        () => command.run(["--questions", `${dir}/q.jsonl`, "--db-root", `${dir}/none`, "--out", `${dir}/o`]),
        /is not a directory/,
      );
      await assertRejects(
        () => command.run(["--questions", `${dir}/missing.jsonl`, "--db-root", root, "--out", `${dir}/o`]),
        /cannot read questions file/,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
