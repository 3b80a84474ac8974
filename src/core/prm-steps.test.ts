import { assert, assertEquals } from "../../tests/assert.ts";
import { aggregateStepScores, prmStepSpans, stepTokenRows, tokenCharEnds, tokenSteps } from "./prm-steps.ts";

Deno.test("prmStepSpans: a chain of CTEs gives one step per CTE and the final statement, at their end offsets", () => {
  const text = "Here:\n```sql\nWITH a AS (\n  SELECT 1 AS x\n),\nb AS (SELECT x FROM a)\nSELECT x FROM b;\n```\n";
  const s = prmStepSpans(text);
  assertEquals(s.names, ["a", "b", null]);
  const tails = ["SELECT 1 AS x\n)", "(SELECT x FROM a)", "SELECT x FROM b"];
  s.ends.forEach((e, k) =>
    assert(text.slice(0, e).endsWith(tails[k]), `step ${k} ends at ${e}: ${JSON.stringify(text.slice(0, e))}`)
  );
});

Deno.test("prmStepSpans: a plain query is one step; text without SQL is one step over the whole text; empty text has none", () => {
  const plain = prmStepSpans("```sql\nSELECT name FROM pets\n```");
  assertEquals(plain.names, [null]);
  assertEquals(plain.ends.length, 1);
  const prose = prmStepSpans("I do not know.");
  assertEquals(prose.ends, ["I do not know.".length]);
  assert(prose.problems.some((p) => p.includes("whole answer is one step")), prose.problems.join("; "));
  assertEquals(prmStepSpans("").ends, []);
});

Deno.test("prmStepSpans: a chain cut off inside its second step keeps the first step only", () => {
  const text = "```sql\nWITH a AS (SELECT 1),\nb AS (SELECT * FR";
  const s = prmStepSpans(text);
  assertEquals(s.names, ["a"]);
  assertEquals(text.slice(0, s.ends[0]), "```sql\nWITH a AS (SELECT 1)");
});

Deno.test("tokenCharEnds decodes prefixes, so a character split over two tokens ends at the second", () => {
  // Token 1 and 2 are the two halves of one character: alone, the first decodes to nothing.
  const pieces: Record<number, string> = { 0: "ab", 3: "c" };
  const decode = (ids: readonly number[]) => {
    let s = "";
    for (let i = 0; i < ids.length; i++) {
      if (ids[i] === 1) s += ids[i + 1] === 2 ? "é" : "";
      else if (ids[i] !== 2) s += pieces[ids[i]];
    }
    return s;
  };
  assertEquals(tokenCharEnds([0, 1, 2, 3], decode), [2, 2, 3, 4]);
  // Tokens that decode alone to what they add in context take the fast path (same answer).
  assertEquals(tokenCharEnds([0, 3, 0], decode), [2, 3, 5]);
  // A partial character decoded alone as U+FFFD forces prefix decoding.
  const bytes = (ids: readonly number[]) => ids.length === 1 && ids[0] === 1 ? "\uFFFD" : decode(ids);
  assertEquals(tokenCharEnds([0, 1, 2], bytes), [2, 2, 3]);
});

Deno.test("stepTokenRows: the token holding each step's last character; past the end maps to the last token", () => {
  assertEquals(stepTokenRows([3, 5, 9, 12], [4, 9, 15]), { rows: [1, 2, 3], keep: [0, 1, 2] });
  assertEquals(stepTokenRows([3, 5, 9, 12], [1, 2]), { rows: [0], keep: [1] });
  assertEquals(stepTokenRows([], [4]), { rows: [], keep: [] });
});

Deno.test("tokenSteps: tokens up to each step's last token are that step's, the tail the last step's", () => {
  assertEquals(Array.from(tokenSteps(7, [1, 3])), [0, 0, 1, 1, 1, 1, 1]);
  assertEquals(Array.from(tokenSteps(3, [])), [-1, -1, -1]);
});

Deno.test("aggregateStepScores: min, mean, last, product; NaN for no steps", () => {
  const s = [0.9, 0.5, 0.8];
  assertEquals(aggregateStepScores(s, "min"), 0.5);
  assert(Math.abs(aggregateStepScores(s, "mean") - 2.2 / 3) < 1e-15);
  assertEquals(aggregateStepScores(s, "last"), 0.8);
  assert(Math.abs(aggregateStepScores(s, "product") - 0.36) < 1e-15);
  assert(Number.isNaN(aggregateStepScores([], "min")));
});
