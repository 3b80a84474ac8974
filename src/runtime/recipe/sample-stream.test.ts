// FinishTracker against the sampler itself: driving sampleBatch with a seeded fake model, every
// row is reported exactly once, no later than the call returns, with the text and token count of
// the final Sample (EOS and maxNewTokens endings, rows leaving the batch at different steps).
import { assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { KvCache, StepInput, StepOutput } from "../../model/policy.ts";
import { sampleBatch, type StepModel } from "../../model/sampler.ts";
import { type FinishedText, FinishTracker } from "./sample-stream.ts";

const V = 12;
const EOS = 0;

/** Random logits (seeded), EOS likelier as positions grow; the cache only counts rows. */
function fakeModel(seed: number): StepModel {
  const rng = new Rng(seed);
  const cache = (batch: number): KvCache => ({ tensors: [], batch, length: 0 });
  return {
    maxPositions: 4096,
    cfg: { vocabSize: V },
    step(input: StepInput): Promise<StepOutput> {
      const B = input.ids.length;
      const logits = new Float32Array(B * V);
      for (let b = 0; b < B; b++) {
        const pos = input.positions[b][input.positions[b].length - 1];
        for (let v = 0; v < V; v++) logits[b * V + v] = 2 * rng.next() - 1;
        logits[b * V + EOS] += pos / 12 - 2;
      }
      return Promise.resolve({ logits, present: cache(B) });
    },
    repeatCache: (c, n) => Promise.resolve(cache(c.batch * n)),
    selectCacheRows: (_c, keep) => Promise.resolve(cache(keep.length)),
    releaseCache: () => undefined,
  };
}

const decode = (ids: readonly number[]) => ids.map((t) => String.fromCharCode(96 + t)).join("");

Deno.test("sample-stream: each row is reported once, before the call returns, with the final sample's text and length", async () => {
  for (const [seed, maxNewTokens] of [[1, 40], [2, 8], [3, 25]]) {
    const seen: FinishedText[] = [];
    let returned = false;
    const tracker = new FinishTracker(new Set([EOS]), maxNewTokens, decode, (f) => {
      if (returned) throw new Error("reported after the call returned");
      seen.push(f);
    });
    const prompts = [[1, 2, 3], [4, 5], [6]];
    const samples = await sampleBatch(
      fakeModel(seed),
      prompts,
      8,
      { temperature: 1, topP: 1, topK: 0, minP: 0, maxNewTokens, stop: [], eosTokenIds: [EOS], seed },
      decode,
      (p) => tracker.progress(p),
    );
    returned = true;
    assertEquals(seen.length, samples.length, `seed ${seed}: every row once`);
    const byKey = new Map(seen.map((f) => [`${f.prompt}:${f.index}`, f]));
    assertEquals(byKey.size, samples.length);
    for (const s of samples) {
      const f = byKey.get(`${s.prompt}:${s.index}`);
      assertEquals(
        [f?.text, f?.tokens],
        [s.text, s.tokens.length],
        `seed ${seed} row ${s.prompt}:${s.index} (${s.finishReason})`,
      );
    }
    const reasons = new Set(samples.map((s) => s.finishReason));
    if (maxNewTokens === 8) assertEquals(reasons.has("length"), true, "some rows end at maxNewTokens");
    assertEquals(reasons.has("eos"), true, "some rows end at EOS");
  }
});
