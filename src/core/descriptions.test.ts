import initSqlJs from "sql.js";
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { sharedDatasets } from "../../tests/shared.ts";
import {
  applyBirdDescriptionFiles,
  applyBirdDescriptions,
  applySpiderDescriptions,
  decodeText,
  parseBirdDescriptionCsv,
  parseCsv,
  parseSpiderTables,
  schemaFromTablesJson,
} from "./descriptions.ts";
import { findTable, introspectSchema } from "./schema.ts";

const SQL = await initSqlJs();

Deno.test("csv: quotes, doubled quotes, embedded newlines, CRLF/CR rows, BOM, blank lines", () => {
  const text = '\ufeffa,b,c\r\n1,"x, y","say ""hi"""\r\n\r\n2, "multi\nline\r\nfield",\r3,,"q"\n';
  assertEquals(parseCsv(text), [
    ["a", "b", "c"],
    ["1", "x, y", 'say "hi"'],
    ["2", "multi\nline\r\nfield", ""],
    ["3", "", "q"],
  ]);
  assertEquals(parseCsv("no,newline"), [["no", "newline"]]);
  assertEquals(parseCsv('a"b,c'), [['a"b', "c"]], "stray quote inside an unquoted field is literal");
  assertEquals(parseCsv(""), []);
});

Deno.test("csv: an unclosed quoted field is an error", async () => {
  await assertRejects(() => parseCsv('a,"open\nstill open'), /not closed/);
});

Deno.test("decodeText: UTF-8 with and without BOM, latin-1/Windows-1252 fallback, UTF-16LE", () => {
  const utf8 = new TextEncoder().encode("Café");
  assertEquals(decodeText(utf8), "Café");
  assertEquals(decodeText(new Uint8Array([0xef, 0xbb, 0xbf, ...utf8])), "Café");
  // "Caf\xe9 \x92s" is not valid UTF-8: é in latin-1 and a Windows-1252 right single quote.
  assertEquals(decodeText(new Uint8Array([0x43, 0x61, 0x66, 0xe9, 0x20, 0x92, 0x73])), "Café ’s");
  assertEquals(decodeText(new Uint8Array([0xff, 0xfe, 0x41, 0x00, 0xe9, 0x00])), "Aé");
});

// Shaped like BIRD's california_schools/database_description/frpm.csv (latin-1, multi-line values).
const FRPM_CSV = [
  "original_column_name,column_name,column_description,data_format,value_description",
  "CDSCode,,CDSCode,integer,",
  "Academic Year,,Academic Year,integer ,",
  'Charter School (Y/N) ,,Charter School (Y/N),integer,"0: N;',
  '1: Y"',
  "Free Meal Count (K-12),,Free Meal Count (K-12),integer,eligible free rate = Free Meal Count / Enrollment",
  'Percent (%) Eligible Free (K-12),,,real,"caf\u00e9 ""quoted"" note"',
  "School Type,type of school,,text,",
  "Ghost Column,,not in the table,text,",
  ",,,,",
].join("\r\n") + "\r\n";

function latin1(s: string): Uint8Array {
  return Uint8Array.from(s, (ch) => {
    const c = ch.charCodeAt(0);
    if (c > 255) throw new Error("not latin-1");
    return c;
  });
}

function frpmSchema() {
  const db = new SQL.Database();
  db.run(`CREATE TABLE frpm (CDSCode TEXT PRIMARY KEY, "Academic Year" TEXT, "Charter School (Y/N)" INTEGER,
    "Free Meal Count (K-12)" REAL, "Percent (%) Eligible Free (K-12)" REAL, "School Type" TEXT)`);
  const s = introspectSchema(db, "california_schools");
  db.close();
  return s;
}

Deno.test("BIRD description CSV: rows, trimming, multi-line value descriptions", async () => {
  const rows = parseBirdDescriptionCsv(decodeText(latin1(FRPM_CSV)));
  assertEquals(rows.length, 7, "the all-empty row is skipped");
  assertEquals(rows[2], {
    originalColumnName: "Charter School (Y/N)",
    columnName: "",
    columnDescription: "Charter School (Y/N)",
    dataFormat: "integer",
    valueDescription: "0: N; 1: Y",
  });
  assertEquals(rows[4].valueDescription, 'café "quoted" note');
  assertEquals(rows[1].dataFormat, "integer");
  await assertRejects(() => parseBirdDescriptionCsv("name,desc\nx,y\n"), /original_column_name/);
});

Deno.test("BIRD descriptions merge: natural names, no redundant descriptions, unmatched reported", () => {
  const files = { "database_description/frpm.csv": latin1(FRPM_CSV), "notes.txt": new Uint8Array([1]) };
  const { schema, unmatched } = applyBirdDescriptionFiles(frpmSchema(), files);
  const t = findTable(schema, "frpm");
  assert(t !== undefined);
  const col = (n: string) => t.columns.find((c) => c.name === n)!;
  assertEquals(col("CDSCode").description, undefined, "a description equal to the name adds nothing");
  assertEquals(col("Charter School (Y/N)").valueDescription, "0: N; 1: Y");
  assertEquals(col("Free Meal Count (K-12)").valueDescription, "eligible free rate = Free Meal Count / Enrollment");
  assertEquals(col("School Type").naturalName, "type of school");
  assertEquals(col("Percent (%) Eligible Free (K-12)").dataFormat, "real");
  assertEquals(unmatched, ["frpm.Ghost Column"]);
  // The input schema is not modified.
  assertEquals(findTable(frpmSchema(), "frpm")!.columns[2].valueDescription, undefined);
  const missing = applyBirdDescriptions(frpmSchema(), "satscores", []);
  assertEquals(missing.unmatched, ["satscores"]);
});

Deno.test("BIRD descriptions: a description that says more than the name is kept", () => {
  const rows = parseBirdDescriptionCsv(
    "original_column_name,column_name,column_description,data_format,value_description\n" +
      "CDSCode,,California Department Schools code,text,\n",
  );
  const { schema } = applyBirdDescriptions(frpmSchema(), "FRPM", rows);
  assertEquals(schema.tables[0].columns[0].description, "California Department Schools code");
});

Deno.test("tables.json: validation names the bad entry", async () => {
  await assertRejects(() => parseSpiderTables({}), /array/);
  await assertRejects(() => parseSpiderTables([{ db_id: "x" }]), /entry 0/);
});

Deno.test({
  name: "Spider descriptions: college_2 natural names from the real tables.json, store_1 misalignment ignored",
  ignore: sharedDatasets === null,
  fn() {
    const entries = parseSpiderTables(JSON.parse(Deno.readTextFileSync(`${sharedDatasets}/spider-train/tables.json`)));
    const described = (dbId: string) => {
      const db = new SQL.Database(Deno.readFileSync(`${sharedDatasets}/spider-train/database/${dbId}/${dbId}.sqlite`));
      const s = introspectSchema(db, dbId, { maxExamples: 0, rowCounts: false });
      db.close();
      return applySpiderDescriptions(s, entries.find((e) => e.db_id === dbId)!);
    };
    const { schema, unmatched } = described("college_2");
    assertEquals(unmatched, []);
    const dept = findTable(schema, "department")!;
    assertEquals(dept.columns.find((c) => c.name === "dept_name")?.naturalName, "department name");
    assertEquals(
      dept.columns.find((c) => c.name === "building")?.naturalName,
      undefined,
      "same words, no natural name",
    );
    assertEquals(findTable(schema, "prereq")?.naturalName, "prerequisite");
    assertEquals(findTable(schema, "takes")?.naturalName, "takes classes");
    const store = described("store_1");
    assertEquals(findTable(store.schema, "artists")?.naturalName, undefined);
    assertEquals(store.unmatched, []);
  },
});

Deno.test({
  name: "schemaFromTablesJson: agrees with introspection of the real Spider files (tables, columns, keys)",
  ignore: sharedDatasets === null,
  fn() {
    const entries = parseSpiderTables(JSON.parse(Deno.readTextFileSync(`${sharedDatasets}/spider-train/tables.json`)));
    let n = 0;
    for (const e of entries) {
      let db;
      try {
        db = new SQL.Database(
          Deno.readFileSync(`${sharedDatasets}/spider-train/database/${e.db_id}/${e.db_id}.sqlite`),
        );
      } catch {
        continue;
      }
      const real = introspectSchema(db, e.db_id, { maxExamples: 0, rowCounts: false });
      db.close();
      const fromJson = schemaFromTablesJson(e);
      for (const t of fromJson.tables) {
        if (t.name.startsWith("sqlite_")) continue;
        const r = findTable(real, t.name);
        assert(r !== undefined, `${e.db_id}.${t.name}`);
        const lower = (xs: string[]) => xs.map((x) => x.toLowerCase()).sort();
        assertEquals(
          lower(t.columns.map((c) => c.name)),
          lower(r.columns.map((c) => c.name)),
          `${e.db_id}.${t.name} columns`,
        );
        // tables.json lists a subset of the declared keys (it misses some composite keys).
        for (const k of t.primaryKey) {
          assert(lower(r.primaryKey).includes(k.toLowerCase()), `${e.db_id}.${t.name} pk ${k}`);
        }
        for (const fk of t.foreignKeys) {
          assert(
            r.foreignKeys.some((f) =>
              f.column.toLowerCase() === fk.column.toLowerCase() &&
              f.refTable.toLowerCase() === fk.refTable.toLowerCase()
            ),
            `${e.db_id}.${t.name} fk ${fk.column}`,
          );
        }
      }
      n++;
    }
    assertEquals(n, 138);
  },
});

Deno.test({
  name: "schemaFromTablesJson: BIRD dev schemas with natural names and keys",
  ignore: sharedDatasets === null,
  fn() {
    const entries = parseSpiderTables(
      JSON.parse(Deno.readTextFileSync(`${sharedDatasets}/bird-format/dev_tables.json`)),
    );
    assertEquals(entries.length, 11);
    const s = schemaFromTablesJson(entries.find((e) => e.db_id === "debit_card_specializing")!);
    assertEquals(s.tables.map((t) => t.name), ["customers", "gasstations", "products", "transactions_1k", "yearmonth"]);
    const customers = findTable(s, "customers")!;
    assertEquals(customers.primaryKey, ["CustomerID"]);
    assertEquals(customers.columns.find((c) => c.name === "Segment")?.naturalName, "client segment");
    assertEquals(findTable(s, "transactions_1k")?.naturalName, "transactions");
    const ym = findTable(s, "yearmonth")!;
    assertEquals(ym.primaryKey, ["CustomerID", "Date"]);
    assertEquals(ym.foreignKeys, [{ column: "CustomerID", refTable: "customers", refColumn: "CustomerID" }]);
  },
});
