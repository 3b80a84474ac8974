// Profile (not a test): ORT's own profile of decoding steps of the policy graph on the WebGPU EP,
// random weights of the shipped demo model's shape. With `enableProfiling` the WebGPU EP records
// every kernel's GPU time (category "Api", timestamp queries) next to each node's host time
// ("Node"); `endProfiling()` prints the JSON events to stdout. Summarise with
// bench/step-profile.py (per operator and per kernel shape, last run).
// Usage: B=4 P=256 [ATTN=explicit|gqa] deno run -A bench/step-profile.bench.ts > prof.out; python3 bench/step-profile.py prof.out [MatMul,Concat]
import "./engine.ts"; // selects the WebGPU engine (--webgpu / RLVR_WEBGPU) first
import { type AttentionKind, buildDecoder } from "../src/model/onnx/decoder.ts";
import { configureOrt, ort } from "../src/model/onnx/ort.ts";
import { makeTinyModel } from "../src/model/tiny.ts";

configureOrt();
const B = Number(Deno.env.get("B") ?? 4), P = Number(Deno.env.get("P") ?? 256), runs = Number(Deno.env.get("RUNS") ?? 4);
const m = makeTinyModel("qwen2", { seed: 1, hidden: 384, layers: 8, heads: 6, kvHeads: 2, headDim: 64, intermediate: 1024, vocabSize: 8192, tieWordEmbeddings: true });
const { numKvHeads: K, headDim: D, numLayers: L } = m.config;
const attention = (Deno.env.get("ATTN") ?? "explicit") as AttentionKind;
const built = buildDecoder(m.config, m.weights, { dtype: "f32", kvCache: true, maxPositions: P + 2, attention });
const loc: Record<string, "gpu-buffer"> = {};
for (const n of built.outputNames) if (n.startsWith("present.")) loc[n] = "gpu-buffer";
const s = await ort.InferenceSession.create(built.bytes, { externalData: built.external, executionProviders: ["webgpu"], enableProfiling: true, preferredOutputLocation: loc });
const i64 = (a: number[], d: number[]) => new ort.Tensor("int64", BigInt64Array.from(a, BigInt), d);
const T = P + 1;
const feeds: Record<string, ort.Tensor> = {
  input_ids: i64(new Array(B).fill(5), [B, 1]),
  attention_mask: i64(new Array(B * T).fill(1), [B, T]),
  position_ids: i64(new Array(B).fill(P), [B, 1]),
  num_logits_to_keep: i64([1], [1]),
  target_ids: i64(new Array(B).fill(0), [B, 1]),
};
for (let l = 0; l < L; l++) {
  for (const k of ["key", "value"]) feeds[`past_key_values.${l}.${k}`] = new ort.Tensor("float32", new Float32Array(B * K * P * D).map(() => Math.random() - 0.5), [B, K, P, D]);
}
const fetches = built.outputNames.filter((n) => n !== "target_logprobs");
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  const r = await s.run(feeds, fetches);
  console.error(`run ${i}: ${(performance.now() - t).toFixed(1)} ms`);
  for (const n of fetches) if (n.startsWith("present")) r[n].dispose();
}
s.endProfiling();
await s.release();
