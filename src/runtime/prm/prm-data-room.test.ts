// PRM data's rollouts near the model's positions: a prefix late in a long chain plus maxNewTokens can
// exceed them (the sampler refuses such a call; with chains of CTEs several times their gold's length
// it happens), so such prompts are continued alone with the room left instead of failing the cell.
import { assertEquals } from "../../../tests/assert.ts";
import { splitByRoom } from "./prm-data.ts";

Deno.test("splitByRoom: prompts that leave maxNewTokens go together; the others alone with what is left (none at the limit)", () => {
  assertEquals(splitByRoom([600, 700, 640, 1024, 1100], 384, 1024), { fits: [0, 2], alone: [[1, 324], [3, 0], [4, -76]] });
  assertEquals(splitByRoom([10, 20], 8, 1024), { fits: [0, 1], alone: [] });
});
