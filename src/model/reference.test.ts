import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import type { ModelConfig } from "./config.ts";
import { baseKey, LORA_TARGETS, loraKey, loraScale, randomAdapter, zeroAdapter } from "./lora.ts";
import { logSoftmax, referenceLogits, referenceLogprobs } from "./reference.ts";
import type { Tensor, Weights } from "./tensor.ts";
import { makeTinyModel } from "./tiny.ts";

const ARCHS = ["qwen2", "llama", "qwen3"] as const;

function randomIds(seed: number, n: number, vocab: number): number[] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => rng.int(vocab));
}

function flat(xs: Float64Array[]): number[] {
  return xs.flatMap((x) => Array.from(x));
}

Deno.test("reference: log-probabilities normalise (logsumexp over the vocabulary is 0) and vary", () => {
  for (const arch of ARCHS) {
    const m = makeTinyModel(arch, { seed: 1 });
    const ids = randomIds(2, 7, m.config.vocabSize);
    const logits = referenceLogits(m.config, m.weights, ids);
    assertEquals(logits.length, 7);
    for (const l of logits) {
      const lp = logSoftmax(l);
      let z = 0;
      for (const v of lp) z += Math.exp(v);
      assertClose([Math.log(z)], [0], { atol: 1e-12, name: `${arch} logsumexp` });
    }
    let spread = 0;
    for (const l of logits) spread = Math.max(spread, Math.max(...l) - Math.min(...l));
    assert(spread > 1, `${arch}: logits nearly constant (spread ${spread}); the fixture would test nothing`);
    const lp = referenceLogprobs(m.config, m.weights, [ids, ids.slice(0, 3)]);
    assertEquals(lp.map((r) => r.length), [6, 2]);
    assertClose(lp[0], ids.slice(1).map((id, t) => logSoftmax(logits[t])[id]), { atol: 0, rtol: 0 });
  }
});

Deno.test("reference: causal — changing a later token leaves earlier log-probabilities unchanged", () => {
  for (const arch of ARCHS) {
    const m = makeTinyModel(arch, { seed: 3 });
    const a = randomIds(4, 8, m.config.vocabSize);
    const b = [...a];
    b[6] = (b[6] + 1) % m.config.vocabSize;
    const [la, lb] = referenceLogprobs(m.config, m.weights, [a, b]);
    assertEquals(la.slice(0, 5), lb.slice(0, 5), `${arch}: positions before the change`);
    assert(la[5] !== lb[5] && la[6] !== lb[6], `${arch}: the changed token must matter`);
  }
});

Deno.test("reference: a LoRA adapter with B = 0 equals no adapter; a non-zero one equals merged weights W + (alpha/r) B A", () => {
  for (const arch of ARCHS) {
    const m = makeTinyModel(arch, { seed: 5 });
    const ids = randomIds(6, 6, m.config.vocabSize);
    const base = referenceLogits(m.config, m.weights, ids);
    const zero = zeroAdapter(m.config, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 7 });
    assertEquals(flat(referenceLogits(m.config, m.weights, ids, zero)), flat(base), `${arch} B=0`);
    const ad = randomAdapter(m.config, {
      r: 3,
      alpha: 6,
      targets: ["q_proj", "v_proj", "o_proj", "up_proj", "down_proj"],
      seed: 8,
      bScale: 0.3,
    });
    const merged: Weights = new Map(m.weights);
    for (let l = 0; l < m.config.numLayers; l++) {
      for (const t of ad.targets) {
        const W = m.weights.get(baseKey(l, t))!;
        const A = ad.tensors.get(loraKey(l, t, "A"))!;
        const B = ad.tensors.get(loraKey(l, t, "B"))!;
        const [out, inp] = W.shape;
        const data = new Float64Array(W.data);
        for (let o = 0; o < out; o++) {
          for (let i = 0; i < inp; i++) {
            let s = 0;
            for (let k = 0; k < ad.r; k++) s += B.data[o * ad.r + k] * A.data[k * inp + i];
            data[o * inp + i] += loraScale(ad) * s;
          }
        }
        // Float32 storage of the merged weight limits agreement to ~1e-6 relative.
        merged.set(baseKey(l, t), { shape: W.shape, data: Float32Array.from(data) });
      }
    }
    const withAdapter = flat(referenceLogits(m.config, m.weights, ids, ad));
    const want = flat(referenceLogits(m.config, merged, ids));
    assertClose(withAdapter, want, { atol: 1e-5, rtol: 1e-5, name: `${arch} lora vs merged` });
    const baseFlat = flat(base);
    const diff = Math.max(...withAdapter.map((v, i) => Math.abs(v - baseFlat[i])));
    assert(diff > 1e-2, `${arch}: adapter has no visible effect (${diff})`);
  }
});

Deno.test("reference: GQA equals multi-head attention with each kv head repeated over its query group", () => {
  for (const arch of ARCHS) {
    const g = makeTinyModel(arch, { seed: 9, heads: 4, kvHeads: 2, hidden: 32, headDim: 8 });
    const cfg: ModelConfig = { ...g.config, numKvHeads: 4 };
    const D = cfg.headDim;
    const mha: Weights = new Map(g.weights);
    for (let l = 0; l < cfg.numLayers; l++) {
      for (const proj of ["k_proj", "v_proj"]) {
        for (const suffix of ["weight", "bias"]) {
          const name = `model.layers.${l}.self_attn.${proj}.${suffix}`;
          const t = g.weights.get(name);
          if (!t) continue;
          const cols = t.shape.length === 2 ? t.shape[1] : 1;
          const data = new Float32Array(4 * D * cols);
          for (let h = 0; h < 4; h++) {
            data.set(t.data.subarray(Math.floor(h / 2) * D * cols, (Math.floor(h / 2) + 1) * D * cols), h * D * cols);
          }
          mha.set(name, { shape: t.shape.length === 2 ? [4 * D, cols] : [4 * D], data });
        }
      }
    }
    const ids = randomIds(10, 6, cfg.vocabSize);
    assertClose(flat(referenceLogits(cfg, mha, ids)), flat(referenceLogits(g.config, g.weights, ids)), {
      atol: 1e-12,
      rtol: 1e-12,
      name: `${arch} gqa`,
    });
  }
});

Deno.test("reference: tied embeddings equal an untied model whose lm_head copies the embedding", () => {
  const m = makeTinyModel("qwen2", { seed: 11 });
  assert(m.config.tieWordEmbeddings);
  const untied: Weights = new Map(m.weights);
  untied.set("lm_head.weight", m.weights.get("model.embed_tokens.weight")!);
  const ids = randomIds(12, 5, m.config.vocabSize);
  assertEquals(
    flat(referenceLogits({ ...m.config, tieWordEmbeddings: false }, untied, ids)),
    flat(referenceLogits(m.config, m.weights, ids)),
  );
});

Deno.test("reference: Qwen3 q_norm/k_norm make the output invariant to scaling q_proj and k_proj", () => {
  const m = makeTinyModel("qwen3", { seed: 13 });
  assert(m.config.headDim * m.config.numHeads !== m.config.hiddenSize, "fixture has head_dim apart from hidden/heads");
  const scaled: Weights = new Map(m.weights);
  for (let l = 0; l < m.config.numLayers; l++) {
    for (const p of ["q_proj", "k_proj"]) {
      const name = `model.layers.${l}.self_attn.${p}.weight`;
      const t = m.weights.get(name)!;
      scaled.set(name, { shape: t.shape, data: t.data.map((v) => v * 4) });
    }
  }
  const ids = randomIds(14, 6, m.config.vocabSize);
  // Only eps (1e-6) breaks the invariance.
  assertClose(flat(referenceLogits(m.config, scaled, ids)), flat(referenceLogits(m.config, m.weights, ids)), {
    atol: 1e-5,
    rtol: 1e-5,
    name: "qk-norm invariance",
  });
});

Deno.test("reference: a 1-layer, 1-head, 2-dimensional Llama computed by hand", () => {
  const eps = 1e-6;
  const cfg: ModelConfig = {
    arch: "llama",
    vocabSize: 3,
    hiddenSize: 2,
    intermediateSize: 1,
    numLayers: 1,
    numHeads: 1,
    numKvHeads: 1,
    headDim: 2,
    rmsNormEps: eps,
    ropeTheta: 10000,
    tieWordEmbeddings: false,
    attentionBias: false,
    qkNorm: false,
    maxPositionEmbeddings: 16,
    bosTokenId: null,
    eosTokenIds: [],
  };
  const t = (shape: number[], v: number[]): Tensor => ({ shape, data: Float32Array.from(v) });
  const E = [[1, 0], [0, 2], [3, -4]];
  const Q = [[0.5, 1], [-1, 0.25]];
  const K = [[1, -0.5], [0.75, 1]];
  const V = [[2, 0], [1, -1]];
  const O = [[1, 0.5], [0, 1]];
  const LM = [[1, 0], [0, 1], [1, 1]];
  const w: Weights = new Map([
    ["model.embed_tokens.weight", t([3, 2], E.flat())],
    ["model.layers.0.input_layernorm.weight", t([2], [1, 0.5])],
    ["model.layers.0.self_attn.q_proj.weight", t([2, 2], Q.flat())],
    ["model.layers.0.self_attn.k_proj.weight", t([2, 2], K.flat())],
    ["model.layers.0.self_attn.v_proj.weight", t([2, 2], V.flat())],
    ["model.layers.0.self_attn.o_proj.weight", t([2, 2], O.flat())],
    ["model.layers.0.post_attention_layernorm.weight", t([2], [2, 1])],
    ["model.layers.0.mlp.gate_proj.weight", t([1, 2], [1, -1])],
    ["model.layers.0.mlp.up_proj.weight", t([1, 2], [0.5, 0.5])],
    ["model.layers.0.mlp.down_proj.weight", t([2, 1], [1, -2])],
    ["model.norm.weight", t([2], [1, 0.5])],
    ["lm_head.weight", t([3, 2], LM.flat())],
  ]);
  const ids = [1, 2];
  // By hand: 2-vectors, 2x2 matrices, rotation by p radians (head_dim 2: inv_freq = 1).
  const mv = (M: number[][], x: number[]) => M.map((r) => r[0] * x[0] + r[1] * x[1]);
  const norm = (x: number[], g: number[]) => {
    const r = 1 / Math.sqrt((x[0] ** 2 + x[1] ** 2) / 2 + eps);
    return [x[0] * r * g[0], x[1] * r * g[1]];
  };
  const rot = (
    x: number[],
    p: number,
  ) => [x[0] * Math.cos(p) - x[1] * Math.sin(p), x[1] * Math.cos(p) + x[0] * Math.sin(p)];
  const x = ids.map((id) => E[id]);
  const h = x.map((xi) => norm(xi, [1, 0.5]));
  const q = h.map((hi, p) => rot(mv(Q, hi), p));
  const k = h.map((hi, p) => rot(mv(K, hi), p));
  const v = h.map((hi) => mv(V, hi));
  const want: number[] = [];
  for (let tt = 0; tt < 2; tt++) {
    const s = k.slice(0, tt + 1).map((kk) => (q[tt][0] * kk[0] + q[tt][1] * kk[1]) / Math.sqrt(2));
    const e = s.map((z) => Math.exp(z));
    const Z = e.reduce((a, b) => a + b, 0);
    const att = [0, 1].map((i) => e.reduce((a, ei, j) => a + (ei / Z) * v[j][i], 0));
    const x1 = mv(O, att).map((o, i) => x[tt][i] + o);
    const h2 = norm(x1, [2, 1]);
    const gt = h2[0] - h2[1];
    const a = (gt / (1 + Math.exp(-gt))) * (0.5 * h2[0] + 0.5 * h2[1]);
    const x2 = [x1[0] + a, x1[1] - 2 * a];
    want.push(...mv(LM, norm(x2, [1, 0.5])));
  }
  assertClose(flat(referenceLogits(cfg, w, ids)), want, { atol: 1e-12, rtol: 1e-12, name: "hand-computed logits" });
});
