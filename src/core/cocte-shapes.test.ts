import { assertEquals } from "../../tests/assert.ts";
import { chainShapes } from "./cocte-shapes.ts";

const chain2 =
  "```sql\nWITH\n  -- paid plans\n  paid AS (\n    SELECT * FROM plans WHERE tier = 'paid'\n  ),\n  ids AS (\n    SELECT plan_id FROM paid\n  )\nSELECT COUNT(*) FROM ids\n```";
const chain1 = "```sql\nWITH rows_all AS (SELECT * FROM users)\nSELECT name FROM rows_all\n```";
const plain = "```sql\nSELECT COUNT(*) FROM users WHERE user_id IN (SELECT user_id FROM events)\n```";
const cut = "```sql\nWITH a AS (SELECT * FROM t), b AS (SELECT x FROM a), c AS (SELECT";

Deno.test("chainShapes: CTE counts, answers without SQL, multi-step answers (a CTE and the final, or two CTEs cut off)", () => {
  const s = chainShapes([chain2, chain1, plain, plain, "I do not know.", "", cut]);
  assertEquals(s.answers, 7);
  assertEquals(s.noSql, 2);
  assertEquals(s.byCtes, { "2": 2, "1": 1, "0": 2 });
  assertEquals(s.multiStep, 3);
});

Deno.test("chainShapes: no answers", () => {
  assertEquals(chainShapes([]), { answers: 0, noSql: 0, byCtes: {}, multiStep: 0 });
});
