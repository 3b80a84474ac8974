// The share-link codec: the notebook document, compressed into the URL hash (as marimo does). The
// hash is never sent to a server; decoding goes through parseNotebook, so a crafted link can only
// carry parameters (no code, no results), and unknown fields are dropped.
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
  if (!/^[A-Za-z0-9+\-$]*$/.test(data)) return fail("link contains characters lz-string never writes (damaged or edited)");
  let text: string | null;
  try {
    text = LZString.decompressFromEncodedURIComponent(data);
  } catch {
    text = null;
  }
  if (!text) return fail("link does not decompress (damaged or truncated)");
  if (text.length > MAX_DOCUMENT_LENGTH) return fail(`document longer than ${MAX_DOCUMENT_LENGTH} characters`);
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
