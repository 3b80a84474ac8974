// `rlvr pretrain --corpus-only` (no GPU): the tokenizer and the packed corpus are written, and a later
// run given that tokenizer folder and the same flags finds its cache key equal and reads the corpus
// instead of building it — what the GPU machine does with the corpus demo-prep.sh builds here.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { UsageError } from "../args.ts";
import { command } from "./pretrain.ts";

Deno.test("rlvr pretrain --corpus-only: tokenizer + packed corpus; the same flags with --tokenizer read it back (same key and hash)", async () => {
  const out = await Deno.makeTempDir({ prefix: "rlvr-corpus-only-" });
  const flags = ["--out", out, "--seq-len", "256", "--synthetic", "2", "--chat-turns", "4", "--corpus-only"];
  const logs: string[] = [];
  const orig = console.error;
  console.error = (...a: unknown[]) => void logs.push(a.join(" "));
  try {
    const first = await command.run([...flags, "--vocab", "600"]);
    assertEquals(first.corpusOnly, true);
    for (const f of ["tokenizer/tokenizer.json", "tokenizer/tokenizer_config.json", "corpus.json", "corpus.bin"]) {
      await Deno.stat(`${out}/${f}`);
    }
    assert(logs.some((l) => /^corpus: \d+ tokens in \d+ rows/.test(l)), "built");
    logs.length = 0;
    const again = await command.run([...flags, "--tokenizer", `${out}/tokenizer`]);
    assert(
      logs.some((l) => l.startsWith(`corpus: ${first.rows} rows from ${out}/corpus.bin`)),
      `read back: ${logs.join(" | ")}`,
    );
    assertEquals([again.hash, JSON.stringify(again.key)], [first.hash, JSON.stringify(first.key)]);
    assertEquals(
      (first.key as { definedShare?: number }).definedShare,
      0.3,
      "the key names the evidence patterns' share (default)",
    );
    let refused = "";
    try {
      await command.run([...flags, "--tokenizer", `${out}/tokenizer`, "--defined-share", "1.5"]);
    } catch (e) {
      refused = e instanceof UsageError ? e.message : String(e);
    }
    assert(refused.includes("--defined-share must be a number from 0 to 1"), `refused: ${refused}`);
  } finally {
    console.error = orig;
  }
});
