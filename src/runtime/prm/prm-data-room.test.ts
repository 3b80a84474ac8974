// PRM data's rollouts near the model's positions: a prefix late in a long chain plus maxNewTokens can
// exceed them (the sampler refuses such a call; with chains of CTEs several times their gold's length
// it happens), so such prompts are continued alone with the room left instead of failing the cell.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { loadTokenizer } from "../../model/tokenizer.ts";
import { prmStepSpans } from "../../core/prm-steps.ts";
import { rolloutPrefix, splitByRoom } from "./prm-data.ts";

Deno.test("splitByRoom: prompts that leave maxNewTokens go together; the others alone with what is left (none at the limit)", () => {
  assertEquals(splitByRoom([600, 700, 640, 1024, 1100], 384, 1024), { fits: [0, 2], alone: [[1, 324], [3, 0], [4, -76]] });
  assertEquals(splitByRoom([10, 20], 8, 1024), { fits: [0, 1], alone: [] });
});


// Rollouts from a step continue the chain's own tokens: a step ends at ")" inside the chain's token
// "),\n" (or ")\n"), and the prefix encoded alone would end in " )", a token the model never wrote
// there. Under chain-of-ctes@2 a whole answer starts with the prompt's "```sql\nWITH".
const chain = "```sql\nWITH\n  -- the students\n  step_1 AS (\n    SELECT student_id FROM students\n  ),\n  -- their count\n  step_2 AS (\n    SELECT count(*) AS n FROM step_1\n  )\nSELECT n FROM step_2\n```";

Deno.test("rolloutPrefix: a whole answer starts at the answer prefix; a step prefix continues from the chain's own tokens, up to the one that ends the step", async () => {
  const dir = new URL("../../../public/model/", import.meta.url);
  const tok = loadTokenizer(await Deno.readTextFile(new URL("tokenizer.json", dir)), await Deno.readTextFile(new URL("tokenizer_config.json", dir)));
  const enc = (t: string) => tok.encode(t, { addSpecialTokens: false });
  const dec = (ids: readonly number[]) => tok.decode([...ids]);
  const ap = "```sql\nWITH";
  assertEquals(rolloutPrefix("", undefined, ap, enc, dec), { ids: enc(ap), text: ap });
  assertEquals(rolloutPrefix("", undefined, "", enc, dec), { ids: [], text: "" });
  const full = enc(chain);
  const ends = prmStepSpans(chain).ends;
  assertEquals(ends.length, 3);
  for (const e of ends.slice(0, -1)) {
    const prefix = chain.slice(0, e);
    assert(prefix.endsWith(")"), prefix.slice(-10));
    const r = rolloutPrefix(prefix, chain, ap, enc, dec);
    // The chain's first tokens, decoding to the prefix and the rest of its last token.
    assertEquals(r.ids, full.slice(0, r.ids.length));
    assertEquals(dec(r.ids), r.text);
    assert(r.text.startsWith(prefix) && chain.startsWith(r.text) && r.text.length > prefix.length, JSON.stringify(r.text.slice(-8)));
    // Encoded alone the prefix ends in another token than the chain has there.
    const alone = enc(prefix);
    assert(alone.some((id, i) => id !== full[i]), "the re-encoded prefix would break the chain's tokens");
  }
  // A prefix that ends on a token boundary is continued as it is; no chain: the prefix encoded alone.
  const atBoundary = dec(full.slice(0, 6));
  assertEquals(rolloutPrefix(atBoundary, chain, ap, enc, dec), { ids: full.slice(0, 6), text: atBoundary });
  assertEquals(rolloutPrefix(chain.slice(0, ends[0]), undefined, ap, enc, dec), { ids: enc(chain.slice(0, ends[0])), text: chain.slice(0, ends[0]) });
  await assertRejects(() => rolloutPrefix("```sql\nSELECT 1", undefined, ap, enc, dec), /does not start with the template's answer start/);
  await assertRejects(() => rolloutPrefix(ap + " x", chain, ap, enc, dec), /is not the start of its chain/);
});
