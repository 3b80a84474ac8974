import { assert, assertEquals } from "../../tests/assert.ts";
import { type Chain, splitChain, stepEndOffsets, stepQueries } from "./cocte.ts";
import { Rng } from "./rng.ts";
import { squeezeSpaces, tokenize } from "./sql-lex.ts";

const CHAIN = `Let me work through it.

\`\`\`sql
WITH
  -- heads older than 56
  old_heads AS (
    SELECT * FROM head WHERE age > 56
  ),
  /* one row per state */
  per_state AS (
    SELECT born_state, count(*) AS n FROM old_heads GROUP BY born_state
  )
SELECT born_state FROM per_state WHERE n >= 1 ORDER BY n DESC;
\`\`\`
That is the answer.`;

Deno.test("splitChain: steps, comments and final out of a fenced answer with prose around it", () => {
  const c = splitChain(CHAIN);
  assertEquals(c, {
    steps: [
      { name: "old_heads", sql: "SELECT * FROM head WHERE age > 56", comment: "heads older than 56" },
      {
        name: "per_state",
        sql: "SELECT born_state, count(*) AS n FROM old_heads GROUP BY born_state",
        comment: "one row per state",
      },
    ],
    final: "SELECT born_state FROM per_state WHERE n >= 1 ORDER BY n DESC",
    problems: [],
  });
  const q = stepQueries(c);
  assertEquals(q.length, 3);
  assertEquals(q[0], "WITH\nold_heads AS (\nSELECT * FROM head WHERE age > 56\n)\nSELECT * FROM old_heads");
  assert(q[1].endsWith("GROUP BY born_state\n)\nSELECT * FROM per_state"), q[1]);
  assert(q[2].endsWith("\nSELECT born_state FROM per_state WHERE n >= 1 ORDER BY n DESC"), q[2]);
  const ends = stepEndOffsets(CHAIN, c);
  assertEquals(ends.length, 3);
  assertEquals(CHAIN.slice(ends[0] - 1, ends[0] + 1), "),");
  assertEquals(CHAIN[ends[1] - 1], ")");
  assertEquals(CHAIN.slice(ends[2] - 4, ends[2] + 1), "DESC;");
});

Deno.test("splitChain: a bare chain (no fence), WITH RECURSIVE, column lists and MATERIALIZED", () => {
  const c = splitChain(
    "WITH RECURSIVE cnt(x) AS MATERIALIZED (SELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 3) SELECT x FROM cnt",
  );
  assertEquals(c.steps, [{ name: "cnt", columns: "(x)", sql: "SELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 3" }]);
  assertEquals(c.recursive, true);
  assertEquals(
    stepQueries(c)[0],
    "WITH RECURSIVE\ncnt (x) AS (\nSELECT 1 UNION ALL SELECT x + 1 FROM cnt WHERE x < 3\n)\nSELECT * FROM cnt",
  );
});

Deno.test("splitChain: parentheses, quotes and comments inside bodies do not end a step", () => {
  const c = splitChain(`WITH a AS (SELECT ')' AS p, "(" AS q FROM t WHERE x IN (SELECT y FROM u) -- a ) here
), b AS (SELECT * FROM a /* ) */) SELECT * FROM b`);
  assertEquals(c.steps.map((s) => s.name), ["a", "b"]);
  assertEquals(c.steps[0].sql, `SELECT ')' AS p, "(" AS q FROM t WHERE x IN (SELECT y FROM u) -- a ) here`);
  // The body ends in a line comment: the step query must still close its parenthesis on a new line.
  assert(stepQueries(c)[0].includes("-- a ) here\n)"), stepQueries(c)[0]);
  assertEquals(c.problems, []);
});

Deno.test("splitChain: malformed chains report problems and keep what they can", () => {
  const cases: [string, Partial<Chain> & { names: string[] }][] = [
    ["WITH a AS (SELECT 1), b AS (SELECT * FROM a", {
      names: ["a"],
      final: null,
      problems: ["step 2 (b): cut off before its closing parenthesis", "no final SELECT after the steps"],
    }],
    ["```sql\nWITH a AS (SELECT 1)\nSELECT * FROM a WHERE x = 'ab", {
      names: ["a"],
      final: "SELECT * FROM a WHERE x = 'ab",
      problems: ["sql block not closed (cut off?)", "final statement ends inside a string or quoted name (cut off?)"],
    }],
    ["WITH a AS (SELECT 1), a AS (SELECT 2) SELECT * FROM a", {
      names: ["a", "a"],
      problems: ["CTE name a reused (steps 1 and 2)"],
    }],
    ["WITH a AS (SELECT 1) b AS (SELECT 2) SELECT 3", {
      names: ["a", "b"],
      problems: ["missing comma between steps 1 and 2"],
    }],
    ["WITH a AS (SELECT 1), SELECT * FROM a", {
      names: ["a"],
      final: "SELECT * FROM a",
      problems: ["comma after step 1 before the final SELECT"],
    }],
    ["WITH a AS (SELECT 1), WITH b AS (SELECT 2) SELECT 3", {
      names: ["a", "b"],
      final: "SELECT 3",
      problems: ["WITH repeated before step 2"],
    }],
    ["SELECT name FROM t", { names: [], final: "SELECT name FROM t", problems: ["no CTE steps (a plain query)"] }],
    ["Sorry, I cannot answer.", { names: [], final: null, problems: ["no SQL found"] }],
    // SQL, then a closing fence that was never opened (the shipped demo model's habit) and prose.
    ["WITH a AS (SELECT 1)\nSELECT * FROM a\n```\nThis returns a.", {
      names: ["a"],
      final: "SELECT * FROM a",
      problems: ["sql block not opened"],
    }],
    ["SELECT 1\n```\nno, rather\n```sql\nWITH b AS (SELECT 2) SELECT * FROM b\n```", {
      names: ["b"],
      final: "SELECT * FROM b",
      problems: ["sql block not opened"],
    }],
    ["", { names: [], final: null, problems: ["empty answer"] }],
    ["WITH a AS SELECT 1", { names: [], final: null, problems: ['step 1 (a): expected "(" after AS'] }],
    // A column list that is really the body: "a (SELECT 1)" has no AS after it.
    ["WITH a (SELECT 1) SELECT 2", { names: [], final: null, problems: ['step 1 (a): expected AS, found "SELECT"'] }],
    ["WITH a (x, y", { names: [], final: null, problems: ["step 1 (a): cut off in its column list"] }],
    ["The query is WITH a AS (SELECT 1) SELECT * FROM a; and that's it", {
      names: ["a"],
      final: "SELECT * FROM a",
      problems: ["text before the SQL ignored", "text after the final statement ignored"],
    }],
  ];
  for (const [text, want] of cases) {
    const c = splitChain(text);
    assertEquals(c.steps.map((s) => s.name), want.names, text);
    if (want.final !== undefined) assertEquals(c.final, want.final, text);
    if (want.problems) assertEquals(c.problems, want.problems, text);
    assertEquals(stepQueries(c).length, c.steps.length + (c.final === null ? 0 : 1));
  }
});

Deno.test("splitChain: the repeated-WITH slip between steps", () => {
  const c = splitChain("WITH a AS (SELECT 1) WITH b AS (SELECT 2) SELECT 3");
  assertEquals(c.steps.map((s) => s.name), ["a", "b"]);
  assertEquals(c.problems, ["WITH repeated before step 2"]);
});

Deno.test("splitChain: an <answer> tag without a fence, and a non-sql fence is skipped", () => {
  assertEquals(splitChain("<think>hm</think><answer>WITH a AS (SELECT 1) SELECT * FROM a</answer>").steps.length, 1);
  const c = splitChain("```python\nprint(1)\n```\n```sql\nWITH a AS (SELECT 2) SELECT * FROM a\n```");
  assertEquals(c.steps[0].sql, "SELECT 2");
});

Deno.test("stepEndOffsets: a chain not split from the text finds its steps by search, or -1", () => {
  const text = "WITH a AS (SELECT 1), b AS (SELECT 2) SELECT 3";
  const chain: Chain = {
    steps: [{ name: "a", sql: "SELECT 1" }, { name: "x", sql: "SELECT 9" }],
    final: "SELECT 3",
    problems: [],
  };
  assertEquals(stepEndOffsets(text, chain), [20, -1, text.length]);
});

Deno.test("tokenize covers the text end to end and squeezeSpaces keeps strings", () => {
  const s = "SELECT  a ,'x  y' FROM \"t  t\" -- c\n WHERE b  >  1 /* open";
  const t = tokenize(s);
  assertEquals(t.map((x) => x.text).join(""), s);
  assertEquals(t.at(-1)?.unterminated, true);
  assertEquals(
    squeezeSpaces("SELECT  a ,'x  y' FROM \"t  t\" -- c\n WHERE b  >  1"),
    "SELECT a ,'x  y' FROM \"t  t\" -- c\nWHERE b > 1",
  );
});

Deno.test("splitChain never throws on fuzzed and truncated chains, and its step queries line up", () => {
  const rng = new Rng(7);
  const pieces = [
    "WITH",
    " ",
    "a",
    "b1",
    "AS",
    "(",
    ")",
    ",",
    "SELECT",
    "*",
    "FROM",
    "'",
    '"',
    "--",
    "\n",
    "/*",
    "*/",
    "```sql\n",
    "```",
    ";",
    "x",
    "RECURSIVE",
    "<answer>",
    "1",
  ];
  let n = 0;
  for (let i = 0; i < 3000; i++) {
    let text: string;
    if (i % 3 === 0) {
      // Truncate a real chain at a random point.
      text = CHAIN.slice(0, Math.floor(rng.next() * CHAIN.length));
    } else {
      const len = 1 + Math.floor(rng.next() * 30);
      text = Array.from({ length: len }, () => pieces[Math.floor(rng.next() * pieces.length)]).join(" ");
    }
    const c = splitChain(text);
    const q = stepQueries(c);
    const ends = stepEndOffsets(text, c);
    assertEquals(q.length, ends.length, text);
    for (const e of ends) assert(e >= -1 && e <= text.length, `offset ${e} in ${JSON.stringify(text)}`);
    for (let k = 1; k < ends.length; k++) {
      assert(ends[k] >= ends[k - 1], `offsets not increasing in ${JSON.stringify(text)}`);
    }
    n += c.steps.length;
  }
  assert(n > 100, `fuzz found only ${n} steps`);
  // Non-string input (a record read from JSON) scores too.
  assertEquals(splitChain(null as unknown as string).problems, ["empty answer"]);
});
