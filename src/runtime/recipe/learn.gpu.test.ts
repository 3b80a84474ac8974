// The whole loop learns: ORT sampling with the adapter the trainer just updated, SQL scoring,
// GRPO on the GPU. On the tiny fixture the only reward with a spread is the length penalty, so
// GRPO must teach the model to end its completions sooner; if the policy kept sampling with a
// stale adapter, nothing would change.
import { assert } from "../../../tests/assert.ts";
import { decodeMetrics } from "../../core/metrics.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { MemoryStore } from "../store.ts";
import { denoEnv } from "./env.deno.ts";
import { tinyDatasetCell, tinyPromptCorpus, writeTinyDataset, writeVaryingLengthModel } from "./fixtures.deno.ts";
import { runNotebook } from "./runner.ts";

Deno.test({
  name: "recipe: GRPO through the whole loop lifts the reward (completions shorten under a length penalty)",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-learn-" });
    const template = "reasoning-answer@1";
    await writeTinyDataset(`${dir}/data`);
    await writeVaryingLengthModel(`${dir}/model`, {
      seed: 3,
      corpus: await tinyPromptCorpus(`${dir}/data`, [template]),
    });
    const parsed = parseNotebook({
      version: 1,
      title: "learn",
      cells: [
        tinyDatasetCell({ devFraction: 0 }),
        {
          id: "model",
          type: "model",
          params: { source: "url", url: "model", dtype: "f32", loraRank: 4, loraAlpha: 8 },
        },
        { id: "prompt", type: "prompt", params: { template } },
        {
          id: "reward",
          type: "reward",
          params: { spec: { components: [{ name: "length", weight: 1, params: { maxTokens: 2 } }] } },
        },
        {
          id: "grpo",
          type: "grpo",
          params: { G: 6, steps: 6, batchQuestions: 2, maxNewTokens: 4, lr: 0.02, evalEvery: 0 },
        },
      ],
    });
    assert(parsed.ok);
    const store = new MemoryStore();
    await runNotebook(parsed.doc, { ...denoEnv({ out: dir, base: dir }), store });
    const text = new TextDecoder().decode((await store.read("metrics.jsonl")) ?? new Uint8Array());
    const steps = decodeMetrics(text).records.filter((r) => r.phase === "grpo");
    const reward = steps.map((r) => r.rewards?.total.mean ?? NaN);
    const length = steps.map((r) => r.completionLength?.mean ?? NaN);
    console.log(
      `reward per step: ${reward.map((x) => x.toFixed(2)).join(" ")}\nmean completion length: ${
        length.map((x) => x.toFixed(2)).join(" ")
      }`,
    );
    const first = (reward[0] + reward[1]) / 2, last = (reward[4] + reward[5]) / 2;
    assert(first < -0.2, `starts with long completions (reward ${first})`);
    assert(last > first + 0.2, `reward rises: first two steps ${first}, last two ${last}`);
    await Deno.remove(dir, { recursive: true });
  },
});
