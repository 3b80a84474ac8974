// Byte-level pre-tokenization as GPT-2 and Qwen2 do it: NFC, Qwen2's split regex, then each piece's
// UTF-8 bytes mapped to printable characters (GPT-2's reversible byte -> unicode table), so every
// string is a sequence of the 256 base symbols and BPE never needs an unknown token.

/** Qwen2's split pattern as it is written in tokenizer.json (Rust regex / onig syntax). */
export const QWEN2_SPLIT_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// The same pattern in JavaScript syntax: the inline case-insensitive group spelled out as classes.
const SPLIT_JS = new RegExp(
  "'(?:[sS]|[tT]|[rR][eE]|[vV][eE]|[mM]|[lL][lL]|[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
  "gu",
);

/** GPT-2's byte -> character table: printable Latin-1 bytes map to themselves, the rest to U+0100.. in order. */
export function bytesToUnicode(): string[] {
  const map: string[] = new Array(256);
  const keep = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let n = 0;
  for (let b = 0; b < 256; b++) map[b] = keep(b) ? String.fromCodePoint(b) : "";
  for (let b = 0; b < 256; b++) if (map[b] === "") map[b] = String.fromCodePoint(256 + n++);
  return map;
}

const B2U = bytesToUnicode();
const U2B = new Map(B2U.map((ch, b) => [ch, b]));
const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: false });

/** The pieces of `text` under the split regex, gaps between matches kept (the "Isolated" behaviour). */
export function splitPieces(text: string): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(SPLIT_JS)) {
    const at = m.index ?? 0;
    if (at > last) out.push(text.slice(last, at));
    if (m[0].length > 0) out.push(m[0]);
    last = at + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** A piece's UTF-8 bytes as byte-level characters. */
export function byteLevel(piece: string): string {
  let s = "";
  for (const b of utf8.encode(piece)) s += B2U[b];
  return s;
}

/** Byte-level words of a normalised text without special tokens: NFC, split, byte map. */
export function preTokenize(text: string): string[] {
  return splitPieces(text.normalize("NFC")).map(byteLevel);
}

/** Text of a byte-level string (the ByteLevel decoder); invalid UTF-8 becomes U+FFFD as in the library. */
export function byteLevelDecode(s: string): string {
  const bytes: number[] = [];
  for (const ch of s) {
    const b = U2B.get(ch);
    if (b === undefined) throw new Error(`byte-level decode: ${JSON.stringify(ch)} is not a byte symbol`);
    bytes.push(b);
  }
  return utf8Decoder.decode(new Uint8Array(bytes));
}
