// The upload store behind the dataset cell's source "upload": SQLite files recognised by their
// header, question files parsed with line numbers, a Spider-layout folder, nothing lost on a bad file.
import { assert, assertEquals } from "../../tests/assert.ts";
import { loadSqlJsDeno } from "../runtime/sql-wasm.ts";
import { dbIdOf, isSqliteFile, type PickedFile, UploadStore } from "./dataset-upload.ts";

const enc = new TextEncoder();
const file = (path: string, content: string | Uint8Array): PickedFile => ({
  name: path.split("/").pop() ?? path,
  path,
  bytes: typeof content === "string" ? enc.encode(content) : content,
});

async function petsDb(): Promise<Uint8Array> {
  const SQL = await loadSqlJsDeno();
  const db = new SQL.Database();
  db.run(
    "CREATE TABLE owners (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE pets (id INTEGER PRIMARY KEY, owner_id INTEGER REFERENCES owners(id), name TEXT);",
  );
  db.run(
    "INSERT INTO owners VALUES (1, 'Ada'), (2, 'Bo'); INSERT INTO pets VALUES (1, 1, 'Rex'), (2, 1, 'Tom'), (3, 2, 'Kit');",
  );
  const bytes = db.export();
  db.close();
  return bytes;
}

const Q = (db: string, q: string, sql: string) => JSON.stringify({ db_id: db, question: q, query: sql });

Deno.test("upload store: databases by header, questions with line numbers, bad files refused and nothing lost", async () => {
  const pets = await petsDb();
  assert(isSqliteFile(pets));
  assertEquals(dbIdOf("a/b/concert_singer.sqlite"), "concert_singer");
  const s = new UploadStore();
  let changes = 0;
  s.addEventListener("change", () => changes++);
  const good = [
    Q("pets", "How many pets?", "SELECT count(*) FROM pets"),
    Q("pets", "Owner names?", "SELECT name FROM owners"),
    Q("zoo", "Animals?", "SELECT 1"),
  ].join("\n");
  let r = s.add([file("pets.sqlite", pets), file("questions.jsonl", good)]);
  assertEquals(r, { errors: [], notices: [] });
  assertEquals(s.questions?.tasks.length, 3);
  assertEquals(s.questions?.format, "spider");
  assertEquals(s.missingDatabases(), ["zoo"]);
  const up = s.toUploadedDataset();
  assertEquals(up?.questions, good);
  assertEquals([...(up?.databases.keys() ?? [])], ["pets"]);

  // A text file named .sqlite, and a questions file that does not parse: both refused, the old ones kept.
  r = s.add([
    file("notes.sqlite", "just some text ".repeat(10)),
    file("broken.json", '[{"db_id": "pets",\n "question": }]'),
  ]);
  assertEquals(r.errors.length, 2, JSON.stringify(r));
  assert(/notes\.sqlite is not a SQLite database/.test(r.errors[0]), r.errors[0]);
  assert(/broken\.json does not parse as a questions file: not valid JSON: .*line 2/.test(r.errors[1]), r.errors[1]);
  assertEquals([s.active, s.questions?.tasks.length, [...s.databases.keys()]], ["questions.jsonl", 3, ["pets"]]);

  // JSONL with one bad line: the good records load, the bad line is reported by number.
  r = s.add([
    file(
      "more.jsonl",
      [Q("pets", "Pet names?", "SELECT name FROM pets"), "{oops", Q("pets", "Kit's owner?", "SELECT 1")].join("\n"),
    ),
  ]);
  assertEquals(r.errors, []);
  assertEquals(s.active, "more.jsonl");
  assertEquals(s.questions?.tasks.length, 2);
  assertEquals(s.questions?.problems.length, 1);
  assert(s.questions?.problems[0].startsWith("line 2: not valid JSON"), s.questions?.problems[0]);
  s.choose("questions.jsonl");
  assertEquals(s.questions?.tasks.length, 3);
  assertEquals(changes, 4);
});

Deno.test("upload store: a Spider-layout folder (database/<db>/<db>.sqlite, train_spider.json, tables.json)", async () => {
  const pets = await petsDb();
  const s = new UploadStore();
  const r = s.add([
    file("spider/database/pets/pets.sqlite", pets),
    file("spider/database/pets/schema.sql", "CREATE TABLE ..."),
    file("spider/tables.json", JSON.stringify([{ db_id: "pets", table_names: ["pets"] }])),
    file("spider/dev.json", JSON.stringify([JSON.parse(Q("pets", "Dev?", "SELECT 1"))])),
    file(
      "spider/train_spider.json",
      JSON.stringify([JSON.parse(Q("pets", "How many pets?", "SELECT count(*) FROM pets"))]),
    ),
  ], { folder: true });
  assertEquals(r.errors, []);
  assertEquals(r.notices, ["2 other files in the folder ignored"], "schema.sql and tables.json");
  assertEquals([...s.databases.keys()], ["pets"]);
  assertEquals([...s.questionFiles.keys()].sort(), ["spider/dev.json", "spider/train_spider.json"]);
  assertEquals(s.active, "spider/train_spider.json", "Spider's training file is preferred");
  assertEquals(s.missingDatabases(), []);
});
