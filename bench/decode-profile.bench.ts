// Profile (not a test): where one captured decoding step's GPU time goes, kernel by kernel. ORT's own
// profile (enableProfiling: the WebGPU EP's timestamp queries, "Api" events) of the graph captured
// decoding replays (decoder.ts staticDecode: the same build options as capture-host.ts, GQA, fixed
// shapes), run here without graph capture, since ORT records no profile while it replays. Past and
// present are one GPU buffer per cache tensor, as in captured decoding (GQA writes the new column in
// place), so the profile holds the same kernels. Random weights of a decode.bench.ts preset, no LoRA.
// Summarise with bench/step-profile.py (per operator, then per kernel shape of the named operators).
// Usage: deno run -A bench/decode-profile.bench.ts [preset=qwen2.5-0.5b] [dtype=q4] [batch=8] [past=256] [maxT=384] [runs=4]
//          [head=gemm|matmul] [products=auto|plain|fused|split|rows] > prof.out; python3 bench/step-profile.py prof.out MatMulNBits,Gemm,MatMul
import { args } from "./engine.ts";
import { requestGpu } from "../src/gpu/device.ts";
import { buildDecoder, DECODE_PRODUCTS, PreparedWeights, WEIGHT_DTYPES } from "../src/model/onnx/decoder.ts";
import { configureOrt, ort } from "../src/model/onnx/ort.ts";
import { makeTinyModel } from "../src/model/tiny.ts";
import { DECODE_PRESETS } from "./decode-presets.ts";

const PRESETS = DECODE_PRESETS;
const named = Object.fromEntries(args.map((a) => a.split("=") as [string, string]));
const preset = (named.preset ?? "qwen2.5-0.5b") as keyof typeof PRESETS;
if (!(preset in PRESETS)) throw new Error(`preset must be one of ${Object.keys(PRESETS).join(", ")}`);
const dtype = WEIGHT_DTYPES.find((d) => d === (named.dtype ?? "q4"));
if (!dtype) throw new Error(`dtype must be one of ${WEIGHT_DTYPES.join(", ")}`);
const B = Number(named.batch ?? 8), P = Number(named.past ?? 256), maxT = Number(named.maxT ?? 384), runs = Number(named.runs ?? 4);
if (!(P >= 0 && P < maxT)) throw new Error(`past must be 0..maxT-1 (${maxT}), got ${P}`);
const head = named.head ?? "gemm";
if (head !== "gemm" && head !== "matmul") throw new Error(`head must be gemm or matmul, got ${head}`);
const products = DECODE_PRODUCTS.find((p) => p === (named.products ?? "auto"));
if (!products) throw new Error(`products must be one of ${DECODE_PRODUCTS.join(", ")}`);

configureOrt();
const gpu = await requestGpu();
const device = gpu.device;
const shaderF16 = device.features.has("shader-f16");
const m = makeTinyModel("qwen2", { seed: 1, ...PRESETS[preset], tieWordEmbeddings: true });
const { numKvHeads: K, headDim: D, numLayers: L, vocabSize: V } = m.config;
// capture-host.ts get(): the policy's build options (policy.ts buildOpts, no LoRA), GQA, staticDecode.
const built = buildDecoder(m.config, m.weights, {
  dtype, loraTargets: [], kvCache: true, maxPositions: maxT, attention: "gqa", shaderF16, prepared: new PreparedWeights(),
  staticDecode: { batch: B, maxT }, headMatMul: head === "matmul", decodeProducts: products,
});
console.error(`decode-profile: ${preset} ${built.precision}, batch ${B}, past ${P} of ${maxT} columns, ${built.nodeCount} nodes, head ${head}, products ${products}, ${gpu.info?.description ?? ""}`);
const ep = { name: "webgpu", device } as unknown as ort.InferenceSession.ExecutionProviderConfig;
const s = await ort.InferenceSession.create(built.bytes, { externalData: built.external, executionProviders: [ep], enableProfiling: true, preferredOutputLocation: "gpu-buffer" });

const gpuTensor = (dims: number[], fill?: (i: number) => number) => {
  const n = dims.reduce((a, b) => a * b, 1);
  const buf = device.createBuffer({ size: n * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  if (fill) device.queue.writeBuffer(buf, 0, Float32Array.from({ length: n }, (_, i) => fill(i)));
  return ort.Tensor.fromGpuBuffer(buf, { dataType: "float32", dims });
};
const feeds: Record<string, ort.Tensor> = {
  input_ids: new ort.Tensor("int64", BigInt64Array.from({ length: B }, (_, i) => BigInt(5 + i)), [B, 1]),
  position_ids: new ort.Tensor("int64", new BigInt64Array(B).fill(BigInt(P)), [B, 1]),
  seqlens_k: new ort.Tensor("int32", new Int32Array(B).fill(P), [B]),
  total_sequence_length: new ort.Tensor("int32", Int32Array.of(P + 1), [1]),
};
const fetches: Record<string, ort.Tensor> = { logits: gpuTensor([B, V]) };
for (let l = 0; l < L; l++) {
  for (const kind of ["key", "value"]) {
    const t = gpuTensor([B, K, maxT, D], (i) => Math.sin(i * 0.37 + l) * 0.5);
    feeds[`past_key_values.${l}.${kind}`] = t;
    fetches[`present.${l}.${kind}`] = t;
  }
}
for (const n of built.inputNames) if (!feeds[n]) throw new Error(`decode-profile: no feed for graph input ${n}`);
for (let i = 0; i < runs; i++) {
  const t = performance.now();
  await s.run(feeds, fetches);
  await device.queue.onSubmittedWorkDone();
  console.error(`run ${i}: ${(performance.now() - t).toFixed(1)} ms (profiled, uncaptured)`);
}
s.endProfiling();
await s.release();
