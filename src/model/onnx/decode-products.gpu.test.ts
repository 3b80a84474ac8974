// The staticDecode q4 graph's products (decoder.ts decodeProducts) on onnxruntime-web's WebGPU EP: the stacked
// (fused), K-split (split, at 32 rows) and row-group (rows, at 4 rows) graphs give the plain graph's logits and cache
// columns, one decoding step over a random 20-key past, with LoRA on every target (the stacked graphs add the deltas of
// q/k/v and gate/up to the stacked product, from stacked A and block-diagonal B inputs, before its Split). The
// model is wide enough (hidden 256, MLP 512) that every projection is split at 32 rows (q4SplitK), and that every LoRA
// A product of these decoding graphs is split along K (loraSplitK: 2 and 4 slices of 128; packed by stackLoraFeeds):
// the plain graph with one slice (a Gemm of x A^T, per-target inputs) gives the same logits too. Equal within 2e-5 of
// the logits' scale: the splits sum the same products in another order.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { LORA_TARGETS, targetDims } from "../lora.ts";
import { makeTinyModel } from "../tiny.ts";
import { buildDecoder, type DecodeProducts, shortTarget } from "./decoder.ts";
import { configureOrt, ort } from "./ort.ts";
import { stackLoraFeeds } from "../captured.ts";

configureOrt();

Deno.test("decodeProducts fused, rows (4 rows) and split (32 rows): the plain staticDecode graph's logits and present cache, LoRA on every target", async () => {
  const m = makeTinyModel("qwen2", {
    seed: 6,
    hidden: 256,
    layers: 2,
    heads: 8,
    kvHeads: 2,
    headDim: 32,
    intermediate: 512,
    vocabSize: 300,
  });
  for (const [B, modes] of [[4, ["fused", "rows"]], [32, ["fused", "split"]]] as const) await compare(m, B, modes);
});

async function compare(
  m: ReturnType<typeof makeTinyModel>,
  B: number,
  modes: readonly DecodeProducts[],
): Promise<void> {
  const cfg = m.config, T = 32, P = 20, r = 4;
  const { numKvHeads: K, headDim: D, numLayers: L } = cfg;
  const rng = new Rng(8);
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor("int64", BigInt64Array.from({ length: B }, (_, b) => BigInt(3 + 17 * b)), [B, 1]),
    position_ids: new ort.Tensor("int64", BigInt64Array.from({ length: B }, () => BigInt(P)), [B, 1]),
    seqlens_k: new ort.Tensor("int32", new Int32Array(B).fill(P), [B]),
    total_sequence_length: new ort.Tensor("int32", Int32Array.of(P + 1), [1]),
  };
  for (let l = 0; l < L; l++) {
    for (const kind of ["key", "value"]) {
      feeds[`past_key_values.${l}.${kind}`] = new ort.Tensor(
        "float32",
        rng.uniformArray(B * K * T * D).map((v) => v - 0.5),
        [B, K, T, D],
      );
    }
    for (const t of LORA_TARGETS) {
      const [fout, fin] = targetDims(cfg, t);
      feeds[`lora.${l}.${shortTarget(t)}.A`] = new ort.Tensor(
        "float32",
        rng.uniformArray(r * fin).map((v) => (v - 0.5) * 0.2),
        [r, fin],
      );
      feeds[`lora.${l}.${shortTarget(t)}.B`] = new ort.Tensor(
        "float32",
        rng.uniformArray(fout * r).map((v) => (v - 0.5) * 0.2),
        [fout, r],
      );
    }
  }
  const run = async (p: DecodeProducts, loraKSlice?: number) => {
    const built = buildDecoder(cfg, m.weights, {
      dtype: "q4",
      kvCache: true,
      maxPositions: T,
      attention: "gqa",
      shaderF16: false,
      loraTargets: LORA_TARGETS,
      loraScale: 2,
      staticDecode: { batch: B, maxT: T },
      decodeProducts: p,
      loraKSlice,
    });
    const slices = (built.loraStacks ?? []).map((st) => st.slices);
    assertEquals(new Set(slices), new Set(loraKSlice ? [] : [2, 4]), `${p}: LoRA slices ${slices}`);
    const s = await ort.InferenceSession.create(built.bytes, {
      externalData: built.external,
      executionProviders: ["webgpu"],
    });
    try {
      // The stacked graphs take q/k/v's and gate/up's LoRA inputs stacked (LoraStack).
      const all = stackLoraFeeds(built.loraStacks ?? [], feeds);
      const own = Object.fromEntries(built.inputNames.map((n) => [n, all[n]]));
      for (const n of built.inputNames) assert(own[n], `no feed for ${n}`);
      const out = await s.run(own);
      const logits = out.logits.data as Float32Array;
      // The new key column of row 0, layer 1 (GQA wrote column P of the present cache).
      const k = out["present.1.key"].data as Float32Array;
      const col = Array.from({ length: D }, (_, d) => k[(0 * K + 1) * T * D + P * D + d]);
      return { logits, col };
    } finally {
      await s.release();
    }
  };
  const plain = await run("plain");
  const scale = Math.max(...plain.logits.map(Math.abs));
  assert(scale > 0.1, `logits of scale ${scale}`);
  for (const p of ["one LoRA slice", ...modes] as const) {
    const got = p === "one LoRA slice" ? await run("plain", 1 << 30) : await run(p);
    assertEquals(got.logits.length, plain.logits.length);
    let worst = 0;
    for (let i = 0; i < got.logits.length; i++) worst = Math.max(worst, Math.abs(got.logits[i] - plain.logits[i]));
    let worstK = 0;
    for (let d = 0; d < D; d++) worstK = Math.max(worstK, Math.abs(got.col[d] - plain.col[d]));
    console.log(
      `batch ${B}, ${p}: max |logit - plain| ${worst.toExponential(2)} (logits up to ${
        scale.toFixed(2)
      }), new key column ${worstK.toExponential(2)}`,
    );
    assert(worst <= 2e-5 * scale && worstK <= 2e-5, `batch ${B}, ${p}: logits differ by ${worst}, keys by ${worstK}`);
  }
}
