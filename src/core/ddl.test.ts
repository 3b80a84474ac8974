import initSqlJs from "sql.js";
import { assertEquals } from "../../tests/assert.ts";
import { sharedDatasets } from "../../tests/shared.ts";
import { columnComment, renderDdl } from "./ddl.ts";
import type { DbSchema } from "./schema.ts";
import { introspectSchema } from "./schema.ts";

const SQL = await initSqlJs();

const SHOP: DbSchema = {
  dbId: "shop",
  tables: [
    {
      name: "order items",
      naturalName: "order lines",
      rowCount: 3,
      primaryKey: ["order id", "line"],
      foreignKeys: [
        { column: "order id", refTable: "orders", refColumn: null },
        { column: "sku", refTable: "products", refColumn: "sku" },
      ],
      columns: [
        { name: "order id", type: "INTEGER", notNull: true, primaryKey: true, examples: [1, 2] },
        { name: "line", type: "INTEGER", notNull: false, primaryKey: true, examples: [] },
        {
          name: "sku",
          type: "TEXT",
          notNull: true,
          primaryKey: false,
          examples: ["O'Neil", "b", "c"],
          naturalName: "stock keeping unit",
          description: "product code,\n printed on the label",
          valueDescription: "A: active; X: retired",
        },
      ],
    },
    {
      name: "orders",
      rowCount: 2,
      primaryKey: ["id"],
      foreignKeys: [],
      columns: [{ name: "id", type: "", notNull: false, primaryKey: true, examples: [7] }],
    },
  ],
};

Deno.test("ddl: exact OmniSQL-style text; keys to absent tables are left out", () => {
  assertEquals(
    renderDdl(SHOP, { examplesPerColumn: 2 }),
    [
      `CREATE TABLE "order items" ( -- order lines`,
      `    "order id" INTEGER NOT NULL, -- example: [1, 2]`,
      `    line INTEGER,`,
      `    sku TEXT NOT NULL, -- stock keeping unit, product code, printed on the label, values: A: active; X: retired, example: ['O''Neil', 'b']`,
      `    PRIMARY KEY ("order id", line),`,
      `    CONSTRAINT fk_order_items_order_id FOREIGN KEY ("order id") REFERENCES orders`,
      `);`,
      ``,
      `CREATE TABLE orders (`,
      `    id, -- example: [7]`,
      `    PRIMARY KEY (id)`,
      `);`,
    ].join("\n"),
  );
  assertEquals(
    renderDdl(SHOP, { tables: ["ORDERS"], examplesPerColumn: 0 }),
    "CREATE TABLE orders (\n    id,\n    PRIMARY KEY (id)\n);",
  );
  assertEquals(columnComment(SHOP.tables[0].columns[2], 1, false), "example: ['O''Neil']");
});

Deno.test("ddl: the text is valid SQLite that recreates the same tables and keys", () => {
  const db = new SQL.Database();
  db.run(renderDdl(SHOP));
  const back = introspectSchema(db, "shop", { maxExamples: 0 });
  assertEquals(back.tables.map((t) => [t.name, t.primaryKey, t.columns.map((c) => [c.name, c.type, c.notNull])]), [
    ["order items", ["order id", "line"], [["order id", "INTEGER", true], ["line", "INTEGER", false], [
      "sku",
      "TEXT",
      true,
    ]]],
    ["orders", ["id"], [["id", "", false]]],
  ]);
  db.close();
});

Deno.test({
  name: "ddl: round trip through SQLite for every Spider database (tables, columns, types, keys)",
  ignore: sharedDatasets === null,
  fn() {
    let n = 0;
    for (const entry of Deno.readDirSync(`${sharedDatasets}/spider-train/database`)) {
      const src = new SQL.Database(
        Deno.readFileSync(`${sharedDatasets}/spider-train/database/${entry.name}/${entry.name}.sqlite`),
      );
      const schema = introspectSchema(src, entry.name, { maxExamples: 3, rowCounts: false });
      src.close();
      const copy = new SQL.Database();
      copy.run(renderDdl(schema));
      const back = introspectSchema(copy, entry.name, { maxExamples: 0, rowCounts: false });
      copy.close();
      const shape = (s: DbSchema) =>
        s.tables.map((t) => ({
          name: t.name,
          pk: t.primaryKey,
          fk: t.foreignKeys,
          cols: t.columns.map((c) => [c.name, c.type, c.notNull]),
        }));
      assertEquals(shape(back), shape(schema), entry.name);
      n++;
    }
    console.log(`${n} Spider databases re-created from their prompt DDL`);
    assertEquals(n, 138);
  },
});
