import { assert, assertEquals } from "../../tests/assert.ts";
import { splitChain } from "./cocte.ts";
import { chainCandidates, toChainOfCtes } from "./cocte-rewrite.ts";
import { Rng } from "./rng.ts";

function chain(gold: string, schema?: Record<string, string[]>) {
  const r = toChainOfCtes(gold, schema ? { schema } : {});
  if (!r.ok) throw new Error(`${gold}: ${r.reason}`);
  // Every chain splits back into the steps it was built from.
  const back = splitChain(r.cocte);
  assertEquals(back.steps.map((s) => [s.name, s.sql]), r.steps.map((s) => [s.name, s.sql]), gold);
  assertEquals(back.final, r.final, gold);
  assertEquals(back.problems, [], gold);
  return r;
}

const bodies = (gold: string, schema?: Record<string, string[]>) =>
  chain(gold, schema).steps.map((s) => `${s.name}: ${s.sql}`);

Deno.test("toChainOfCtes: a filter is a step on its table, the final SELECT projects", () => {
  const r = chain("SELECT count(*) FROM head WHERE age  >  56");
  assertEquals(
    r.cocte,
    "WITH\n  -- head rows where age > 56\n  filtered_head AS (\n    SELECT * FROM head WHERE age > 56\n  )\nSELECT count(*) FROM filtered_head",
  );
});

Deno.test("toChainOfCtes: a single simple SELECT is one step reading its table", () => {
  assertEquals(bodies("SELECT name ,  age FROM head ORDER BY age"), ["head_rows: SELECT * FROM head"]);
  assertEquals(
    chain("SELECT name ,  age FROM head ORDER BY age").final,
    "SELECT name , age FROM head_rows ORDER BY age",
  );
  // A table name used as a qualifier stays usable as the alias of the step.
  assertEquals(chain("SELECT head.name FROM head").final, "SELECT head.name FROM head_rows AS head");
});

Deno.test("toChainOfCtes: join, grouping, HAVING and ORDER BY ... LIMIT are steps; filters go to their table first", () => {
  const gold =
    "SELECT T1.name, count(*) AS cnt FROM singer AS T1 JOIN concert AS T2 ON T1.id = T2.sid WHERE T2.year = 2014 " +
    "GROUP BY T1.name HAVING count(*) > 1 ORDER BY cnt DESC LIMIT 1";
  assertEquals(bodies(gold), [
    "filtered_concert: SELECT * FROM concert AS T2 WHERE T2.year = 2014",
    "singer_concert: SELECT T1.name FROM singer AS T1 JOIN filtered_concert AS T2 ON T1.id = T2.sid",
    "per_name: SELECT name, count(*) AS cnt FROM singer_concert GROUP BY name",
    "per_name_kept: SELECT * FROM per_name WHERE cnt > 1",
    "top_row: SELECT * FROM per_name_kept ORDER BY cnt DESC LIMIT 1",
  ]);
  assertEquals(chain(gold).final, "SELECT name, cnt FROM top_row");
});

Deno.test("toChainOfCtes: subqueries and set operations become steps", () => {
  assertEquals(bodies("SELECT name FROM head WHERE age > (SELECT avg(age) FROM head) ORDER BY age DESC LIMIT 3"), [
    "head_avg_age: SELECT avg(age) FROM head",
    "filtered_head: SELECT * FROM head WHERE age > (SELECT * FROM head_avg_age)",
    "top_3: SELECT * FROM filtered_head ORDER BY age DESC LIMIT 3",
  ]);
  const r = chain("SELECT name FROM a WHERE id IN (SELECT aid FROM b) INTERSECT SELECT name FROM c");
  assertEquals(r.steps.map((s) => s.name), ["b_aid", "filtered_a", "a_part_1", "c_part_2"]);
  assertEquals(r.final, "SELECT * FROM a_part_1 INTERSECT SELECT * FROM c_part_2");
  // A subquery in FROM is a step read under its alias.
  const d = chain("SELECT avg(n) FROM (SELECT count(*) AS n FROM t GROUP BY k) AS sub");
  assertEquals(d.final, "SELECT avg(n) FROM sub");
  assertEquals(d.steps.at(-1)?.name, "sub");
});

Deno.test("toChainOfCtes: conditions across tables filter the joined rows in their own step; equalities join", () => {
  const gold =
    'SELECT count(*) FROM has_allergy AS T1 JOIN Student AS T2 ON T1.StuID = T2.StuID WHERE T2.sex = "F" AND T1.allergy = "Milk" OR T1.allergy = "Eggs"';
  assertEquals(bodies(gold), [
    "has_allergy_student: SELECT T2.sex, T1.allergy FROM has_allergy AS T1 JOIN Student AS T2 ON T1.StuID = T2.StuID",
    'has_allergy_student_filtered: SELECT * FROM has_allergy_student WHERE sex = "F" AND allergy = "Milk" OR allergy = "Eggs"',
  ]);
  assertEquals(bodies("SELECT T1.a FROM x AS T1, y AS T2 WHERE T1.id = T2.xid AND T2.v > 3"), [
    "filtered_y: SELECT * FROM y AS T2 WHERE T2.v > 3",
    "x_y: SELECT T1.a, T1.id FROM x AS T1, filtered_y AS T2 WHERE T1.id = T2.xid",
  ]);
});

Deno.test("toChainOfCtes: a condition on the null side of a LEFT JOIN is not pushed into that table", () => {
  assertEquals(bodies("SELECT T1.a FROM x AS T1 LEFT JOIN y AS T2 ON T1.id = T2.xid WHERE T2.v IS NULL AND T1.b = 2"), [
    "filtered_x: SELECT * FROM x AS T1 WHERE T1.b = 2",
    "x_y: SELECT T1.a, T2.v FROM filtered_x AS T1 LEFT JOIN y AS T2 ON T1.id = T2.xid",
    "x_y_filtered: SELECT * FROM x_y WHERE v IS NULL",
  ]);
});

Deno.test("toChainOfCtes: the schema resolves unqualified names; double-quoted names that are no column stay strings", () => {
  const schema = { a: ["id", "name"], b: ["aid", "score", "city"] };
  assertEquals(bodies('SELECT name FROM a JOIN b ON a.id = b.aid WHERE score > 5 AND city = "San Francisco"', schema), [
    'filtered_b: SELECT * FROM b WHERE score > 5 AND city = "San Francisco"',
    "a_b: SELECT name, a.id FROM a JOIN filtered_b AS b ON a.id = b.aid",
  ]);
  // Same column name in two tables: the projection keeps both apart.
  assertEquals(
    bodies("SELECT T1.name, T2.name FROM a AS T1 JOIN c AS T2 ON T1.id = T2.aid", {
      a: ["id", "name"],
      c: ["aid", "name"],
    }),
    [
      "a_c: SELECT T1.name AS a_name, T2.name AS c_name, T1.id FROM a AS T1 JOIN c AS T2 ON T1.id = T2.aid",
    ],
  );
  assertEquals(
    chain("SELECT T1.name, T2.name FROM a AS T1 JOIN c AS T2 ON T1.id = T2.aid").final,
    "SELECT a_name AS name, c_name AS name FROM a_c",
  );
});

Deno.test("toChainOfCtes: a correlated subquery stays where it is; DISTINCT keeps LIMIT in the final SELECT", () => {
  const r = chain("SELECT name FROM t AS T1 WHERE EXISTS (SELECT 1 FROM u WHERE u.tid = T1.id)");
  assertEquals(r.steps.map((s) => s.sql), ["SELECT * FROM t AS T1"]);
  assertEquals(r.final, "SELECT name FROM t_rows AS T1 WHERE EXISTS (SELECT 1 FROM u WHERE u.tid = T1.id)");
  const d = chain("SELECT DISTINCT name FROM t WHERE x = 1 ORDER BY name LIMIT 2");
  assertEquals(d.final, "SELECT DISTINCT name FROM filtered_t ORDER BY name LIMIT 2");
});

Deno.test("chainCandidates: fallbacks leave rewrites out, distinct and fullest first", () => {
  const c = chainCandidates("SELECT k FROM t WHERE x = 1 GROUP BY k ORDER BY count(*) DESC LIMIT 1");
  assert(c.length >= 3, `${c.length} candidates`);
  const names = c.map((r) => (r.ok ? r.steps.map((s) => s.name).join(",") : r.reason));
  assertEquals(names.slice(0, 3), ["filtered_t,per_k,top_row", "filtered_t,per_k", "filtered_t"]);
});

Deno.test("toChainOfCtes: what it does not rewrite is a reason, never a throw", () => {
  for (
    const [gold, reason] of [
      ["", "empty query"],
      ["WITH a AS (SELECT 1) SELECT * FROM a", "the query already has a WITH clause"],
      ["DELETE FROM t", "not a SELECT this rewriter understands"],
      ["SELECT a FROM t WHERE (b", "not a SELECT this rewriter understands"],
      ["SELECT 1", "no step to make"],
    ]
  ) {
    const r = toChainOfCtes(gold);
    assertEquals(r.ok ? "ok" : r.reason, reason, gold);
  }
  const rng = new Rng(3);
  const golds = [
    "SELECT T1.name, count(*) FROM a AS T1 JOIN b AS T2 ON T1.id = T2.aid WHERE T2.x = 'q''s' GROUP BY T1.name HAVING count(*) > 1 ORDER BY count(*) DESC LIMIT 2",
    "SELECT name FROM a WHERE id NOT IN (SELECT aid FROM b WHERE y BETWEEN 1 AND 3) UNION SELECT name FROM c ORDER BY name",
    'SELECT avg(x), max(y) FROM (SELECT x, y FROM t WHERE z = "a b") AS s',
  ];
  const toks = [
    "SELECT",
    "FROM",
    "WHERE",
    "(",
    ")",
    ",",
    "AND",
    "OR",
    "t",
    "T1.a",
    "count(*)",
    "GROUP BY",
    "JOIN",
    "ON",
    "=",
    "'",
    "UNION",
    "LIMIT",
    "1",
  ];
  for (let i = 0; i < 600; i++) {
    const text = i % 2 === 0
      ? golds[i % golds.length].slice(0, Math.floor(rng.next() * 200))
      : Array.from({ length: 1 + Math.floor(rng.next() * 20) }, () => toks[Math.floor(rng.next() * toks.length)]).join(
        " ",
      );
    for (const r of chainCandidates(text)) if (r.ok) assertEquals(splitChain(r.cocte).problems, [], text);
  }
  assertEquals(toChainOfCtes(undefined as unknown as string), { ok: false, reason: "empty query" });
});
