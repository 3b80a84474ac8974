// Benchmark (not a test): the ORT policy on onnxruntime-web's WebGPU EP — graph build and session
// time, batched prefill, and decoding with the KV cache in GPU buffers, for a random model shape.
// Usage: deno run -A bench/decode.bench.ts [preset=tiny|small|qwen2.5-0.5b] [dtype=f32|f16|q4] [prompts=4] [G=4] [promptLen=64] [newTokens=32] [lora=0|1]
import { Rng } from "../src/core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { WEIGHT_DTYPES } from "../src/model/onnx/decoder.ts";
import { OrtPolicy } from "../src/model/policy.ts";
import { DEFAULT_SAMPLING, sampleBatch } from "../src/model/sampler.ts";
import { makeTinyModel } from "../src/model/tiny.ts";

const PRESETS = {
  tiny: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, vocabSize: 280 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
  // Qwen2.5-0.5B's shape (494M parameters, tied embeddings), random weights.
  "qwen2.5-0.5b": { hidden: 896, layers: 24, heads: 14, kvHeads: 2, headDim: 64, intermediate: 4864, vocabSize: 151936 },
} as const;
type Preset = keyof typeof PRESETS;

const [presetArg = "tiny", dtypeArg = "f32", pArg = "4", gArg = "4", lenArg = "64", newArg = "32", loraArg = "0"] = Deno.args;
if (!(presetArg in PRESETS)) throw new Error(`unknown preset ${presetArg}; one of ${Object.keys(PRESETS).join(", ")}`);
const dtype = WEIGHT_DTYPES.find((d) => d === dtypeArg);
if (!dtype) throw new Error(`dtype must be one of ${WEIGHT_DTYPES.join(", ")}`);
const P = Number(pArg), G = Number(gArg), promptLen = Number(lenArg), newTokens = Number(newArg), lora = loraArg === "1";

let t0 = performance.now();
const m = makeTinyModel("qwen2", { seed: 1, ...PRESETS[presetArg as Preset], tieWordEmbeddings: true });
const params = [...m.weights.values()].reduce((s, t) => s + t.data.length, 0);
console.log(`model ${presetArg}: ${(params / 1e6).toFixed(1)}M parameters, random weights (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
t0 = performance.now();
const policy = await OrtPolicy.create(m.config, m.weights, { dtype, loraTargets: lora ? LORA_TARGETS : [], maxPositions: promptLen + newTokens });
const tSession = (performance.now() - t0) / 1000;
if (lora) policy.setAdapter(randomAdapter(m.config, { r: 16, alpha: 32, targets: LORA_TARGETS, seed: 2 }));
console.log(`graph + session (${dtype}${lora ? ", LoRA r=16 on all targets" : ""}) on ${policy.provider}: ${tSession.toFixed(1)} s`);

const rng = new Rng(3);
const prompts = Array.from({ length: P }, () => Array.from({ length: promptLen }, () => rng.int(m.config.vocabSize)));
// Warm-up: shader compilation for every shape the measured run meets.
await sampleBatch(policy, prompts, G, { ...DEFAULT_SAMPLING, temperature: 0, maxNewTokens: 2 }, () => "");
t0 = performance.now();
const lp = await policy.logprobs(prompts);
const tPrefill = (performance.now() - t0) / 1000;
console.log(`logprobs (teacher-forced) ${P} x ${promptLen}: ${(P * promptLen / tPrefill).toFixed(0)} tok/s (${lp.length} rows)`);
let firstStep = 0;
t0 = performance.now();
const samples = await sampleBatch(policy, prompts, G, { ...DEFAULT_SAMPLING, temperature: 1, maxNewTokens: newTokens, seed: 1 }, () => "", (p) => {
  if (p.step === 1) firstStep = performance.now();
});
const tEnd = performance.now();
const tokens = samples.reduce((s, x) => s + x.tokens.length, 0);
const decodeS = (tEnd - firstStep) / 1000;
console.log(`sample ${P} prompts x G=${G} (batch ${P * G}), prompt ${promptLen}, ${newTokens} new: prefill ${((firstStep - t0) / 1000).toFixed(2)} s, ` +
  `decode ${(tokens - P * G) / decodeS > 0 ? ((tokens - P * G) / decodeS).toFixed(0) : "-"} tok/s (${(decodeS * 1000 / Math.max(1, newTokens - 1)).toFixed(1)} ms/step), total ${tokens} tokens in ${((tEnd - t0) / 1000).toFixed(2)} s`);
await policy.release();
Deno.exit(0);
