// The share-link codec: the notebook document, compressed into the URL hash (as marimo does). The
// hash is never sent to a server; decoding goes through parseNotebook, so a crafted link can only
// carry parameters (no code, no results), and unknown fields are dropped. Links are written by
// lz-string and read by a port of its decompressor that stops once the output passes a budget:
// an LZW stream whose every code names the newest dictionary entry grows quadratically, so a
// 200,000-character link can otherwise expand to gigabytes before any length check could run.
import LZString from "lz-string";
import { type Issue, type Notebook, parseNotebook } from "./notebook.ts";

/** The hash prefix of a share link. */
export const SHARE_PREFIX = "#nb=";

/**
 * Longest link (base URL + hash) we call safe to share: RFC 9110 (section 4.1) asks every HTTP
 * sender and recipient to support at least 8000 octets of URI. Browsers accept far longer URLs
 * (Chrome about 2 MB), and the hash never reaches the server, but links travel through chat apps,
 * e-mail clients, URL shorteners and proxies whose limits are unknown; below this bound we
 * expect them to survive. Longer documents still encode and decode: the UI offers a file instead.
 */
export const SAFE_URL_LENGTH = 8000;

/** Hashes longer than this are refused before decompression (bounds the work a crafted link can cause). */
export const MAX_HASH_LENGTH = 200_000;
/** Decompressed documents longer than this are refused. */
export const MAX_DOCUMENT_LENGTH = 2_000_000;

/** The share hash of a document: "#nb=" + lz-string's URI-safe compression of its JSON. */
export function encodeShareHash(doc: Notebook): string {
  return SHARE_PREFIX + LZString.compressToEncodedURIComponent(JSON.stringify(doc));
}

/** What `decodeShareHash` returns: the validated document, or why not. */
export type ShareDecode = { ok: true; doc: Notebook; warnings: Issue[] } | { ok: false; errors: Issue[] };

/** Decodes a share hash ("#nb=..." or "nb=...") into a validated document; never throws. */
export function decodeShareHash(hash: string): ShareDecode {
  const fail = (message: string): ShareDecode => ({ ok: false, errors: [{ path: "", message }] });
  const body = hash.startsWith("#") ? hash.slice(1) : hash;
  if (!body.startsWith("nb=")) return fail('not a notebook link (the hash must start with "#nb=")');
  const data = body.slice(3);
  if (data.length === 0) return fail("empty notebook link");
  if (data.length > MAX_HASH_LENGTH) return fail(`link longer than ${MAX_HASH_LENGTH} characters`);
  if (!/^[A-Za-z0-9+\-$]*$/.test(data)) {
    return fail("link contains characters lz-string never writes (damaged or edited)");
  }
  const d = decompressBounded(data, MAX_DOCUMENT_LENGTH);
  if (d.kind === "too-long") {
    return fail(
      `link expands past ${
        MAX_DOCUMENT_LENGTH.toLocaleString("en-US")
      } characters (a notebook is never that long: a crafted or damaged link); refused after reading ${
        d.read.toLocaleString("en-US")
      } of its ${data.length.toLocaleString("en-US")} characters`,
    );
  }
  if (d.kind === "damaged" || !d.text) return fail("link does not decompress (damaged or truncated)");
  const text = d.text;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return fail("link does not hold JSON (damaged or truncated)");
  }
  const r = parseNotebook(json);
  return r.ok ? { ok: true, doc: r.doc, warnings: r.warnings } : { ok: false, errors: r.errors };
}

/** Characters of the full link: the base URL (without its hash) plus the share hash. */
export function linkLength(hash: string, baseUrl = ""): number {
  const i = baseUrl.indexOf("#");
  return (i < 0 ? baseUrl.length : i) + hash.length;
}

/** True when base URL + hash stays within SAFE_URL_LENGTH. */
export function fitsInLink(hash: string, baseUrl = ""): boolean {
  return linkLength(hash, baseUrl) <= SAFE_URL_LENGTH;
}

/** What `decompressBounded` returns: the text, a stream that is not lz-string's, or output past the budget (with input characters read). */
export type BoundedDecompress = { kind: "ok"; text: string } | { kind: "damaged" } | { kind: "too-long"; read: number };

const URI_SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$";
const URI_VALUE = new Map([...URI_SAFE].map((ch, i) => [ch, i]));

/**
 * lz-string's `decompressFromEncodedURIComponent` (its `_decompress` loop, 6 bits a character),
 * stopped as soon as the output passes `maxChars`. Every dictionary entry is at most one character
 * longer than output already written, so memory stays within a small multiple of the budget.
 * Returns what lz-string returns for every stream it writes; a stream it would answer with "" or
 * null is "damaged".
 */
export function decompressBounded(input: string, maxChars: number): BoundedDecompress {
  const resetValue = 32;
  const value = (i: number): number => URI_VALUE.get(input.charAt(i)) ?? 0;
  if (input.length === 0) return { kind: "damaged" };
  let val = value(0);
  let position = resetValue;
  let index = 1;
  const readBits = (n: number): number => {
    let bits = 0;
    for (let power = 1, k = 0; k < n; k++, power *= 2) {
      const b = val & position;
      position >>= 1;
      if (position === 0) {
        position = resetValue;
        val = value(index++);
      }
      if (b > 0) bits += power;
    }
    return bits;
  };
  const dictionary: string[] = [];
  let dictSize = 4;
  let enlargeIn = 4;
  let numBits = 3;
  const first = readBits(2);
  if (first > 1) return { kind: "damaged" };
  let w = String.fromCharCode(readBits(first === 0 ? 8 : 16));
  dictionary[3] = w;
  const result: string[] = [w];
  let total = w.length;
  for (;;) {
    if (index > input.length) return { kind: "damaged" };
    let c = readBits(numBits);
    if (c === 2) return { kind: "ok", text: result.join("") };
    if (c === 0 || c === 1) {
      dictionary[dictSize++] = String.fromCharCode(readBits(c === 0 ? 8 : 16));
      c = dictSize - 1;
      if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
    }
    let entry: string;
    if (c < dictSize && dictionary[c]) entry = dictionary[c];
    else if (c === dictSize) entry = w + w.charAt(0);
    else return { kind: "damaged" };
    total += entry.length;
    if (total > maxChars) return { kind: "too-long", read: Math.min(index, input.length) };
    result.push(entry);
    dictionary[dictSize++] = w + entry.charAt(0);
    w = entry;
    if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
  }
}
