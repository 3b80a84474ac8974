// The steps `rlvr train-tokenizer` and `rlvr pretrain` share, on disk (Deno): corpus documents
// from the demo and Spider folders, the tokenizer folder written or read back, the packed corpus.
import { BpeEncoder } from "../../model/bpe/encode.ts";
import { addedId, bpeModelFromTokenizerJson, bpeTokenizerFiles, DEMO_CHAT_TEMPLATE } from "../../model/bpe/files.ts";
import type { BpeModel } from "../../model/bpe/train.ts";
import {
  ANSWER_ROOM,
  buildDocuments,
  type CorpusDoc,
  corpusHash,
  type CorpusSources,
  DEFAULT_CORPUS_OPTIONS,
  packDocuments,
  type PackedCorpus,
} from "./corpus.ts";
import { type CorpusPaths, type Excluded, loadCorpusSources } from "./corpus.deno.ts";

/** Reads the sources and makes the (unbudgeted) documents: the tokenizer's training text. */
export async function corpusSources(paths: CorpusPaths): Promise<CorpusSources & { excluded: Excluded }> {
  return await loadCorpusSources(paths);
}

/** Documents with full prompts, for tokenizer training. */
export function tokenizerDocuments(src: CorpusSources, seed: number): CorpusDoc[] {
  return buildDocuments(src, { ...DEFAULT_CORPUS_OPTIONS, seed, chatTemplate: DEMO_CHAT_TEMPLATE });
}

/** Writes tokenizer.json and tokenizer_config.json of `bpe` into `dir`. */
export async function writeTokenizerFolder(dir: string, bpe: BpeModel, modelMaxLength?: number): Promise<string[]> {
  await Deno.mkdir(dir, { recursive: true });
  const f = bpeTokenizerFiles(bpe, { modelMaxLength });
  await Deno.writeTextFile(`${dir}/tokenizer.json`, JSON.stringify(f.tokenizerJson, null, 2));
  await Deno.writeTextFile(`${dir}/tokenizer_config.json`, JSON.stringify(f.tokenizerConfig, null, 2));
  return ["tokenizer.json", "tokenizer_config.json"];
}

/** Reads a tokenizer folder written by writeTokenizerFolder back into a BpeModel. */
export async function readTokenizerFolder(dir: string): Promise<BpeModel> {
  return bpeModelFromTokenizerJson(JSON.parse(await Deno.readTextFile(`${dir}/tokenizer.json`)));
}

/** How chat documents are shaped (CorpusOptions.chatTurns / chatPasses); {} is one question per document. */
export interface CorpusShape {
  chatTurns?: number;
  chatPasses?: number;
}

/**
 * The packed token corpus: documents built again with prompts shrunk to seqLen - 160 tokens
 * (when seqLen >= 512) counted with the tokenizer through the chat template, tokenized, packed.
 */
export function packedCorpus(
  src: CorpusSources,
  bpe: BpeModel,
  seqLen: number,
  seed: number,
  shape: CorpusShape = {},
): PackedCorpus & { docs: number; hash: string } {
  const enc = new BpeEncoder(bpe);
  const encode = (t: string) => enc.encode(t);
  const budget = seqLen >= 512
    ? { maxPromptTokens: seqLen - ANSWER_ROOM, countTokens: (t: string) => encode(t).length }
    : {};
  const docs = buildDocuments(src, {
    ...DEFAULT_CORPUS_OPTIONS,
    seed,
    chatTemplate: DEMO_CHAT_TEMPLATE,
    ...budget,
    ...shape,
  });
  const packed = packDocuments(docs, encode, addedId(bpe, "<|endoftext|>"), seqLen);
  return { ...packed, docs: docs.length, hash: corpusHash(packed.rows) };
}
