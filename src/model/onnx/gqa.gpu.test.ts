// The decoder with `attention: "gqa"` (one com.microsoft.GroupQueryAttention per layer; WebGPU EP of
// onnxruntime-web 1.30 on lavapipe, and the WASM fallback) against the float64 reference and the
// explicit graph: ragged batches with the sampler's left padding (one row padded past a 64-key tile of
// ORT's flash attention) through prefill and decoding steps, log-probabilities with right padding at
// f32 + LoRA and q4, and greedy sampling through `sampleBatch` giving the explicit graph's tokens.
import { assert, assertClose, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { Arch } from "../config.ts";
import { LORA_TARGETS, randomAdapter } from "../lora.ts";
import { checkGqa } from "../gqa-check.ts";
import { OrtPolicy } from "../policy.ts";
import { q4EffectiveWeights } from "../quant.ts";
import { referenceLogits, referenceLogprobs } from "../reference.ts";
import { DEFAULT_SAMPLING, sampleBatch } from "../sampler.ts";
import { makeTinyModel } from "../tiny.ts";

// ORT's GQA needs a head dim that is a multiple of 8: the tiny llama (6) and qwen3 (12) get 8.
const tiny = (arch: Arch, seed: number) =>
  makeTinyModel(arch, {
    seed,
    ...(arch === "qwen2" ? {} : { hidden: 48, heads: 6, kvHeads: arch === "llama" ? 3 : 2, headDim: 8 }),
  });
const ARCHS: Arch[] = ["qwen2", "llama", "qwen3"];

// Where the device has subgroups, ORT's GQA takes a subgroup flash-attention path that is wrong on
// SwiftShader (gqa-check.ts): there the numerics tests below are skipped with a notice and the
// fallback test runs instead. The tests build GQA graphs with checkGqa: false (no second check).
const probe = tiny("qwen2", 1);
const check = await checkGqa(
  probe.config,
  null,
  (c, w, a) =>
    OrtPolicy.create(c, w, { dtype: "f32", attention: a, maxPositions: 64, checkGqa: false, onNote: () => {} }),
);
const gqaRight = check.ok;
if (!gqaRight) {
  console.warn(
    `NOTICE: onnxruntime-web's GroupQueryAttention is wrong on this device (max |GQA - explicit| ${
      check.maxAbsDiff.toExponential(2)
    }): its numerics tests are skipped, the fallback test runs`,
  );
}

function randomSeqs(rng: Rng, V: number, lengths: number[]): number[][] {
  return lengths.map((n) => Array.from({ length: n }, () => rng.int(V)));
}

for (const arch of ARCHS) {
  Deno.test({
    name:
      `gqa ${arch}: ragged left-padded prefill and decoding steps equal the float64 reference and the explicit graph (LoRA on every target)`,
    ignore: !gqaRight,
  }, async () => {
    const m = tiny(arch, 41);
    const cfg = m.config, V = cfg.vocabSize;
    const adapter = randomAdapter(cfg, { r: 4, alpha: 8, targets: [...LORA_TARGETS], seed: 5, bScale: 0.2 });
    const o = { maxPositions: 96, loraTargets: LORA_TARGETS };
    const gqa = await OrtPolicy.create(cfg, m.weights, { ...o, attention: "gqa", checkGqa: false });
    const explicit = await OrtPolicy.create(cfg, m.weights, { ...o, attention: "explicit" });
    try {
      assertEquals([gqa.attention, explicit.attention], ["gqa", "explicit"]);
      gqa.setAdapter(adapter);
      explicit.setAdapter(adapter);
      // Prompts of 70, 3 and 20 tokens, 6 decoding steps: row 1 has 67 pads, more than one 64-key tile.
      const steps = 6;
      const full = randomSeqs(new Rng(7), V, [70 + steps, 3 + steps, 20 + steps]);
      const lens = [70, 3, 20], L = 70;
      const refs = full.map((s) => referenceLogits(cfg, m.weights, s, adapter));
      const pad = lens.map((n) => L - n);
      const mask = lens.map((_, b) => Array.from({ length: L }, (_, t) => (t < pad[b] ? 0 : 1)));
      let input = {
        ids: full.map((s, b) => [...new Array<number>(pad[b]).fill(0), ...s.slice(0, lens[b])]),
        mask,
        positions: lens.map((_, b) => Array.from({ length: L }, (_, t) => Math.max(0, t - pad[b]))),
        past: null as null | Awaited<ReturnType<OrtPolicy["step"]>>["present"],
        keep: 1,
      };
      let pastE = null as null | Awaited<ReturnType<OrtPolicy["step"]>>["present"];
      let worst = 0;
      for (let k = 0; k <= steps; k++) {
        const g = await gqa.step(input);
        const e = await explicit.step({ ...input, past: pastE });
        for (let b = 0; b < 3; b++) {
          const at = lens[b] - 1 + k;
          const row = g.logits.subarray(b * V, (b + 1) * V);
          const r = assertClose(row, refs[b][at], {
            atol: 2e-4,
            rtol: 1e-4,
            name: `${arch} row ${b} step ${k} vs reference`,
          });
          worst = Math.max(worst, r.maxAbs);
          assertClose(row, e.logits.subarray(b * V, (b + 1) * V), {
            atol: 2e-4,
            rtol: 1e-4,
            name: `${arch} row ${b} step ${k} vs explicit`,
          });
        }
        assertEquals(g.present.tensors[0].dims, [3, cfg.numKvHeads, L + k, cfg.headDim]);
        assertEquals(g.present.tensors[0].location, "gpu-buffer");
        if (input.past) gqa.releaseCache(input.past);
        if (pastE) explicit.releaseCache(pastE);
        pastE = e.present;
        for (const r of mask) r.push(1);
        input = {
          ids: full.map((s, b) => [s[lens[b] + k]]),
          mask,
          positions: lens.map((n) => [n + k]),
          past: g.present,
          keep: 1,
        };
      }
      if (input.past) gqa.releaseCache(input.past);
      if (pastE) explicit.releaseCache(pastE);
      console.log(`${arch} gqa: max |logit err| vs float64 over prefill + ${steps} steps ${worst.toExponential(2)}`);
    } finally {
      await gqa.release();
      await explicit.release();
    }
  });
}

Deno.test({
  name:
    "gqa: right-padded log-probabilities equal the float64 reference at f32 + LoRA and at q4 (against its dequantised weights), on WebGPU and WASM",
  ignore: !gqaRight,
}, async () => {
  for (const arch of ARCHS) {
    const m = tiny(arch, 43);
    const seqs = randomSeqs(new Rng(3), m.config.vocabSize, [9, 3, 14]);
    const adapter = randomAdapter(m.config, {
      r: 4,
      alpha: 8,
      targets: ["q_proj", "v_proj", "up_proj"],
      seed: 11,
      bScale: 0.2,
    });
    const want = referenceLogprobs(m.config, m.weights, seqs, adapter);
    const eff = q4EffectiveWeights(m.config, m.weights);
    const wantQ4 = referenceLogprobs(eff.cfg, eff.w, seqs, adapter);
    for (const [dtype, provider] of [["f32", "webgpu"], ["q4", "webgpu"], ["f32", "wasm"]] as const) {
      const policy = await OrtPolicy.create(m.config, m.weights, {
        dtype,
        provider,
        attention: "gqa",
        checkGqa: false,
        loraTargets: ["q_proj", "v_proj", "up_proj"],
        maxPositions: 16,
      });
      try {
        assertEquals([policy.attention, policy.provider], ["gqa", provider]);
        policy.setAdapter(adapter);
        const e = assertClose((await policy.logprobs(seqs)).flat(), (dtype === "q4" ? wantQ4 : want).flat(), {
          atol: 2e-3,
          rtol: 0,
          name: `${arch} ${dtype} ${provider}`,
        });
        console.log(`${arch} gqa ${dtype} on ${provider}: max |logprob err| ${e.maxAbs.toExponential(2)}`);
      } finally {
        await policy.release();
      }
    }
  }
});

Deno.test({
  name:
    "gqa: greedy sampleBatch gives the explicit graph's tokens (ragged prompts, repeated cache, rows leaving at EOS)",
  ignore: !gqaRight,
}, async () => {
  const m = tiny("qwen2", 47);
  const V = m.config.vocabSize;
  const prompts = randomSeqs(new Rng(9), V, [5, 17, 2, 9]);
  const params = { ...DEFAULT_SAMPLING, temperature: 0, maxNewTokens: 10, eosTokenIds: [] as number[] };
  const decode = (ids: readonly number[]) => ids.join(" ");
  const gqa = await OrtPolicy.create(m.config, m.weights, { maxPositions: 32, attention: "gqa", checkGqa: false });
  const explicit = await OrtPolicy.create(m.config, m.weights, { maxPositions: 32, attention: "explicit" });
  try {
    const first = await sampleBatch(explicit, prompts, 2, params, decode);
    // An EOS that some rows reach early, so finished rows leave the batch mid-way.
    const eos = first[0].tokens[3];
    const p = { ...params, eosTokenIds: [eos] };
    const want = await sampleBatch(explicit, prompts, 2, p, decode);
    const got = await sampleBatch(gqa, prompts, 2, p, decode);
    assert(
      want.some((s) => s.finishReason === "eos") && want.some((s) => s.finishReason === "length"),
      "no row ended early",
    );
    assertEquals(got.map((s) => [s.tokens, s.finishReason]), want.map((s) => [s.tokens, s.finishReason]));
    for (const [i, s] of got.entries()) {
      assertClose(s.logprobs, want[i].logprobs, { atol: 1e-4, rtol: 0, name: `sample ${i} logprobs` });
    }
  } finally {
    await gqa.release();
    await explicit.release();
  }
});

Deno.test({
  name:
    "gqa: the policy's default; a multi-token step after a past works for one row and is a clear error for several (ORT's GQA)",
  ignore: !gqaRight,
}, async () => {
  const m = tiny("qwen2", 53);
  const cfg = m.config, V = cfg.vocabSize;
  const policy = await OrtPolicy.create(cfg, m.weights, { maxPositions: 16, checkGqa: false });
  try {
    assertEquals(policy.attention, "gqa");
    const [a] = randomSeqs(new Rng(1), V, [7]);
    const ref = referenceLogits(cfg, m.weights, a);
    const pre = await policy.step({
      ids: [a.slice(0, 4)],
      mask: [[1, 1, 1, 1]],
      positions: [[0, 1, 2, 3]],
      past: null,
      keep: 1,
    });
    const s = await policy.step({
      ids: [a.slice(4, 7)],
      mask: [new Array(7).fill(1)],
      positions: [[4, 5, 6]],
      past: pre.present,
      keep: 3,
    });
    for (let j = 0; j < 3; j++) {
      assertClose(s.logits.subarray(j * V, (j + 1) * V), ref[4 + j], {
        atol: 2e-4,
        rtol: 1e-4,
        name: `chunk token ${j}`,
      });
    }
    const pre2 = await policy.step({
      ids: [a.slice(0, 2), a.slice(2, 4)],
      mask: [[1, 1], [1, 1]],
      positions: [[0, 1], [0, 1]],
      past: null,
      keep: 1,
    });
    let err = "";
    try {
      await policy.step({
        ids: [a.slice(4, 6), a.slice(4, 6)],
        mask: [[1, 1, 1, 1], [1, 1, 1, 1]],
        positions: [[2, 3], [2, 3]],
        past: pre2.present,
        keep: 1,
      });
    } catch (e) {
      err = String(e);
    }
    assert(/one token per row/.test(err), `expected the policy's error, got: ${err}`);
    for (const c of [pre, s, pre2]) policy.releaseCache(c.present);
  } finally {
    await policy.release();
  }
});

Deno.test({
  name:
    "gqa check: where ORT's GQA is wrong on the device, a default policy builds explicit attention, says why, and matches the float64 reference",
  ignore: gqaRight,
}, async () => {
  const m = tiny("llama", 61);
  const notes: string[] = [];
  const policy = await OrtPolicy.create(m.config, m.weights, { maxPositions: 64, onNote: (n) => notes.push(n) });
  try {
    assertEquals(policy.attention, "explicit");
    assert(
      notes.some((n) => n.includes("GroupQueryAttention differs from explicit attention")),
      `the note: ${notes.join(" | ")}`,
    );
    const seqs = randomSeqs(new Rng(3), m.config.vocabSize, [40, 12]);
    assertClose((await policy.logprobs(seqs)).flat(), referenceLogprobs(m.config, m.weights, seqs).flat(), {
      atol: 2e-3,
      rtol: 0,
      name: "explicit fallback vs reference",
    });
  } finally {
    await policy.release();
  }
});

Deno.test("policy with loraScale: alpha / r fixed in the graph gives the reference's log-probabilities; an adapter of another alpha / r is rejected", async () => {
  const m = tiny("qwen2", 59);
  const seqs = randomSeqs(new Rng(8), m.config.vocabSize, [8, 5]);
  const targets = [...LORA_TARGETS];
  const policy = await OrtPolicy.create(m.config, m.weights, { loraTargets: targets, maxPositions: 16, loraScale: 3 });
  try {
    assertEquals(policy.loraScale, 3);
    const adapter = randomAdapter(m.config, { r: 3, alpha: 9, targets, seed: 2, bScale: 0.2 });
    policy.setAdapter(adapter, "a");
    const want = referenceLogprobs(m.config, m.weights, seqs, adapter);
    assertClose((await policy.logprobs(seqs)).flat(), want.flat(), { atol: 2e-3, rtol: 0, name: "loraScale logprobs" });
    let err = "";
    try {
      policy.setAdapter(randomAdapter(m.config, { r: 4, alpha: 8, targets, seed: 2 }), "b");
    } catch (e) {
      err = String(e);
    }
    assert(/fixes it at 3/.test(err), `expected a scale error, got: ${err}`);
    assertEquals(policy.adapterName, "a");
    policy.setAdapter(null);
    assertClose((await policy.logprobs(seqs)).flat(), referenceLogprobs(m.config, m.weights, seqs).flat(), {
      atol: 2e-3,
      rtol: 0,
      name: "no adapter",
    });
  } finally {
    await policy.release();
  }
});
