// Writes a random model of the shipped demo model's shape (Qwen2: hidden 384, 8 layers, 6 heads / 2 kv
// heads of 64, intermediate 1024, vocabulary 8192, tied; F16) with the demo tokenizer, for timing runs on a
// machine the real weights cannot travel to (the device tool's 64 MiB). Decoding time does not depend on
// the weights' values; run the timing benchmarks with eos=0 so rows never stop early.
// Usage: deno run -A bench/demo-shape-model.ts OUT_DIR [TOKENIZER_DIR=public/model]
import { writeHfFolder } from "../src/model/tiny.deno.ts";
import { makeTinyModel } from "../src/model/tiny.ts";

const [out, tokDir = "public/model"] = Deno.args;
if (!out) throw new Error("usage: deno run -A bench/demo-shape-model.ts OUT_DIR [TOKENIZER_DIR]");
const m = makeTinyModel("qwen2", { seed: 1, hidden: 384, layers: 8, heads: 6, kvHeads: 2, headDim: 64, intermediate: 1024, vocabSize: 8192, tieWordEmbeddings: true });
const read = async (f: string): Promise<Record<string, unknown>> => JSON.parse(await Deno.readTextFile(`${tokDir}/${f}`));
const files = await writeHfFolder(out, m, { tokenizerJson: await read("tokenizer.json"), tokenizerConfig: await read("tokenizer_config.json") }, { dtype: "F16" });
console.log(`${out}: ${files.join(", ")}`);
