import { readFileSync } from "node:fs";
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { sharedDatasets } from "../../tests/shared.ts";
import { parsePredictions, parseQuestions } from "./loaders.ts";

Deno.test("loaders: BIRD JSON with evidence and difficulty", () => {
  const text = JSON.stringify([
    { question_id: 7, db_id: "db1", question: "q?", evidence: "e", SQL: "SELECT 1", difficulty: "simple" },
    { question_id: 9, db_id: "db2", question: "r?", evidence: "", SQL: "SELECT 2", difficulty: "challenging" },
  ]);
  const r = parseQuestions(text);
  assertEquals(r.format, "bird");
  assertEquals(r.records, 2);
  assertEquals(r.items, [
    {
      position: 0,
      task: { id: "7", db_id: "db1", question: "q?", gold_sql: "SELECT 1", evidence: "e", difficulty: "simple" },
    },
    {
      position: 1,
      task: { id: "9", db_id: "db2", question: "r?", gold_sql: "SELECT 2", evidence: "", difficulty: "challenging" },
    },
  ]);
});

Deno.test("loaders: Spider JSON array (query or SQL) and JSONL", () => {
  const arr = parseQuestions(
    JSON.stringify([{ db_id: "a", question: "x", query: "SELECT 1" }, { db_id: "b", question: "y", SQL: "SELECT 2" }]),
  );
  assertEquals(arr.format, "spider");
  assertEquals(arr.items.map((i) => i.task), [
    { id: "0", db_id: "a", question: "x", gold_sql: "SELECT 1" },
    { id: "1", db_id: "b", question: "y", gold_sql: "SELECT 2" },
  ]);
  const lines = parseQuestions(
    '{"db_id":"a","question":"x","query":"SELECT 1"}\n\n{"db_id":"b","question":"y","query":"SELECT 2"}\n',
  );
  assertEquals(lines.format, "spider");
  assertEquals(lines.records, 2);
  assertEquals(lines.items.map((i) => [i.position, i.task.gold_sql]), [[0, "SELECT 1"], [1, "SELECT 2"]]);
});

Deno.test("loaders: own JSONL format", () => {
  const r = parseQuestions(
    '{"id":"acme-1","db_id":"sales","question":"q","evidence":"fiscal year starts in April","gold_sql":"SELECT 1","difficulty":"hard"}\n{"id":2,"db_id":"sales","question":"r","gold_sql":"SELECT 2"}',
  );
  assertEquals(r.format, "rlvr");
  assertEquals(r.items.map((i) => i.task), [
    {
      id: "acme-1",
      db_id: "sales",
      question: "q",
      gold_sql: "SELECT 1",
      evidence: "fiscal year starts in April",
      difficulty: "hard",
    },
    { id: "2", db_id: "sales", question: "r", gold_sql: "SELECT 2" },
  ]);
});

Deno.test("loaders: malformed lines are reported with their line number, the others load", () => {
  const text = [
    '{"db_id":"a","question":"x","query":"SELECT 1"}',
    "{not json",
    '{"db_id":"a","question":"x"}',
    "",
    '{"db_id":"../etc","question":"x","query":"SELECT 1"}',
    '["array"]',
    '{"db_id":"b","question":"y","query":"SELECT 2"}',
  ].join("\n");
  const r = parseQuestions(text);
  assertEquals(r.items.map((i) => [i.position, i.task.db_id]), [[0, "a"], [5, "b"]]);
  assertEquals(r.records, 6);
  assertEquals(r.problems.map((p) => p.where), ["line 2", "line 3", "line 5", "line 6"]);
  assertEquals(r.problems.map((p) => p.position), [1, 2, 3, 4]);
  assert(/not valid JSON/.test(r.problems[0].message), r.problems[0].message);
  assert(/gold SQL/.test(r.problems[1].message), r.problems[1].message);
  assert(/plain name/.test(r.problems[2].message), r.problems[2].message);
});

Deno.test("loaders: a broken JSON array is one clear error; bad items are reported by index", async () => {
  await assertRejects(() => parseQuestions('[{"db_id": "a",'), /not valid JSON/);
  const r = parseQuestions(JSON.stringify([{ db_id: "a", question: "x", query: "SELECT 1" }, 5]));
  assertEquals(r.problems, [{ where: "item 1", message: "expected a JSON object", position: 1 }]);
  assertEquals(r.items.length, 1);
});

Deno.test("loaders: predictions as BIRD dict or one SQL per line", () => {
  const bird = parsePredictions(
    JSON.stringify({ "0": "SELECT 1\t----- bird -----\tdb1", "2": "SELECT\n3\t----- bird -----\tdb2", x: "y" }),
  );
  assertEquals(bird.format, "bird");
  assertEquals([...bird.sql.entries()], [[0, "SELECT 1"], [2, "SELECT\n3"]]);
  assertEquals(bird.problems.length, 1);
  const lines = parsePredictions("SELECT 1\n\nSELECT 3\n");
  assertEquals(lines.format, "lines");
  assertEquals([...lines.sql.entries()], [[0, "SELECT 1"], [1, ""], [2, "SELECT 3"]]);
});

Deno.test({
  name: "loaders: real Spider train JSONL and BIRD mini-dev load completely",
  ignore: sharedDatasets === null,
  fn() {
    const spider = parseQuestions(readFileSync(`${sharedDatasets}/spider-train/questions.jsonl`, "utf8"));
    assertEquals([spider.format, spider.items.length, spider.problems.length], ["spider", 6904, 0]);
    const bird = parseQuestions(readFileSync(`${sharedDatasets}/bird-format/mini_dev_sqlite.json`, "utf8"));
    assertEquals([bird.format, bird.items.length, bird.problems.length], ["bird", 500, 0]);
    const diffs = new Set(bird.items.map((i) => i.task.difficulty));
    assertEquals([...diffs].sort(), ["challenging", "moderate", "simple"]);
    assert(bird.items.every((i) => typeof i.task.evidence === "string"), "every BIRD item has evidence");
  },
});
