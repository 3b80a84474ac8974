import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { sharedDatasets } from "../../tests/shared.ts";
import { extractSql, formatCheck } from "./extract.ts";

Deno.test("extractSql: answer tag, plain and holding a sql block; the last tag wins", () => {
  assertEquals(extractSql("<think>join a and b</think>\n<answer>SELECT a FROM t;</answer>"), {
    sql: "SELECT a FROM t",
    source: "answer-tag",
  });
  assertEquals(
    extractSql("<think>x</think><answer>\nHere:\n```sql\nSELECT 1;\n```\n</answer>"),
    { sql: "SELECT 1", source: "answer-tag" },
  );
  assertEquals(extractSql("<answer>SELECT 1</answer> wait <ANSWER>SELECT 2</ANSWER>"), {
    sql: "SELECT 2",
    source: "answer-tag",
  });
  assertEquals(
    extractSql("<answer>```sql\nSELECT 3;</answer>"),
    { sql: "SELECT 3", source: "answer-tag" },
    "fence never closed",
  );
  assertEquals(
    extractSql("<answer>\n```sql SELECT 4 ```\n</answer>"),
    { sql: "SELECT 4", source: "answer-tag" },
    "one-line fence",
  );
  assertEquals(extractSql("<answer>```SELECT 5```</answer>"), { sql: "SELECT 5", source: "answer-tag" });
  assertEquals(extractSql("<answer>```sql```</answer>"), { sql: null, reason: "empty answer" });
  // The answer tag beats a later sql block in auto mode.
  assertEquals(extractSql("<answer>SELECT 1</answer>\n```sql\nSELECT 2\n```"), {
    sql: "SELECT 1",
    source: "answer-tag",
  });
});

Deno.test("extractSql: empty answer and empty completion are failures with reasons", () => {
  assertEquals(extractSql("<think>hmm</think><answer>  ;\n</answer>"), { sql: null, reason: "empty answer" });
  assertEquals(extractSql("<answer>```sql\n\n```</answer>"), { sql: null, reason: "empty answer" });
  assertEquals(extractSql("   \n"), { sql: null, reason: "empty completion" });
});

Deno.test("extractSql: last sql (or bare) fenced block; other languages and unclosed blocks ignored", () => {
  const text = "First try:\n```sql\nSELECT 1\n```\nBetter:\n```SQL\nSELECT name\nFROM t\nWHERE x = 'a;b';\n```\n" +
    "```python\nprint(1)\n```\n";
  assertEquals(extractSql(text), { sql: "SELECT name\nFROM t\nWHERE x = 'a;b'", source: "sql-block" });
  assertEquals(extractSql("```\nSELECT 3\n```"), { sql: "SELECT 3", source: "sql-block" });
  assertEquals(extractSql("```sqlite\nSELECT 4\n```"), { sql: "SELECT 4", source: "sql-block" });
  assertEquals(extractSql("```sql\nSELECT 5\n```\n```sql\nSELECT 6 FROM (cut off"), {
    sql: "SELECT 5",
    source: "sql-block",
  });
  assertEquals(extractSql("```sql\n  \n```"), { sql: null, reason: "empty sql block" });
  // An unclosed answer tag does not hide a complete block.
  assertEquals(extractSql("<answer>\n```sql\nSELECT 7\n```"), { sql: "SELECT 7", source: "sql-block" });
});

Deno.test("extractSql: whole text only when it starts with SELECT or WITH", () => {
  assertEquals(extractSql("  select * from t;  "), { sql: "select * from t", source: "whole-text" });
  assertEquals(extractSql("WITH a AS (SELECT 1) SELECT * FROM a"), {
    sql: "WITH a AS (SELECT 1) SELECT * FROM a",
    source: "whole-text",
  });
  assertEquals(extractSql("<think>plan</think>\nSELECT 2"), { sql: "SELECT 2", source: "whole-text" });
  assertEquals(extractSql("The answer is SELECT 1"), { sql: null, reason: "no answer tag and no sql block" });
  assertEquals(extractSql("selection of rows"), { sql: null, reason: "no answer tag and no sql block" });
  assertEquals(extractSql("DROP TABLE t"), { sql: null, reason: "no answer tag and no sql block" });
});

Deno.test("extractSql: SQL before a closing fence that was never opened ends at the fence", () => {
  // The shipped demo model's habit under chain-of-ctes@1: the query, then a bare ``` and more text.
  assertEquals(extractSql("SELECT name FROM t WHERE x = 1;\n```\n\nThe query above"), {
    sql: "SELECT name FROM t WHERE x = 1",
    source: "whole-text",
  });
  assertEquals(extractSql("WITH a AS (SELECT 1)\nSELECT * FROM a\n```"), {
    sql: "WITH a AS (SELECT 1)\nSELECT * FROM a",
    source: "whole-text",
  });
  assertEquals(extractSql("<think>p</think>\nSELECT 2\n```"), { sql: "SELECT 2", source: "whole-text" });
  // A closed block after it still wins; prose before a lone fence is still no SQL.
  assertEquals(extractSql("SELECT 1\n```\nthen\n```sql\nSELECT 2\n```"), { sql: "SELECT 2", source: "sql-block" });
  assertEquals(extractSql("Here it is\n```"), { sql: null, reason: "no answer tag and no sql block" });
});

Deno.test("extractSql: modes restrict the sources", () => {
  const both = "<answer>SELECT 1</answer>\n```sql\nSELECT 2\n```";
  assertEquals(extractSql(both, { mode: "sql-block" }), { sql: "SELECT 2", source: "sql-block" });
  assertEquals(extractSql("```sql\nSELECT 2\n```", { mode: "answer-tag" }), { sql: null, reason: "no answer tag" });
  assertEquals(extractSql("SELECT 2", { mode: "answer-tag" }), { sql: null, reason: "no answer tag" });
  assertEquals(extractSql("SELECT 2", { mode: "sql-block" }), { sql: "SELECT 2", source: "whole-text" });
  assertEquals(extractSql("no sql here", { mode: "sql-block" }), { sql: null, reason: "no sql block" });
});

Deno.test("formatCheck: strict needs exactly think then answer and nothing else", () => {
  assertEquals(formatCheck("<think>a</think><answer>SELECT 1</answer>"), { strict: true, soft: true });
  assertEquals(formatCheck("\n<think>\na\n</think>\n\n<answer>\nSELECT 1\n</answer>\n"), { strict: true, soft: true });
  assertEquals(formatCheck("<think>a</think><answer>SELECT 1</answer> trailing words"), { strict: false, soft: true });
  assertEquals(formatCheck("Sure! <think>a</think><answer>SELECT 1</answer>"), { strict: false, soft: true });
  assertEquals(formatCheck("<think>a</think> then <answer>SELECT 1</answer>"), { strict: false, soft: true });
  assertEquals(formatCheck("<think>a</think><answer>x</answer><answer>y</answer>"), { strict: false, soft: true });
  assertEquals(formatCheck("<think>a <think>b</think><answer>x</answer>"), { strict: false, soft: true });
});

Deno.test("formatCheck: soft needs both pairs in order", () => {
  assertEquals(formatCheck("<answer>x</answer><think>a</think>"), { strict: false, soft: false });
  assertEquals(formatCheck("<think>a</think> no answer"), { strict: false, soft: false });
  assertEquals(formatCheck("<think>a</think><answer>SELECT 1"), { strict: false, soft: false }, "unclosed answer");
  assertEquals(formatCheck("no tags at all"), { strict: false, soft: false });
});

Deno.test("formatCheck: other tags, and a prefix the prompt already opened", async () => {
  const tags = ["reasoning", "answer"];
  assertEquals(formatCheck("<reasoning>r</reasoning>\n<answer>SELECT 1</answer>", tags), { strict: true, soft: true });
  assertEquals(formatCheck("<think>r</think><answer>SELECT 1</answer>", tags), { strict: false, soft: false });
  assertEquals(formatCheck("plan</think>\n<answer>SELECT 1</answer>", ["think", "answer"], "<think>\n"), {
    strict: true,
    soft: true,
  });
  assertEquals(formatCheck("plan</think>\n<answer>SELECT 1</answer>"), { strict: false, soft: false });
  await assertRejects(() => formatCheck("x", []), /no tags/);
  await assertRejects(() => formatCheck("x", ["a>b"]), /bad tag/);
});

Deno.test({
  name: "extractSql: every Spider gold query comes back unchanged from every answer format",
  ignore: sharedDatasets === null,
  fn() {
    const golds = Deno.readTextFileSync(`${sharedDatasets}/spider-train/questions.jsonl`).trim().split("\n")
      .map((l) => (JSON.parse(l) as { query: string }).query);
    const wraps: [string, (q: string) => string][] = [
      ["answer-tag", (q) => `<think>\nplan the joins\n</think>\n<answer>\n${q}\n</answer>`],
      ["answer-tag", (q) => `<think>x</think><answer>\n\`\`\`sql\n${q}\n\`\`\`\n</answer>`],
      ["sql-block", (q) => `Let me think.\n\`\`\`sql\nSELECT 0\n\`\`\`\nBetter:\n\`\`\`sql\n${q};\n\`\`\`\nDone.`],
      ["whole-text", (q) => `${q}\n`],
    ];
    let n = 0;
    for (const gold of golds) {
      const want = gold.trim().replace(/[\s;]+$/, "");
      for (const [source, wrap] of wraps) {
        if (source === "whole-text" && !/^(select|with)\b/i.test(want)) continue;
        assertEquals(extractSql(wrap(gold)), { sql: want, source }, gold);
        n++;
      }
      assertEquals(formatCheck(wraps[0][1](gold)).strict, true);
    }
    console.log(`${golds.length} gold queries, ${n} extractions`);
    assertEquals(golds.length, 6904);
  },
});
