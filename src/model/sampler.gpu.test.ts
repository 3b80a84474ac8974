// Batched sampling on the ORT policy (WebGPU on lavapipe): determinism, greedy = argmax of the
// float64 reference, reported log-probabilities = the reference's, EOS and stop strings.
import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { OrtPolicy } from "./policy.ts";
import { referenceLogits, referenceLogprobs } from "./reference.ts";
import { DEFAULT_SAMPLING, type Sample, sampleBatch, type SamplingParams } from "./sampler.ts";
import { makeTinyModel, tinyTokenizerFiles } from "./tiny.ts";
import { HfTokenizer } from "./tokenizer.ts";

const m = makeTinyModel("qwen2", { seed: 31 });
const tf = tinyTokenizerFiles();
const tok = new HfTokenizer(tf.tokenizerJson, tf.tokenizerConfig);
const decode = (ids: readonly number[]) => (ids.length ? tok.decode(ids) : "");
const prompts = ["SELECT name FROM", "WHERE x", "a"].map((s) => tok.encode(s));
// Token ids of the tiny vocabulary past the tokenizer's (padding rows) decode to nothing; keep
// them out of play so stop strings see every sampled token.
const params = (o: Partial<SamplingParams>): SamplingParams => ({
  ...DEFAULT_SAMPLING,
  maxNewTokens: 8,
  eosTokenIds: [],
  ...o,
});

/** The reference's log-probabilities of each sample's tokens after its prompt. */
function refLogprobs(s: Sample): number[] {
  const seq = [...prompts[s.prompt], ...s.tokens];
  return referenceLogprobs(m.config, m.weights, [seq])[0].slice(prompts[s.prompt].length - 1);
}

Deno.test("sampler on the ORT policy: greedy, determinism, log-probabilities, EOS and stop strings", async () => {
  const policy = await OrtPolicy.create(m.config, m.weights, { maxPositions: 32 });
  try {
    // Greedy: every token is the reference's argmax (where the top two are not within float noise).
    const greedy = await sampleBatch(policy, prompts, 2, params({ temperature: 0 }), decode);
    assertEquals(greedy.length, 6);
    let checked = 0;
    for (const s of greedy) {
      const seq = [...prompts[s.prompt], ...s.tokens];
      const logits = referenceLogits(m.config, m.weights, seq);
      for (let t = 0; t < s.tokens.length; t++) {
        const row = [...logits[prompts[s.prompt].length - 1 + t]];
        const order = row.map((_, i) => i).sort((a, b) => row[b] - row[a]);
        if (row[order[0]] - row[order[1]] < 1e-3) continue;
        assertEquals(s.tokens[t], order[0], `prompt ${s.prompt} token ${t}`);
        checked++;
      }
      assertEquals(s.finishReason, "length");
      assertClose(s.logprobs, refLogprobs(s), { atol: 2e-3, rtol: 0, name: "greedy logprobs" });
    }
    assert(checked >= 40, `only ${checked} greedy tokens had a clear argmax`);
    assertEquals(greedy[0].tokens, greedy[1].tokens);
    // top-k 1 at temperature 1 is greedy.
    const k1 = await sampleBatch(policy, prompts, 1, params({ temperature: 1, topK: 1 }), decode);
    assertEquals(k1.map((s) => s.tokens), greedy.filter((s) => s.index === 0).map((s) => s.tokens));

    // Sampling: same seed, same samples; another seed differs; logprobs are the model's (T = 1).
    // The tiny model is peaked (top token ~0.99), so a high temperature makes samples differ.
    const p = params({ temperature: 4, topP: 0.95, seed: 7 });
    const streamed = new Map<string, number[]>();
    let steps = 0;
    const a = await sampleBatch(policy, prompts, 3, p, decode, (pr) => {
      steps = pr.step;
      for (const x of pr.added) {
        streamed.set(`${x.prompt}/${x.index}`, [...(streamed.get(`${x.prompt}/${x.index}`) ?? []), x.token]);
      }
    });
    const b = await sampleBatch(policy, prompts, 3, p, decode);
    assertEquals(a, b);
    // The progress callback streamed every token of every sample, in order.
    assertEquals(steps, Math.max(...a.map((s) => s.tokens.length)));
    for (const s of a) assertEquals(streamed.get(`${s.prompt}/${s.index}`), s.tokens);
    const c = await sampleBatch(policy, prompts, 3, { ...p, seed: 8 }, decode);
    assert(
      a.map((s) => s.tokens.join()).join("|") !== c.map((s) => s.tokens.join()).join("|"),
      "seed 7 and 8 gave the same samples",
    );
    assert(
      new Set(a.filter((s) => s.prompt === 0).map((s) => s.tokens.join())).size > 1,
      "the 3 samples of prompt 0 are identical",
    );
    for (const s of a) {
      assertClose(s.logprobs, refLogprobs(s), { atol: 2e-3, rtol: 0, name: `sample ${s.prompt}/${s.index} logprobs` });
    }
    // A sample depends on its prompt's place and seed, not on the rest of the batch: the short
    // prompt alone (no padding) and next to a long one (6 pads on the left) samples the same.
    const alone = await sampleBatch(policy, [prompts[2]], 3, p, decode);
    const padded = await sampleBatch(policy, [prompts[2], prompts[0]], 3, p, decode);
    assertEquals(alone.map((s) => s.tokens), padded.filter((s) => s.prompt === 0).map((s) => s.tokens));

    // Samples ending at different steps leave the batch; the rest decode on, still exact, and
    // each sample is what it is in a batch where nothing ends early.
    const common = a.flatMap((s) => s.tokens.slice(1, 4));
    const eosTok = common.sort((x, y) =>
      common.filter((v) => v === y).length - common.filter((v) => v === x).length
    )[0];
    const early = await sampleBatch(policy, prompts, 3, { ...p, eosTokenIds: [eosTok] }, decode);
    assert(
      early.some((s) => s.finishReason === "eos" && s.tokens.length < 8) &&
        early.some((s) => s.finishReason === "length"),
      `want early and full-length samples: ${early.map((s) => `${s.finishReason}:${s.tokens.length}`)}`,
    );
    for (const [i, s] of early.entries()) {
      const cut = a[i].tokens.indexOf(eosTok);
      assertEquals(s.tokens, cut >= 0 ? a[i].tokens.slice(0, cut + 1) : a[i].tokens, `sample ${s.prompt}/${s.index}`);
      assertClose(s.logprobs, refLogprobs(s), {
        atol: 2e-3,
        rtol: 0,
        name: `early-exit sample ${s.prompt}/${s.index}`,
      });
    }

    // EOS and stop strings on a sampled path (the greedy one of this tiny model repeats one
    // token): rerunning sample 0 of prompt 0 with the same seed replays it until it must end.
    const g0 = a[0].tokens;
    const firstEos = g0.findIndex((x, t) => t >= 2 && g0.indexOf(x) === t);
    assert(firstEos > 0, `path ${g0} has no new token after step 2`);
    const eosRun = await sampleBatch(policy, [prompts[0]], 1, { ...p, eosTokenIds: [g0[firstEos]] }, decode);
    assertEquals(eosRun[0].finishReason, "eos");
    assertEquals(eosRun[0].tokens, g0.slice(0, firstEos + 1));
    assertEquals(eosRun[0].text, decode(g0.slice(0, firstEos)));
    const text = decode(g0);
    const stop = text.slice(2, 4);
    assert(stop.length === 2, `sampled text too short: ${JSON.stringify(text)}`);
    const stopRun = await sampleBatch(policy, [prompts[0]], 1, { ...p, stop: ["@@never@@", stop] }, decode);
    assertEquals(stopRun[0].finishReason, "stop");
    assertEquals(stopRun[0].text, text.slice(0, text.indexOf(stop) + stop.length));
    assertEquals(stopRun[0].tokens, g0.slice(0, stopRun[0].tokens.length));
    assert(
      decode(stopRun[0].tokens).startsWith(stopRun[0].text),
      "stop run text is not its tokens' text cut at the stop",
    );
    assert(!decode(stopRun[0].tokens.slice(0, -1)).includes(stop), "generation went on past the stop string");
  } finally {
    await policy.release();
  }
});

Deno.test("sampler on an f16 policy: the float16 KV cache is repeated and fed back (regression: Deno returns it as Float16Array)", async () => {
  const policy = await OrtPolicy.create(m.config, m.weights, { dtype: "f16", maxPositions: 32 });
  try {
    const p = params({ temperature: 4, seed: 3, maxNewTokens: 5 });
    const a = await sampleBatch(policy, prompts, 2, p, decode);
    assertEquals(a, await sampleBatch(policy, prompts, 2, p, decode));
    for (const s of a) {
      assertClose(s.logprobs, refLogprobs(s), { atol: 0.1, rtol: 0, name: `f16 sample ${s.prompt}/${s.index}` });
    }
    // Early exits select float16 cache rows on the GPU; the other samples continue unchanged.
    const eosTok = a[0].tokens[1];
    const early = await sampleBatch(policy, prompts, 2, { ...p, eosTokenIds: [eosTok] }, decode);
    for (const [i, s] of early.entries()) {
      const cut = a[i].tokens.indexOf(eosTok);
      assertEquals(s.tokens, cut >= 0 ? a[i].tokens.slice(0, cut + 1) : a[i].tokens, `f16 early sample ${i}`);
    }
    assert(early.some((s) => s.finishReason === "length"), "every f16 sample ended early");
  } finally {
    await policy.release();
  }
});
