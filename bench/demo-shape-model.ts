// Writes a random model of the shipped demo model's shape (Qwen2: hidden 384, 8 layers, 6 heads / 2 kv
// heads of 64, intermediate 1024, vocabulary 8192, tied; F16) with the demo tokenizer, for timing runs on a
// machine the real weights cannot travel to (the device tool's 64 MiB). Decoding time does not depend on
// the weights' values; run the timing benchmarks with eos=0 so rows never stop early.
// SHAPE qwen2.5-0.5b writes Qwen2.5-0.5B's shape instead (hidden 896, 24 layers, 14 / 2 heads of 64,
// intermediate 4864, vocabulary 151936, tied; ~1 GB in F16) with the same tokenizer (its ids are a subset
// of the vocabulary): the GRPO step at the 0.5B shape (bench/grpo-step.bench.ts).
// Usage: deno run -A bench/demo-shape-model.ts OUT_DIR [TOKENIZER_DIR=public/model] [SHAPE=demo|qwen2.5-0.5b]
import { writeHfFolder } from "../src/model/tiny.deno.ts";
import { makeTinyModel } from "../src/model/tiny.ts";

const SHAPES = {
  demo: { hidden: 384, layers: 8, heads: 6, kvHeads: 2, headDim: 64, intermediate: 1024, vocabSize: 8192 },
  "qwen2.5-0.5b": {
    hidden: 896,
    layers: 24,
    heads: 14,
    kvHeads: 2,
    headDim: 64,
    intermediate: 4864,
    vocabSize: 151936,
  },
} as const;
const [out, tokDir = "public/model", shape = "demo"] = Deno.args;
if (!out) throw new Error("usage: deno run -A bench/demo-shape-model.ts OUT_DIR [TOKENIZER_DIR] [SHAPE]");
if (!(shape in SHAPES)) throw new Error(`SHAPE: one of ${Object.keys(SHAPES).join(", ")}`);
const m = makeTinyModel("qwen2", { seed: 1, ...SHAPES[shape as keyof typeof SHAPES], tieWordEmbeddings: true });
const read = async (f: string): Promise<Record<string, unknown>> =>
  JSON.parse(await Deno.readTextFile(`${tokDir}/${f}`));
const files = await writeHfFolder(out, m, {
  tokenizerJson: await read("tokenizer.json"),
  tokenizerConfig: await read("tokenizer_config.json"),
}, { dtype: "F16" });
console.log(`${out}: ${files.join(", ")}`);
