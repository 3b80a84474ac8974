// The demo model's tokenizer: a byte-level BPE learned from the corpus documents' text, with the
// ChatML specials and the reasoning/answer tags as added tokens.
import { DEMO_ADDED, DEMO_SPECIALS } from "../../model/bpe/files.ts";
import { type BpeModel, countWords, trainBpe } from "../../model/bpe/train.ts";
import type { CorpusDoc } from "./corpus.ts";

/** Learns the demo tokenizer from the documents (each distinct text counted as often as it occurs). */
export function trainDemoTokenizer(docs: readonly CorpusDoc[], vocabSize: number): BpeModel {
  const tags = [...DEMO_SPECIALS, ...DEMO_ADDED];
  const words = new Map<string, number>();
  for (const d of docs) countWords(d.text, tags, words);
  return trainBpe(words, { vocabSize, specials: DEMO_SPECIALS, addedTokens: DEMO_ADDED });
}
