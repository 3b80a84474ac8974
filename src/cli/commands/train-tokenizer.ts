// `rlvr train-tokenizer`: learns the demo model's byte-level BPE from the pretraining corpus text
// and writes tokenizer.json + tokenizer_config.json (ChatML template) as Hugging Face does.
import { int, num, parseFlags, req, SEED } from "../args.ts";
import { BpeEncoder } from "../../model/bpe/encode.ts";
import { corpusSources, tokenizerDocuments, writeTokenizerFolder } from "../../runtime/pretrain/pipeline.deno.ts";
import { trainDemoTokenizer } from "../../runtime/pretrain/tokenizer.ts";
import type { Command } from "./index.ts";

export const command: Command = {
  name: "train-tokenizer",
  summary: "learn the demo model's byte-level BPE tokenizer from the pretraining corpus",
  usage: [
    "rlvr train-tokenizer --out DIR [--vocab N] [--spider PATH] [--demo DIR] [--seed N]",
    "",
    "  --out DIR      folder receiving tokenizer.json and tokenizer_config.json",
    "  --vocab N      total tokens: 256 bytes + merges + 7 added tokens (default 8192)",
    "  --spider PATH  Spider's training folder (questions.jsonl, database/); default: demo data only",
    "  --demo DIR     the demo data (default public/demo; only its generic questions are read, never a concept split)",
    "  --seed N       corpus seed (default 20261129)",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, {
      out: { type: "string" },
      vocab: { type: "string" },
      spider: { type: "string" },
      demo: { type: "string" },
      seed: { type: "string" },
    });
    const out = req(values, "out");
    const vocab = int(values, "vocab", 8192, 300, 65536);
    const seed = num(values, "seed", 20261129, SEED);
    const src = await corpusSources({
      demoDir: typeof values.demo === "string" ? values.demo : "public/demo",
      spiderDir: typeof values.spider === "string" ? values.spider : undefined,
    });
    const docs = tokenizerDocuments(src, seed);
    const chars = docs.reduce((s, d) => s + d.text.length, 0);
    console.error(
      `training a ${vocab}-token BPE on ${docs.length} documents (${(chars / 1e6).toFixed(1)}M characters)`,
    );
    const t0 = performance.now();
    const bpe = trainDemoTokenizer(docs, vocab);
    const files = await writeTokenizerFolder(out, bpe);
    const enc = new BpeEncoder(bpe);
    const sample = docs.slice(0, 200).map((d) => d.text).join("");
    const tokens = enc.encode(sample).length;
    return {
      out,
      files,
      vocab: bpe.vocab.length,
      merges: bpe.merges.length,
      added: bpe.added.map((a) => a.content),
      documents: docs.length,
      characters: chars,
      seconds: (performance.now() - t0) / 1000,
      charsPerToken: sample.length / tokens,
      excluded: src.excluded,
    };
  },
};
