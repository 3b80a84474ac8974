// PRM data's rollouts near the model's positions on the real sampler (tiny random model, lavapipe / Dawn):
// sampleWithRoom's shared calls and continued rows give, greedily, what one call per prompt capped at its own room
// (the rule it replaced) gives — the same texts, rows ended by EOS or by that room — in fewer decoding steps.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { requestGpu } from "../../gpu/device.ts";
import { loadHfModel } from "../../model/hf.ts";
import { DirSource } from "../../model/source.deno.ts";
import { tinyPromptCorpus, writeTinyDataset, writeVaryingLengthModel } from "../recipe/fixtures.deno.ts";
import { ModelRuntime } from "../recipe/model-runtime.ts";
import { sampleWithRoom } from "./prm-data.ts";

Deno.test({
  name:
    "sampleWithRoom on the GPU policy: greedy texts equal one call per prompt at its own room, in fewer decoding steps",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-room-" });
    await writeTinyDataset(`${dir}/data`);
    const corpus = await tinyPromptCorpus(`${dir}/data`, ["chain-of-ctes@2"]);
    await writeVaryingLengthModel(`${dir}/model`, { seed: 7, eosStrength: 0.2, corpus });
    const hf = await loadHfModel(new DirSource(`${dir}/model`));
    const gpu = await requestGpu();
    // 64 positions: the rule is the same at any length, and prompts near 2,048 (the tiny model's own limit) made this
    // test prefill eight ~2,000-token prompts, then seven again one at a time, on a software GPU.
    const rt = await ModelRuntime.create({ ...hf, name: "tiny" }, () => Promise.resolve(gpu.device), {
      dtype: "f32",
      loraRank: 2,
      loraAlpha: 4,
      seed: 0,
      maxPositions: 64,
    });
    try {
      const maxPositions = rt.policy.maxPositions, maxNewTokens = 24;
      // Prompts from the model's own text, cut to lengths near the end of its positions: two leave maxNewTokens,
      // the others 1-23 tokens, one none.
      const base = rt.encodePlain(corpus.join("\n"));
      const ids = (len: number, shift: number) =>
        Array.from({ length: len }, (_, i) => base[(i * 7 + shift) % base.length]);
      const lengths = [
        maxPositions - 40,
        maxPositions - 3,
        maxPositions - 20,
        maxPositions - 9,
        maxPositions - 24,
        maxPositions - 15,
        maxPositions - 1,
        maxPositions,
      ];
      const prompts = lengths.map((L, j) => ids(L, j * 13));
      const greedy = { temperature: 0, topP: 1, topK: 0, minP: 0, stop: [], seed: 1 };
      const calls: number[] = [];
      const got = await sampleWithRoom(
        prompts,
        1,
        { maxNewTokens, maxPositions, batch: 8, seedFor: () => 1 },
        (ps, n, maxNew) => {
          calls.push(maxNew);
          return rt.sample(ps, n, { ...greedy, maxNewTokens: maxNew });
        },
        (t) => rt.decode(t),
      );
      const finish: string[] = [];
      for (const [j, p] of prompts.entries()) {
        const room = Math.min(maxNewTokens, maxPositions - p.length);
        if (room < 1) {
          assertEquals(got[j], [], `prompt ${j}: no room, no sample`);
          continue;
        }
        const [alone] = await rt.sample([p], 1, { ...greedy, maxNewTokens: room });
        finish.push(`${alone.finishReason} at ${alone.tokens.length}`);
        assertEquals(
          got[j],
          [alone.text],
          `prompt ${j} (room ${room}, ${alone.finishReason} after ${alone.tokens.length} tokens)`,
        );
      }
      // Decoding steps of the calls for the prompts without room (the first call is the two that fit): at most the
      // largest room (rows continue where the last call stopped them), against the sum of the rooms one call each.
      const rooms = lengths.map((L) => maxPositions - L).filter((r) => r >= 1 && r < maxNewTokens);
      const steps = calls.slice(1).reduce((a, b) => a + b, 0);
      assertEquals(calls[0], maxNewTokens);
      assert(
        steps <= Math.max(...rooms) && steps < rooms.reduce((a, b) => a + b, 0),
        `${steps} decoding steps in ${calls.length - 1} calls, rooms ${rooms}`,
      );
      assert(finish.some((f) => f.startsWith("length")), `some rows end at their room: ${finish}`);
      console.log(
        `sampleWithRoom: calls capped at ${calls.join(", ")} (rooms ${rooms}); one call per prompt ended: ${
          finish.join(", ")
        }`,
      );
    } finally {
      await rt.release();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
