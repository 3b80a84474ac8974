import { assert, assertEquals } from "../../../tests/assert.ts";
import { sharedDatasets } from "../../../tests/shared.ts";
import { HfTokenizer } from "../tokenizer.ts";
import { BpeEncoder } from "./encode.ts";
import { bpeModelFromTokenizerJson, bpeTokenizerFiles, DEMO_ADDED, DEMO_SPECIALS } from "./files.ts";
import { countWords, trainBpe } from "./train.ts";

const TAGS = [...DEMO_SPECIALS, ...DEMO_ADDED];

function jsonlTexts(text: string, keys: string[]): string[] {
  return text.split("\n").filter((l) => l.trim() !== "").flatMap((l) => {
    const o: Record<string, unknown> = JSON.parse(l);
    return keys.map((k) => o[k]).filter((v): v is string => typeof v === "string");
  });
}

const HARD = [
  "SELECT T1.name FROM singer AS T1 WHERE T1.age > 30 ORDER BY T1.name DESC;",
  "  leading spaces,\ttabs\nand\r\nnewlines\n\n   trailing   ",
  "Unicode: café, naïve (NFD: cafe\u0301), 東京, Ελληνικά, emoji 🤖 and 'quotes' \"double\" it's THEY'LL",
  "<|im_start|>user\nWhich table?<|im_end|>\n<|im_start|>assistant\n<think>\nstep</think><answer>\n```sql\nSELECT 1\n```\n</answer><|im_end|>",
  "numbers 1234567890 3.14159 -42 1e-9, x<=y AND z<>w OR a!=b",
];

Deno.test("bpe: merges on Sennrich's low/lower/newest/widest table are the hand-counted ones, ties to the lower left id", () => {
  const words = new Map([["low", 5], ["lower", 2], ["newest", 6], ["widest", 3]]);
  const m = trainBpe(words, { vocabSize: 256 + 4 + 1, specials: ["<|endoftext|>"] });
  // es = 9 and st = 9 tie: e (0x65) < s (0x73); after es, (es, t) = 9; then lo = ow = 7: l < o.
  assertEquals(m.merges, [["e", "s"], ["es", "t"], ["l", "o"], ["lo", "w"]]);
  assertEquals(m.vocab.slice(256), ["es", "est", "lo", "low", "<|endoftext|>"]);
  assertEquals(m.added, [{ id: 260, content: "<|endoftext|>", special: true }]);
});

Deno.test("bpe: tokens named like Object.prototype members (constructor, toString, valueOf) are plain vocabulary entries (regression: 'id has no token')", () => {
  const text = "constructor __proto__ toString hasOwnProperty valueOf ".repeat(20);
  const words = countWords(text, TAGS);
  const m = trainBpe(words, { vocabSize: 330, specials: DEMO_SPECIALS, addedTokens: DEMO_ADDED });
  for (const t of ["constructor", "ĠtoString", "ĠvalueOf", "ĠhasOwnProperty"]) {
    assert(m.vocab.includes(t), `${t} learned`);
  }
  const json = JSON.parse(JSON.stringify(bpeTokenizerFiles(m).tokenizerJson));
  assertEquals(bpeModelFromTokenizerJson(json), m);
  const lib = new HfTokenizer(json, {});
  assertEquals(lib.encode(text), new BpeEncoder(m).encode(text));
  assertEquals(lib.encode("constructor"), [m.vocab.indexOf("constructor")]);
});

Deno.test("bpe: training does not depend on the order text was counted in", () => {
  const texts = jsonlTexts(Deno.readTextFileSync(new URL("../../../public/demo/train.jsonl", import.meta.url)), [
    "question",
    "gold_sql",
  ]);
  const a = new Map<string, number>(), b = new Map<string, number>();
  for (const t of texts) countWords(t, TAGS, a);
  for (const t of [...texts].reverse()) countWords(t, TAGS, b);
  const ma = trainBpe(a, { vocabSize: 700, specials: DEMO_SPECIALS, addedTokens: DEMO_ADDED });
  const mb = trainBpe(b, { vocabSize: 700, specials: DEMO_SPECIALS, addedTokens: DEMO_ADDED });
  assertEquals(ma, mb);
  assertEquals(ma.vocab.length, 700);
});

function checkAgainstLibrary(
  trainTexts: string[],
  heldOut: string[],
  vocabSize: number,
): { tokens: number; chars: number } {
  const words = new Map<string, number>();
  for (const t of trainTexts) countWords(t, TAGS, words);
  const model = trainBpe(words, { vocabSize, specials: DEMO_SPECIALS, addedTokens: DEMO_ADDED });
  const files = bpeTokenizerFiles(model);
  // Through JSON text, as a file on disk would be read.
  const json = JSON.parse(JSON.stringify(files.tokenizerJson));
  const lib = new HfTokenizer(json, JSON.parse(JSON.stringify(files.tokenizerConfig)));
  const own = new BpeEncoder(bpeModelFromTokenizerJson(json));
  assertEquals(lib.vocabSize, model.vocab.length);
  assert(model.vocab.length <= vocabSize, "never over the asked size");
  assertEquals([lib.eos?.token, lib.pad?.token, lib.bos], ["<|im_end|>", "<|endoftext|>", null]);
  for (const tag of TAGS) assertEquals(lib.encode(tag), [model.added.find((a) => a.content === tag)?.id], tag);
  let tokens = 0, chars = 0;
  for (const s of heldOut) {
    const ids = lib.encode(s);
    assertEquals(own.encode(s), ids, `own encoder vs library on ${JSON.stringify(s.slice(0, 80))}`);
    assertEquals(lib.decode(ids), s.normalize("NFC"), "library round trip");
    assertEquals(own.decode(ids), s.normalize("NFC"), "own round trip");
    tokens += ids.length;
    chars += s.length;
  }
  const plain = lib.decode(lib.encode("<|im_start|>a<think>b</think><|im_end|>"), { skipSpecialTokens: true });
  assertEquals(plain, "a<think>b</think>", "specials skipped, the non-special tags kept");
  return { tokens, chars };
}

Deno.test("bpe: the library (@huggingface/tokenizers via HfTokenizer) loads tokenizer.json and tokenizes held-out demo text exactly as our encoder", () => {
  const root = new URL("../../../public/demo/", import.meta.url);
  const train = jsonlTexts(Deno.readTextFileSync(new URL("train.jsonl", root)), ["question", "evidence", "gold_sql"]);
  const test = ["test-concepts", "heldout-db"].flatMap((s) =>
    jsonlTexts(Deno.readTextFileSync(new URL(`${s}.jsonl`, root)), ["question", "evidence", "gold_sql"])
  );
  const { tokens, chars } = checkAgainstLibrary(train, [...test, ...HARD], 900);
  console.log(`demo held-out: ${chars} chars -> ${tokens} tokens (${(chars / tokens).toFixed(2)} chars/token)`);
});

Deno.test({
  name:
    "bpe: on Spider (3,000 training questions + SQL, 3,072 tokens) the library equals our encoder on 500 questions of other databases",
  ignore: sharedDatasets === null,
  fn() {
    const lines = jsonlTexts(Deno.readTextFileSync(`${sharedDatasets}/spider-train/questions.jsonl`), [
      "question",
      "query",
    ]);
    const { tokens, chars } = checkAgainstLibrary(lines.slice(0, 6000), [...lines.slice(10000, 11000), ...HARD], 3072);
    console.log(`spider held-out: ${chars} chars -> ${tokens} tokens (${(chars / tokens).toFixed(2)} chars/token)`);
    assert(chars / tokens > 2.5, `a learned vocabulary compresses SQL text (bytes alone: 1 char/token)`);
  },
});
