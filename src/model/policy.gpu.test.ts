// The ONNX policy (onnxruntime-web, WebGPU EP on lavapipe) against the float64 reference on tiny
// random models of every architecture, with and without LoRA, at f32, f16 and q4.
import { assert, assertClose, assertEquals, assertRejects } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { requestGpu, storageBuffer, writeBuffer } from "../gpu/device.ts";
import type { Arch } from "./config.ts";
import { baseKey, LORA_TARGETS, loraKey, randomAdapter } from "./lora.ts";
import { OrtPolicy } from "./policy.ts";
import { q4EffectiveWeights } from "./quant.ts";
import { referenceLogprobs } from "./reference.ts";
import type { Weights } from "./tensor.ts";
import { makeTinyModel } from "./tiny.ts";

function randomSeqs(rng: Rng, V: number, lengths: number[]): number[][] {
  return lengths.map((n) => Array.from({ length: n }, () => rng.int(V)));
}

function maxAbsDiff(a: number[][], b: number[][]): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) for (let t = 0; t < a[i].length; t++) m = Math.max(m, Math.abs(a[i][t] - b[i][t]));
  return m;
}

function meanAbsDiff(a: number[][], b: number[][]): number {
  const d = a.flat().map((x, i) => Math.abs(x - b.flat()[i]));
  return d.reduce((s, x) => s + x, 0) / d.length;
}

const ARCHS: Arch[] = ["qwen2", "llama", "qwen3"];

for (const arch of ARCHS) {
  Deno.test(`policy f32 ${arch}: batched logprobs match the float64 reference, without and with LoRA`, async () => {
    const m = makeTinyModel(arch, { seed: 7 });
    const rng = new Rng(3);
    const seqs = randomSeqs(rng, m.config.vocabSize, [9, 3, 14]);
    const targets = arch === "llama"
      ? [...LORA_TARGETS]
      : arch === "qwen2"
      ? ["q_proj", "v_proj"] as const
      : ["k_proj", "o_proj", "down_proj"] as const;
    const policy = await OrtPolicy.create(m.config, m.weights, {
      dtype: "f32",
      loraTargets: targets,
      maxPositions: 32,
    });
    try {
      assertEquals(policy.provider, "webgpu");
      const got = await policy.logprobs(seqs);
      const want = referenceLogprobs(m.config, m.weights, seqs);
      const e0 = assertClose(got.flat(), want.flat(), { atol: 2e-3, rtol: 0, name: `${arch} base logprobs` });
      const adapter = randomAdapter(m.config, { r: 4, alpha: 8, targets: [...targets], seed: 11, bScale: 0.2 });
      policy.setAdapter(adapter);
      const gotA = await policy.logprobs(seqs);
      const wantA = referenceLogprobs(m.config, m.weights, seqs, adapter);
      const e1 = assertClose(gotA.flat(), wantA.flat(), { atol: 2e-3, rtol: 0, name: `${arch} LoRA logprobs` });
      // The adapter must matter, or the comparison above proves nothing about the LoRA inputs.
      assert(maxAbsDiff(wantA, want) > 20 * Math.max(e1.maxAbs, 1e-4), `${arch}: adapter barely changes the reference`);
      policy.setAdapter(null);
      assertClose((await policy.logprobs(seqs)).flat(), want.flat(), {
        atol: 2e-3,
        rtol: 0,
        name: `${arch} adapter removed`,
      });
      console.log(`${arch} f32: max |err| base ${e0.maxAbs.toExponential(2)}, LoRA ${e1.maxAbs.toExponential(2)}`);
    } finally {
      await policy.release();
    }
  });
}

Deno.test("policy: LoRA inputs are uploaded to the GPU once per adapter, not on every run (regression: ~110 uploads and queue submits per decoding step)", async () => {
  const m = makeTinyModel("qwen2", { seed: 7 });
  const seqs = randomSeqs(new Rng(5), m.config.vocabSize, [6, 4]);
  const policy = await OrtPolicy.create(m.config, m.weights, {
    dtype: "f32",
    loraTargets: LORA_TARGETS,
    maxPositions: 16,
  });
  const adapterInputs = 1 + m.config.numLayers * LORA_TARGETS.length * 2;
  const proto = GPUDevice.prototype;
  const create = proto.createBuffer;
  let made = 0;
  proto.createBuffer = function (this: GPUDevice, d: GPUBufferDescriptor) {
    made++;
    return create.call(this, d);
  };
  const buffersOfRun = async (fn: () => Promise<unknown>) => {
    made = 0;
    await fn();
    return made;
  };
  try {
    const a1 = randomAdapter(m.config, { r: 4, alpha: 8, targets: [...LORA_TARGETS], seed: 11, bScale: 0.2 });
    policy.setAdapter(a1);
    const first = await buffersOfRun(() => policy.logprobs(seqs));
    const second = await buffersOfRun(() => policy.logprobs(seqs));
    // Before the fix every run uploaded every adapter input (a buffer each); now only the int64 inputs.
    assert(
      first >= adapterInputs,
      `first run made ${first} buffers, expected at least the ${adapterInputs} adapter inputs`,
    );
    assert(
      second < adapterInputs,
      `second run made ${second} buffers: the ${adapterInputs} adapter inputs were uploaded again`,
    );
    // A new adapter is uploaded at the next run and is what that run computes with.
    const a2 = randomAdapter(m.config, { r: 4, alpha: 8, targets: [...LORA_TARGETS], seed: 12, bScale: 0.2 });
    policy.setAdapter(a2);
    let got: number[][] = [];
    const third = await buffersOfRun(async () => (got = await policy.logprobs(seqs)));
    assert(third >= adapterInputs, `run after setAdapter made ${third} buffers: the new adapter was not uploaded`);
    assertClose(got.flat(), referenceLogprobs(m.config, m.weights, seqs, a2).flat(), {
      atol: 2e-3,
      rtol: 0,
      name: "second adapter",
    });
    console.log(
      `buffers made per run: first ${first}, second ${second}, after setAdapter ${third} (${adapterInputs} adapter inputs)`,
    );
  } finally {
    proto.createBuffer = create;
    await policy.release();
  }
});

Deno.test("policy: KV-cache decoding with left padding equals the full forward", async () => {
  const m = makeTinyModel("qwen3", { seed: 5 });
  const cfg = m.config, V = cfg.vocabSize;
  const policy = await OrtPolicy.create(cfg, m.weights, { maxPositions: 32 });
  try {
    const rng = new Rng(9);
    const [a, b] = randomSeqs(rng, V, [8, 5]);
    // Prefill 6 and 3 tokens left-padded to 6, then two single-token steps.
    const pa = a.slice(0, 6), pb = b.slice(0, 3);
    const pre = await policy.step({
      ids: [pa, [0, 0, 0, ...pb]],
      mask: [[1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1]],
      positions: [[0, 1, 2, 3, 4, 5], [0, 0, 0, 0, 1, 2]],
      past: null,
      keep: 1,
    });
    const s1 = await policy.step({
      ids: [[a[6]], [b[3]]],
      mask: [[1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1]],
      positions: [[6], [3]],
      past: pre.present,
      keep: 1,
    });
    const s2 = await policy.step({
      ids: [[a[7]], [b[4]]],
      mask: [[1, 1, 1, 1, 1, 1, 1, 1], [0, 0, 0, 1, 1, 1, 1, 1]],
      positions: [[7], [4]],
      past: s1.present,
      keep: 1,
    });
    const full = await policy.step({
      ids: [a],
      mask: [a.map(() => 1)],
      positions: [a.map((_, i) => i)],
      past: null,
      keep: 8,
    });
    const fullB = await policy.step({
      ids: [b],
      mask: [b.map(() => 1)],
      positions: [b.map((_, i) => i)],
      past: null,
      keep: 5,
    });
    const row = (x: Float32Array, i: number) => x.subarray(i * V, (i + 1) * V);
    assertClose(row(pre.logits, 0), row(full.logits, 5), { atol: 1e-4, name: "prefill a" });
    assertClose(row(pre.logits, 1), row(fullB.logits, 2), { atol: 1e-4, name: "prefill b (left-padded)" });
    assertClose(row(s1.logits, 0), row(full.logits, 6), { atol: 1e-4, name: "step 1 a" });
    assertClose(row(s1.logits, 1), row(fullB.logits, 3), { atol: 1e-4, name: "step 1 b" });
    assertClose(row(s2.logits, 0), row(full.logits, 7), { atol: 1e-4, name: "step 2 a" });
    assertClose(row(s2.logits, 1), row(fullB.logits, 4), { atol: 1e-4, name: "step 2 b" });
    assertEquals(s2.present.tensors[0].dims, [2, cfg.numKvHeads, 8, cfg.headDim]);
    // The cache stayed in GPU buffers and was fed back without a round trip through the CPU.
    assertEquals(s1.present.tensors.map((t) => t.location), new Array(2 * cfg.numLayers).fill("gpu-buffer"));
    for (const c of [pre, s1, s2, full, fullB]) policy.releaseCache(c.present);
  } finally {
    await policy.release();
  }
});

Deno.test("policy: bad inputs are clear errors and keep what is loaded", async () => {
  const m = makeTinyModel("llama", { seed: 2 });
  const policy = await OrtPolicy.create(m.config, m.weights, { loraTargets: ["q_proj", "v_proj"], maxPositions: 16 });
  try {
    const seqs = [[1, 2, 3, 4, 5]];
    const good = randomAdapter(m.config, { r: 2, alpha: 4, targets: ["q_proj"], seed: 1, bScale: 0.3 });
    policy.setAdapter(good, "good");
    const before = await policy.logprobs(seqs);
    const wrongRank = randomAdapter(m.config, { r: 2, alpha: 4, targets: ["v_proj"], seed: 1 });
    wrongRank.tensors.set("base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight", {
      shape: [3, 2],
      data: new Float32Array(6),
    });
    await assertRejects(() => policy.setAdapter(wrongRank), /v_proj\.lora_B\.weight has shape \[3, 2\]/);
    await assertRejects(
      () => policy.setAdapter(randomAdapter(m.config, { r: 2, alpha: 4, targets: ["up_proj"], seed: 1 })),
      /targets up_proj but this policy was built with LoRA inputs for \[q_proj, v_proj\]/,
    );
    await assertRejects(() => policy.logprobs([new Array(17).fill(1)]), /17 tokens; this policy accepts at most 16/);
    await assertRejects(() => policy.logprobs([[1, m.config.vocabSize]]), /token id 280 outside/);
    assertEquals(policy.adapterName, "good");
    assertEquals(await policy.logprobs(seqs), before);
    const noWeight: Weights = new Map(m.weights);
    noWeight.delete(baseKey(1, "up_proj"));
    await assertRejects(
      () => OrtPolicy.create(m.config, noWeight),
      /missing tensor model\.layers\.1\.mlp\.up_proj\.weight/,
    );
  } finally {
    await policy.release();
  }
});

Deno.test("policy f16 and q4: errors against the reference (measured), q4 exact against its dequantised weights", async () => {
  const rng = new Rng(21);
  for (const arch of ARCHS) {
    const m = makeTinyModel(arch, { seed: 13 });
    const seqs = randomSeqs(rng, m.config.vocabSize, [12, 7]);
    const want = referenceLogprobs(m.config, m.weights, seqs);
    const adapter = randomAdapter(m.config, { r: 4, alpha: 8, targets: ["q_proj", "up_proj"], seed: 4, bScale: 0.2 });
    const wantA = referenceLogprobs(m.config, m.weights, seqs, adapter);
    for (const dtype of ["f16", "q4"] as const) {
      const policy = await OrtPolicy.create(m.config, m.weights, {
        dtype,
        loraTargets: ["q_proj", "up_proj"],
        maxPositions: 16,
      });
      try {
        const got = await policy.logprobs(seqs);
        policy.setAdapter(adapter);
        const gotA = await policy.logprobs(seqs);
        if (dtype === "q4") {
          // The quantisation is the only difference: the reference on dequantised weights agrees to f32 accuracy.
          const eff = q4EffectiveWeights(m.config, m.weights, { shaderF16: policy.shaderF16 });
          const e = assertClose(gotA.flat(), referenceLogprobs(eff.cfg, eff.w, seqs, adapter).flat(), {
            atol: 2e-3,
            rtol: 0,
            name: `${arch} q4 vs dequantised reference`,
          });
          console.log(`${arch} q4 vs reference on dequantised weights: max |err| ${e.maxAbs.toExponential(2)}`);
        }
        const err = maxAbsDiff(got, want), errA = maxAbsDiff(gotA, wantA);
        console.log(
          `${arch} ${dtype}: logprob error vs the f32 reference: max ${err.toExponential(2)}, mean ${
            meanAbsDiff(got, want).toExponential(2)
          } (LoRA: max ${errA.toExponential(2)})`,
        );
        const bound = dtype === "f16" ? 0.1 : 5;
        assert(err < bound && errA < bound, `${arch} ${dtype}: error ${err} / ${errA} beyond the loose bound ${bound}`);
      } finally {
        await policy.release();
      }
    }
  }
});

Deno.test("policy on the trainer's GPUDevice: LoRA fed from GPU buffers, updated in place without setAdapter", async () => {
  const gpu = await requestGpu();
  const m = makeTinyModel("qwen2", { seed: 17 });
  const targets = ["v_proj", "up_proj"] as const;
  const policy = await OrtPolicy.create(m.config, m.weights, {
    loraTargets: targets,
    maxPositions: 16,
    device: gpu.device,
  });
  const buffers = new Map<string, GPUBuffer>();
  try {
    assertEquals(policy.device, gpu.device);
    const seqs = randomSeqs(new Rng(6), m.config.vocabSize, [10, 6]);
    const a1 = randomAdapter(m.config, { r: 3, alpha: 9, targets: [...targets], seed: 8, bScale: 0.2 });
    for (const [k, t] of a1.tensors) buffers.set(k, storageBuffer(gpu.device, k, t.data));
    policy.setAdapterBuffers({ r: a1.r, alpha: a1.alpha, targets: a1.targets, buffers }, "gpu");
    assertClose((await policy.logprobs(seqs)).flat(), referenceLogprobs(m.config, m.weights, seqs, a1).flat(), {
      atol: 2e-3,
      rtol: 0,
      name: "GPU-fed adapter",
    });
    // The trainer writes new values into the same buffers: the next run sees them.
    const a2 = randomAdapter(m.config, { r: 3, alpha: 9, targets: [...targets], seed: 9, bScale: 0.2 });
    for (const [k, t] of a2.tensors) writeBuffer(gpu.device, buffers.get(k) as GPUBuffer, t.data);
    const want2 = referenceLogprobs(m.config, m.weights, seqs, a2);
    assertClose((await policy.logprobs(seqs)).flat(), want2.flat(), {
      atol: 2e-3,
      rtol: 0,
      name: "after in-place update",
    });
    assert(
      maxAbsDiff(want2, referenceLogprobs(m.config, m.weights, seqs, a1)) > 0.02,
      "the two adapters are too alike to tell apart",
    );
    const small = new Map(buffers);
    small.set(loraKey(0, "up_proj", "B"), storageBuffer(gpu.device, "small", new Float32Array(4)));
    await assertRejects(
      () => policy.setAdapterBuffers({ r: 3, alpha: 9, targets: [...targets], buffers: small }),
      /up_proj\.lora_B\.weight has 16 bytes/,
    );
    assertEquals(policy.adapterName, "gpu");
  } finally {
    await policy.release();
    for (const b of buffers.values()) b.destroy();
  }
});

Deno.test("policy: weights as external data (every initializer) give the same log-probabilities", async () => {
  const m = makeTinyModel("llama", { seed: 23 });
  const seqs = randomSeqs(new Rng(2), m.config.vocabSize, [7, 5]);
  const policy = await OrtPolicy.create(m.config, m.weights, { maxPositions: 8, externalMinBytes: 0, dtype: "q4" });
  try {
    const inline = await OrtPolicy.create(m.config, m.weights, {
      maxPositions: 8,
      externalMinBytes: Infinity,
      dtype: "q4",
    });
    const want = await inline.logprobs(seqs);
    await inline.release();
    assertEquals([policy.provider, await policy.logprobs(seqs)], ["webgpu", want]);
  } finally {
    await policy.release();
  }
});

Deno.test("policy on the WASM provider (the fallback) matches the reference too", async () => {
  const m = makeTinyModel("qwen3", { seed: 29 });
  const seqs = randomSeqs(new Rng(12), m.config.vocabSize, [6, 9]);
  const adapter = randomAdapter(m.config, { r: 2, alpha: 4, targets: ["o_proj"], seed: 3, bScale: 0.2 });
  const policy = await OrtPolicy.create(m.config, m.weights, {
    provider: "wasm",
    loraTargets: ["o_proj"],
    maxPositions: 12,
  });
  try {
    assertEquals(policy.provider, "wasm");
    policy.setAdapter(adapter);
    assertClose((await policy.logprobs(seqs)).flat(), referenceLogprobs(m.config, m.weights, seqs, adapter).flat(), {
      atol: 2e-3,
      rtol: 0,
      name: "wasm logprobs",
    });
  } finally {
    await policy.release();
  }
});
