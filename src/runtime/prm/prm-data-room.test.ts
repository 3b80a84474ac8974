// PRM data's rollouts near the model's positions: a prefix late in a long chain plus maxNewTokens can
// exceed them (the sampler refuses such a call; with chains of CTEs several times their gold's length
// it happens), so such prompts are continued alone with the room left instead of failing the cell.
import { assertEquals, assertRejects } from "../../../tests/assert.ts";
import { rolloutStart, splitByRoom } from "./prm-data.ts";

Deno.test("splitByRoom: prompts that leave maxNewTokens go together; the others alone with what is left (none at the limit)", () => {
  assertEquals(splitByRoom([600, 700, 640, 1024, 1100], 384, 1024), { fits: [0, 2], alone: [[1, 324], [3, 0], [4, -76]] });
  assertEquals(splitByRoom([10, 20], 8, 1024), { fits: [0, 1], alone: [] });
});

// Under chain-of-ctes@2 the prompt starts the answer: a whole answer is sampled after that start and
// carries it; a rollout continues its chain prefix, which already begins with it.
Deno.test("rolloutStart: a whole answer starts at the template's answer prefix; a chain prefix is continued as it is", async () => {
  const ap = "```sql\nWITH";
  assertEquals(rolloutStart("", ap), ap);
  assertEquals(rolloutStart("", ""), "");
  assertEquals(rolloutStart(ap + " step_1 AS (SELECT 1),", ap), ap + " step_1 AS (SELECT 1),");
  assertEquals(rolloutStart("```sql\nSELECT", ""), "```sql\nSELECT");
  await assertRejects(() => rolloutStart("```sql\nSELECT 1", ap), /does not start with the template's answer start/);
});
