// PRM data's rollouts near the model's positions: a prefix late in a long chain plus maxNewTokens can
// exceed them (the sampler refuses such a call; with chains of CTEs several times their gold's length
// it happens), so such prompts are continued with the room they have left instead of failing the cell — since the
// fourth session of 2026-12-04 in shared calls (sampleWithRoom), before that one call each.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { loadTokenizer } from "../../model/tokenizer.ts";
import { prmStepSpans } from "../../core/prm-steps.ts";
import { rolloutPrefix, type RoomCalls, type RoomSample, sampleWithRoom, splitByRoom } from "./prm-data.ts";

Deno.test("splitByRoom: prompts that leave maxNewTokens go together; the others alone with what is left (none at the limit)", () => {
  assertEquals(splitByRoom([600, 700, 640, 1024, 1100], 384, 1024), {
    fits: [0, 2],
    alone: [[1, 324], [3, 0], [4, -76]],
  });
  assertEquals(splitByRoom([10, 20], 8, 1024), { fits: [0, 1], alone: [] });
});

// Rollouts from a step continue the chain's own tokens: a step ends at ")" inside the chain's token
// "),\n" (or ")\n"), and the prefix encoded alone would end in " )", a token the model never wrote
// there. Under chain-of-ctes@2 a whole answer starts with the prompt's "```sql\nWITH".
const chain =
  "```sql\nWITH\n  -- the students\n  step_1 AS (\n    SELECT student_id FROM students\n  ),\n  -- their count\n  step_2 AS (\n    SELECT count(*) AS n FROM step_1\n  )\nSELECT n FROM step_2\n```";

Deno.test("rolloutPrefix: a whole answer starts at the answer prefix; a step prefix continues from the chain's own tokens, up to the one that ends the step", async () => {
  const dir = new URL("../../../public/model/", import.meta.url);
  const tok = loadTokenizer(
    await Deno.readTextFile(new URL("tokenizer.json", dir)),
    await Deno.readTextFile(new URL("tokenizer_config.json", dir)),
  );
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
    assert(
      r.text.startsWith(prefix) && chain.startsWith(r.text) && r.text.length > prefix.length,
      JSON.stringify(r.text.slice(-8)),
    );
    // Encoded alone the prefix ends in another token than the chain has there.
    const alone = enc(prefix);
    assert(alone.some((id, i) => id !== full[i]), "the re-encoded prefix would break the chain's tokens");
  }
  // A prefix that ends on a token boundary is continued as it is; no chain: the prefix encoded alone.
  const atBoundary = dec(full.slice(0, 6));
  assertEquals(rolloutPrefix(atBoundary, chain, ap, enc, dec), { ids: full.slice(0, 6), text: atBoundary });
  assertEquals(rolloutPrefix(chain.slice(0, ends[0]), undefined, ap, enc, dec), {
    ids: enc(chain.slice(0, ends[0])),
    text: chain.slice(0, ends[0]),
  });
  await assertRejects(
    () => rolloutPrefix("```sql\nSELECT 1", undefined, ap, enc, dec),
    /does not start with the template's answer start/,
  );
  await assertRejects(() => rolloutPrefix(ap + " x", chain, ap, enc, dec), /is not the start of its chain/);
});

// sampleWithRoom against the rule it replaces (each prompt without room for maxNewTokens sampled in a call of its
// own, capped at its room): a fake sampler that refuses what the real one refuses (longest prompt + maxNewTokens
// over maxPositions), and whose rows each want a fixed number of tokens (then EOS), readable from the prompt alone
// so a continued row goes on as it would have.
Deno.test("sampleWithRoom: prompts without room share calls, every row ends where a call of its own would have ended it", async () => {
  const EOS = 1, maxPositions = 100, maxNewTokens = 30, P = 4, n = 3;
  // Prompt j: a marker token then filler; lengths spread so some fit (<= 70) and most do not, a few with no room.
  const lengths = [20, 75, 71, 90, 99, 100, 85, 72, 60, 88, 95, 74, 80, 70, 98];
  const prompts = lengths.map((L, j) => [500 + j, ...new Array<number>(L - 1).fill(7)]);
  const wants = (owner: number, slot: number) => 1 + ((owner * 7 + slot * 13) % 40); // tokens, EOS included
  const gen = (slot: number, k: number) => 10000 * (slot + 1) + k;
  const decode = (ids: readonly number[]) => ids.join(",");
  const calls: { prompts: number; n: number; maxNewTokens: number; seed: number }[] = [];
  const sample = (ps: number[][], k: number, maxNew: number, seed: number) => {
    const maxLen = Math.max(...ps.map((p) => p.length));
    if (maxLen + maxNew > maxPositions) throw new Error(`refused: ${maxLen} + ${maxNew} > ${maxPositions}`);
    calls.push({ prompts: ps.length, n: k, maxNewTokens: maxNew, seed });
    const out: RoomSample[] = [];
    ps.forEach((p, pi) => {
      const owner = p[0] - 500;
      const before = p.filter((t) => t >= 10000);
      for (let index = 0; index < k; index++) {
        const slot = before.length ? Math.floor(before[0] / 10000) - 1 : index;
        const tokens: number[] = [];
        let finishReason = "length";
        for (let s = 0; s < maxNew; s++) {
          const at = before.length + tokens.length;
          if (at + 1 === wants(owner, slot)) {
            tokens.push(EOS);
            finishReason = "eos";
            break;
          }
          tokens.push(gen(slot, at));
        }
        const body = finishReason === "eos" ? tokens.slice(0, -1) : tokens;
        out.push({ prompt: pi, index, tokens, text: decode(body), finishReason });
      }
    });
    return Promise.resolve(out);
  };
  const seedFor = (kind: "fit" | "room", a: number, b: number) => (kind === "fit" ? 1000 + a : 2000 + 100 * a + b);
  const counts: RoomCalls = { fit: 0, room: 0, roomSteps: 0 };
  const got = await sampleWithRoom(
    prompts,
    n,
    { maxNewTokens, maxPositions, batch: P, seedFor },
    sample,
    decode,
    counts,
  );
  // The old rule, row by row: up to EOS or its own room (maxNewTokens, or what is left of maxPositions).
  prompts.forEach((p, j) => {
    const room = Math.min(maxNewTokens, maxPositions - p.length);
    const expected = room < 1 ? [] : Array.from({ length: n }, (_, slot) => {
      const w = wants(j, slot);
      const body = w <= room ? w - 1 : room;
      return decode(Array.from({ length: body }, (_, k) => gen(slot, k)));
    });
    assertEquals(got[j], expected, `prompt ${j} (length ${p.length})`);
  });
  // Calls: the fitting prompts as before (chunks of P in order, their seeds), the others grouped.
  const alone = lengths.filter((L) => L + maxNewTokens > maxPositions && L < maxPositions).length;
  assertEquals(calls.filter((c) => c.seed < 2000).map((c) => [c.seed, c.prompts]), [[1000, 1], [1008, 1], [1012, 1]]);
  const roomCalls = calls.filter((c) => c.seed >= 2000);
  // Decoding steps (what a host-bound call costs): the old rule ran each prompt's own room, one call each.
  const oldSteps = lengths.filter((L) => L + maxNewTokens > maxPositions && L < maxPositions).reduce(
    (a, L) => a + maxPositions - L,
    0,
  );
  const newSteps = roomCalls.reduce((a, c) => a + c.maxNewTokens, 0);
  assert(
    newSteps < oldSteps / 2,
    `decoding steps ${newSteps} (${roomCalls.length} calls) against ${oldSteps} (${alone} calls)`,
  );
  assert(roomCalls.every((c) => c.prompts <= P), "at most P prompts a call");
  assertEquals(
    roomCalls.filter((c) => c.n === n).length,
    Math.ceil(alone / P),
    "round 0: the prompts without room, P at a time",
  );
  assertEquals(counts, { fit: 3, room: roomCalls.length, roomSteps: newSteps });
});
