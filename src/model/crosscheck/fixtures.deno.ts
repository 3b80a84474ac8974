// Writes cross-check fixtures for check_transformers.py: tiny HF folders of every architecture,
// PEFT adapters, our float64 log-probabilities and token ids, and q4 MatMulNBits tensors with our
// expected products. Usage: deno run -A src/model/crosscheck/fixtures.deno.ts <out-dir>
import { Rng } from "../../core/rng.ts";
import { fromBf16, toBf16 } from "../half.ts";
import { LORA_TARGETS, randomAdapter } from "../lora.ts";
import { writePeftFolder } from "../peft.deno.ts";
import { dequantizeQ4, quantizeQ4 } from "../quant.ts";
import { referenceLogprobs } from "../reference.ts";
import type { Weights } from "../tensor.ts";
import { writeHfFolder } from "../tiny.deno.ts";
import { makeTinyModel, type TinyModel, tinyTokenizerFiles } from "../tiny.ts";
import { HfTokenizer } from "../tokenizer.ts";

const out = Deno.args[0];
if (!out) throw new Error("usage: fixtures.deno.ts <out-dir>");

const TEXTS = [
  "<|im_start|>user\nHow many singers are older than 30?<|im_end|>\n<|im_start|>assistant\nSELECT count(*) FROM singer WHERE age > 30<|im_end|>",
  "SELECT T1.name FROM a AS T1 JOIN b AS T2 ON T1.id = T2.id WHERE T2.x = 'café' ORDER BY 1 DESC;",
  "  spaces\tand\nnewlines\r\n東京 🤖",
];
const tokFiles = tinyTokenizerFiles();
const tok = new HfTokenizer(tokFiles.tokenizerJson, tokFiles.tokenizerConfig);
const tokenIds = TEXTS.map((t) => tok.encode(t));

const models: Record<string, { base: number[][]; lora: number[][] | null; ids: number[][] }> = {};
const cases: [string, TinyModel, "F32" | "BF16"][] = [
  ["qwen2", makeTinyModel("qwen2", { seed: 101 }), "F32"],
  ["llama", makeTinyModel("llama", { seed: 102 }), "F32"],
  [
    "llama-rope3",
    makeTinyModel("llama", {
      seed: 103,
      hidden: 64,
      heads: 4,
      kvHeads: 2,
      headDim: 16,
      ropeTheta: 500000,
      ropeScaling: {
        type: "llama3",
        factor: 8,
        lowFreqFactor: 1,
        highFreqFactor: 4,
        originalMaxPositionEmbeddings: 32,
      },
    }),
    "F32",
  ],
  ["qwen3", makeTinyModel("qwen3", { seed: 104 }), "F32"],
  ["qwen3-bf16", makeTinyModel("qwen3", { seed: 105 }), "BF16"],
];
for (const [name, m, dtype] of cases) {
  await writeHfFolder(`${out}/${name}`, m, tokFiles, { dtype });
  // What the folder holds: bf16-rounded weights when written as BF16.
  const held: Weights = dtype === "BF16"
    ? new Map([...m.weights].map(([k, t]) => [k, { shape: t.shape, data: fromBf16(toBf16(t.data)) }]))
    : m.weights;
  const rng = new Rng(7);
  const ids = [...tokenIds, Array.from({ length: 40 }, () => rng.int(m.config.vocabSize))];
  const ad = randomAdapter(m.config, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 9, bScale: 0.2 });
  await writePeftFolder(`${out}/${name}-lora`, ad, { baseModel: `${out}/${name}` });
  models[name] = {
    ids,
    base: referenceLogprobs(m.config, held, ids),
    lora: dtype === "F32" ? referenceLogprobs(m.config, held, ids, ad) : null,
  };
  console.error(`wrote ${name}`);
}

const q4: Record<string, unknown>[] = [];
const rng = new Rng(11);
for (const [N, K, symmetric] of [[7, 70, false], [5, 96, true], [9, 33, false]] as const) {
  const w = { shape: [N, K], data: rng.uniformArray(N * K, -0.5, 0.5) };
  const q = quantizeQ4(w, { symmetric });
  const d = dequantizeQ4(q).data;
  const M = 3;
  const a = rng.uniformArray(M * K);
  const y: number[] = [];
  for (let i = 0; i < M; i++) {
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += a[i * K + k] * d[n * K + k];
      y.push(s);
    }
  }
  q4.push({
    N,
    K,
    M,
    symmetric,
    packed: [...q.packed],
    scales: [...q.scales],
    zeroPoints: q.zeroPoints ? [...q.zeroPoints] : null,
    a: [...a],
    y,
  });
}

await Deno.writeTextFile(`${out}/expected.json`, JSON.stringify({ texts: TEXTS, tokenIds, models, q4 }));
console.error(`fixtures in ${out}`);
