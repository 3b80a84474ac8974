import initSqlJs from "sql.js";
import { assert, assertEquals } from "../../tests/assert.ts";
import { sharedDatasets } from "../../tests/shared.ts";
import { findTable, introspectSchema, quoteIdent, quoteLiteral, toExample } from "./schema.ts";

const SQL = await initSqlJs();

function spiderDb(dbId: string) {
  return new SQL.Database(Deno.readFileSync(`${sharedDatasets}/spider-train/database/${dbId}/${dbId}.sqlite`));
}

Deno.test("schema: hand-made database, keys, examples, quoting, truncation", () => {
  const db = new SQL.Database();
  db.run(`
    CREATE TABLE "order items" ("order id" INTEGER NOT NULL, line INTEGER, note TEXT, data BLOB, price REAL,
      PRIMARY KEY (line, "order id"), FOREIGN KEY ("order id") REFERENCES orders);
    CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, "select" TEXT);
    CREATE TABLE plain (x);
    INSERT INTO orders VALUES (1, 'Ann', 'a'), (2, 'Bob', NULL), (3, 'Ann', 'c'), (4, 'Cy', 'd');
    INSERT INTO "order items" VALUES (1, 1, NULL, x'00ff', 2.5), (1, 2, '  very   long ' || printf('%.80c', 'x'), NULL, 2.5),
      (2, 1, '', NULL, 7);
  `);
  const s = introspectSchema(db, "shop", { maxExamples: 2, maxExampleChars: 10 });
  assertEquals(s.dbId, "shop");
  assertEquals(s.tables.map((t) => t.name), ["order items", "orders", "plain"]);
  const items = s.tables[0];
  assertEquals(items.primaryKey, ["line", "order id"]);
  assertEquals(items.foreignKeys, [{ column: "order id", refTable: "orders", refColumn: null }]);
  assertEquals(items.rowCount, 3);
  assertEquals(items.columns.map((c) => [c.name, c.type, c.notNull, c.primaryKey]), [
    ["order id", "INTEGER", true, true],
    ["line", "INTEGER", false, true],
    ["note", "TEXT", false, false],
    ["data", "BLOB", false, false],
    ["price", "REAL", false, false],
  ]);
  assertEquals(items.columns[0].examples, [1, 2]);
  // NULL, empty text and whitespace-only text are skipped; long text is squeezed and cut.
  assertEquals(items.columns[2].examples, ["very long …"]);
  assertEquals(items.columns[3].examples, [], "BLOBs are not examples");
  assertEquals(items.columns[4].examples, [2.5, 7]);
  const orders = findTable(s, "ORDERS");
  assert(orders !== undefined);
  assertEquals(orders.columns[1].examples, ["Ann", "Bob"], "distinct, in scan order");
  assertEquals(orders.columns[2].examples, ["a", "c"]);
  assertEquals(s.tables[2].columns[0].type, "");
  assertEquals(s.tables[2].rowCount, 0);
  const noCounts = introspectSchema(db, "shop", { maxExamples: 0, rowCounts: false });
  assertEquals(noCounts.tables[1].rowCount, null);
  assertEquals(noCounts.tables[1].columns[1].examples, []);
  db.close();
});

Deno.test("schema: identifier and literal quoting", () => {
  assertEquals(quoteIdent("Student"), "Student");
  assertEquals(quoteIdent("Home Town"), '"Home Town"');
  assertEquals(quoteIdent("order"), '"order"');
  assertEquals(quoteIdent('a"b'), '"a""b"');
  assertEquals(quoteIdent("2nd"), '"2nd"');
  assertEquals(quoteLiteral("O'Neil"), "'O''Neil'");
  assertEquals(toExample(12345678901234567890n, 10), "12345678901234567890");
  assertEquals(toExample(5n, 10), 5);
  assertEquals(toExample("😀😀😀", 2), "😀😀…", "cut by code points");
});

Deno.test({
  name: "schema: Spider activity_1 keys and examples from the real file",
  ignore: sharedDatasets === null,
  fn() {
    const db = spiderDb("activity_1");
    const s = introspectSchema(db, "activity_1");
    const p = findTable(s, "Participates_in");
    assert(p !== undefined);
    assertEquals(p.foreignKeys, [
      { column: "stuid", refTable: "Student", refColumn: "StuID" },
      { column: "actid", refTable: "Activity", refColumn: "actid" },
    ]);
    const student = findTable(s, "Student");
    assert(student !== undefined);
    assertEquals(student.primaryKey, ["StuID"]);
    assertEquals(student.columns.find((c) => c.name === "LName")?.type, "VARCHAR(12)");
    // Independent check: counts and examples straight from SQL.
    assertEquals(student.rowCount, Number(db.exec("SELECT count(*) FROM Student")[0].values[0][0]));
    for (const c of student.columns) {
      const distinct = Number(db.exec(`SELECT count(DISTINCT ${quoteIdent(c.name)}) FROM Student`)[0].values[0][0]);
      assertEquals(c.examples.length, Math.min(3, distinct), `${c.name} examples`);
      for (const v of c.examples) {
        const hit = db.exec(
          `SELECT count(*) FROM Student WHERE ${quoteIdent(c.name)} = ${typeof v === "number" ? v : quoteLiteral(v)}`,
        );
        assert(Number(hit[0].values[0][0]) > 0, `example ${v} of ${c.name} not in the table`);
      }
    }
    db.close();
  },
});

Deno.test({
  name: "schema: all Spider databases agree with tables.json on tables, columns and keys",
  ignore: sharedDatasets === null,
  fn() {
    const entries = JSON.parse(Deno.readTextFileSync(`${sharedDatasets}/spider-train/tables.json`)) as {
      db_id: string;
      table_names_original: string[];
      column_names_original: [number, string][];
      primary_keys: (number | number[])[];
      foreign_keys: [number, number][];
    }[];
    let dbs = 0, cols = 0, pkMiss = 0, fkMiss = 0;
    const problems: string[] = [];
    for (const e of entries) {
      let db;
      try {
        db = spiderDb(e.db_id);
      } catch {
        continue; // baseball_1 and soccer_1 are absent on purpose
      }
      const s = introspectSchema(db, e.db_id, { maxExamples: 1, rowCounts: false });
      db.close();
      dbs++;
      const colOf = (i: number) => {
        const [ti, name] = e.column_names_original[i];
        return { table: findTable(s, e.table_names_original[ti]), name: name.toLowerCase() };
      };
      // store_1 lists SQLite's own sqlite_sequence, which introspection leaves out on purpose.
      for (const t of e.table_names_original) {
        if (!t.startsWith("sqlite_") && !findTable(s, t)) problems.push(`${e.db_id}.${t} missing`);
      }
      for (let i = 1; i < e.column_names_original.length; i++) {
        const { table, name } = colOf(i);
        if (table && !table.columns.some((c) => c.name.toLowerCase() === name)) {
          problems.push(`${e.db_id} column ${name}`);
        }
        cols++;
      }
      for (const pk of e.primary_keys.flat()) {
        const { table, name } = colOf(pk);
        if (table && !table.primaryKey.some((c) => c.toLowerCase() === name)) pkMiss++;
      }
      for (const [from] of e.foreign_keys) {
        const { table, name } = colOf(from);
        if (table && !table.foreignKeys.some((f) => f.column.toLowerCase() === name)) fkMiss++;
      }
    }
    console.log(
      `${dbs} databases, ${cols} columns; tables.json keys not declared in the files: ${pkMiss} primary, ${fkMiss} foreign`,
    );
    assertEquals(dbs, 138);
    // tables.json was written from these files' DDL: every table and column must be there.
    assertEquals(problems, []);
    assertEquals([pkMiss, fkMiss], [0, 0], "tables.json keys missing from introspection");
  },
});
