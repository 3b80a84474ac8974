// A learned BPE as Hugging Face tokenizer files: tokenizer.json (BPE model with vocab and merges,
// NFC, Qwen2's split regex + ByteLevel pre-tokenizer, ByteLevel decoder, added tokens) and
// tokenizer_config.json with a ChatML chat template, the layout Qwen2.5 ships.
import { QWEN2_SPLIT_PATTERN } from "./bytelevel.ts";
import type { BpeModel } from "./train.ts";

/** The special tokens of the demo model's tokenizer, in id order after the merges. */
export const DEMO_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] as const;
/** Non-special added tokens: the reasoning and answer tags of the prompt formats. */
export const DEMO_ADDED = ["<think>", "</think>", "<answer>", "</answer>"] as const;

/** ChatML, as Qwen2.5 writes it, without the default system prompt and tools. */
export const DEMO_CHAT_TEMPLATE =
  "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** tokenizer.json and tokenizer_config.json objects of `m`. */
export function bpeTokenizerFiles(
  m: BpeModel,
  o: { modelMaxLength?: number } = {},
): { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> } {
  // No prototype: tokens such as "constructor" or "__proto__" must be plain keys.
  const vocab: Record<string, number> = Object.create(null);
  const addedIds = new Set(m.added.map((a) => a.id));
  m.vocab.forEach((t, i) => {
    if (!addedIds.has(i) && !Object.hasOwn(vocab, t)) vocab[t] = i;
  });
  const added = m.added.map((a) => ({
    id: a.id,
    content: a.content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: a.special,
  }));
  const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false };
  const split = { type: "Split", pattern: { Regex: QWEN2_SPLIT_PATTERN }, behavior: "Isolated", invert: false };
  const tokenizerJson = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: { type: "NFC" },
    pre_tokenizer: { type: "Sequence", pretokenizers: [split, byteLevel] },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: m.merges.map(([a, b]) => `${a} ${b}`),
    },
  };
  const addedDecoder: Record<string, unknown> = {};
  for (const a of added) {
    addedDecoder[String(a.id)] = {
      content: a.content,
      lstrip: false,
      normalized: false,
      rstrip: false,
      single_word: false,
      special: a.special,
    };
  }
  const tokenizerConfig = {
    add_bos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: addedDecoder,
    additional_special_tokens: ["<|im_start|>", "<|im_end|>"],
    bos_token: null,
    eos_token: "<|im_end|>",
    pad_token: "<|endoftext|>",
    unk_token: null,
    chat_template: DEMO_CHAT_TEMPLATE,
    model_max_length: o.modelMaxLength ?? 2048,
    tokenizer_class: "PreTrainedTokenizerFast",
    clean_up_tokenization_spaces: false,
    errors: "replace",
  };
  return { tokenizerJson, tokenizerConfig };
}

/** The id of an added token of `m`; throws when it is absent. */
export function addedId(m: BpeModel, content: string): number {
  const a = m.added.find((x) => x.content === content);
  if (!a) throw new Error(`tokenizer: no added token ${content}`);
  return a.id;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Reads a BpeModel back from a tokenizer.json object written by bpeTokenizerFiles. */
export function bpeModelFromTokenizerJson(j: unknown): BpeModel {
  if (
    !isRecord(j) || !isRecord(j.model) || j.model.type !== "BPE" || !isRecord(j.model.vocab) ||
    !Array.isArray(j.model.merges)
  ) {
    throw new Error("tokenizer.json: not a BPE model with vocab and merges");
  }
  const vocab: string[] = [];
  for (const [t, id] of Object.entries(j.model.vocab)) {
    if (typeof id !== "number") throw new Error(`tokenizer.json: vocab entry ${t} is not a number`);
    vocab[id] = t;
  }
  const merges = j.model.merges.map((x): [string, string] => {
    if (typeof x === "string") {
      const sp = x.indexOf(" ");
      return [x.slice(0, sp), x.slice(sp + 1)];
    }
    if (Array.isArray(x) && typeof x[0] === "string" && typeof x[1] === "string") return [x[0], x[1]];
    throw new Error(`tokenizer.json: merge ${JSON.stringify(x)} is neither "a b" nor [a, b]`);
  });
  const added = (Array.isArray(j.added_tokens) ? j.added_tokens : []).filter(isRecord).map((a) => {
    if (typeof a.id !== "number" || typeof a.content !== "string") {
      throw new Error("tokenizer.json: added token without id or content");
    }
    vocab[a.id] = a.content;
    return { id: a.id, content: a.content, special: a.special === true };
  });
  for (let i = 0; i < vocab.length; i++) {
    if (vocab[i] === undefined) throw new Error(`tokenizer.json: id ${i} has no token`);
  }
  return { vocab, merges, added };
}
