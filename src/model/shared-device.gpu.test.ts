// The CPU sampler over an ORT policy created on the caller's GPUDevice (the trainer's), on every
// engine npm test runs (Dawn included: the shared device is how the product runs there): split out
// of sampler.gpu.test.ts, which runs on lavapipe only.
import { assert, assertEquals } from "../../tests/assert.ts";
import { OrtPolicy } from "./policy.ts";
import { DEFAULT_SAMPLING, sampleBatch, type SamplingParams } from "./sampler.ts";
import { makeTinyModel, tinyTokenizerFiles } from "./tiny.ts";
import { HfTokenizer } from "./tokenizer.ts";

const m = makeTinyModel("qwen2", { seed: 31 });
const tf = tinyTokenizerFiles();
const tok = new HfTokenizer(tf.tokenizerJson, tf.tokenizerConfig);
const decode = (ids: readonly number[]) => (ids.length ? tok.decode(ids) : "");
const prompts = ["SELECT name FROM", "WHERE x", "a"].map((s) => tok.encode(s));
const params = (o: Partial<SamplingParams>): SamplingParams => ({
  ...DEFAULT_SAMPLING,
  maxNewTokens: 8,
  eosTokenIds: [],
  ...o,
});

Deno.test("sampler on a policy created on the caller's GPUDevice (the trainer's): repeated prompts and early EOS give the same samples as on ORT's own device (regression: the rows of a shrinking batch were copied into a buffer made on ORT's device, a WebGPU validation error)", async () => {
  const { requestGpu } = await import("../gpu/device.ts");
  const gpu = await requestGpu();
  const own = await OrtPolicy.create(m.config, m.weights, { maxPositions: 32 });
  const shared = await OrtPolicy.create(m.config, m.weights, { maxPositions: 32, device: gpu.device });
  try {
    assertEquals(shared.device, gpu.device);
    // EOS on a token the sampler meets early, so rows leave the batch at different steps.
    const probe = await sampleBatch(own, prompts, 1, params({ temperature: 0 }), decode);
    const eos = probe[0].tokens[2];
    const p = params({ temperature: 3, seed: 11, eosTokenIds: [eos] });
    const want = await sampleBatch(own, prompts, 3, p, decode);
    const got = await sampleBatch(shared, prompts, 3, p, decode);
    assert(
      want.some((s) => s.finishReason === "eos") && want.some((s) => s.finishReason !== "eos"),
      "rows must leave at different steps for the gather to run",
    );
    assertEquals(got.map((s) => s.tokens), want.map((s) => s.tokens));
  } finally {
    await own.release();
    await shared.release();
  }
});
