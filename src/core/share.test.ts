import LZString from "lz-string";
import { assert, assertEquals } from "../../tests/assert.ts";
import { addCell, emptyNotebook, type Notebook, updateParams } from "./notebook.ts";
import { CELL_TYPES } from "./notebook-params.ts";
import { Rng } from "./rng.ts";
import {
  decodeShareHash,
  decompressBounded,
  encodeShareHash,
  fitsInLink,
  linkLength,
  MAX_DOCUMENT_LENGTH,
  SAFE_URL_LENGTH,
} from "./share.ts";

const XSS = '# Results\n<script>alert("x")</script><img src=x onerror=alert(1)> & ünïcödé 🚀 `#nb=` %20';

function sample(): Notebook {
  let doc = emptyNotebook("GRPO on Spider — demo");
  for (const t of CELL_TYPES) doc = addCell(doc, t);
  return updateParams(doc, doc.cells[0].id, "markdown", { source: XSS });
}

Deno.test("share: round trip of every cell type; hash uses only URI-safe characters", () => {
  const doc = sample();
  const hash = encodeShareHash(doc);
  assert(/^#nb=[A-Za-z0-9+\-$]+$/.test(hash), hash.slice(0, 80));
  const r = decodeShareHash(hash);
  assert(r.ok, JSON.stringify(r));
  assertEquals(r.doc, doc);
  assertEquals(r.warnings, []);
  assertEquals(decodeShareHash(hash.slice(1)), r, "the leading # is optional");
  assert(fitsInLink(hash, "https://example.org/rlvr/"), `${hash.length} characters`);
  console.log(
    `a notebook with all ${CELL_TYPES.length} cell types: ${hash.length} characters in the hash, ${
      JSON.stringify(doc).length
    } as JSON`,
  );
});

Deno.test("share: a markdown cell with <script> survives as text, byte for byte", () => {
  const r = decodeShareHash(encodeShareHash(sample()));
  assert(r.ok);
  const md = r.doc.cells[0];
  assert(md.type === "markdown");
  assertEquals(md.params.source, XSS);
});

Deno.test("share: garbage, truncated and crafted links are refused with a reason, never thrown", () => {
  const hash = encodeShareHash(sample());
  const rng = new Rng(77);
  const garbage = [
    "",
    "#",
    "#nb=",
    "#other=abc",
    "#nb=!!!",
    "#nb=" + "A".repeat(50),
    hash.slice(0, hash.length / 2),
    "#nb=" + LZString.compressToEncodedURIComponent("not json {"),
    "#nb=" + LZString.compressToEncodedURIComponent("[1,2,3]"),
    "#nb=" +
    LZString.compressToEncodedURIComponent(
      JSON.stringify({ version: 1, cells: [{ type: "code", params: { source: "fetch('//evil')" } }] }),
    ),
    "#nb=" + "B".repeat(300_000),
    ...Array.from(
      { length: 200 },
      () => "#nb=" + Array.from({ length: 1 + rng.int(300) }, () => "ABCabc019+-$"[rng.int(12)]).join(""),
    ),
  ];
  for (const g of garbage) {
    const r = decodeShareHash(g);
    assert(!r.ok, `accepted ${g.slice(0, 60)}`);
    assert(r.errors.length > 0 && r.errors.every((e) => e.message.length > 0));
  }
  const crafted = decodeShareHash(garbage[9]);
  assert(!crafted.ok && /unknown cell type "code"/.test(crafted.errors[0].message), JSON.stringify(crafted));
});

Deno.test("share: crafted extra fields are dropped (only parameters travel)", () => {
  const doc = {
    version: 1,
    title: "x",
    outputs: ["<b>result</b>"],
    cells: [{ id: "a", type: "grpo", run: "eval('1')", params: { G: 4, onload: "x" } }],
  };
  const r = decodeShareHash("#nb=" + LZString.compressToEncodedURIComponent(JSON.stringify(doc)));
  assert(r.ok, JSON.stringify(r));
  assertEquals(Object.keys(r.doc), ["version", "title", "cells"]);
  assertEquals(Object.keys(r.doc.cells[0]), ["id", "type", "collapsed", "params"]);
  assert(!("onload" in r.doc.cells[0].params) && !JSON.stringify(r.doc).includes("eval('1')"), "extra fields dropped");
  assertEquals(r.warnings.map((w) => w.path), ["outputs", "cells[0].run", "cells[0].params.onload"]);
});

Deno.test("share: an oversized notebook still round-trips but does not fit in a link", () => {
  const rng = new Rng(5);
  const words = Array.from({ length: 6000 }, () => Math.floor(rng.next() * 1e9).toString(36)).join(" ");
  let doc = addCell(emptyNotebook("long"), "markdown");
  doc = updateParams(doc, doc.cells[0].id, "markdown", { source: words });
  const hash = encodeShareHash(doc);
  assert(hash.length > SAFE_URL_LENGTH, `${hash.length}`);
  assert(!fitsInLink(hash));
  const r = decodeShareHash(hash);
  assert(r.ok && r.doc.cells[0].type === "markdown" && r.doc.cells[0].params.source === words);
  assertEquals(
    linkLength("#nb=abc", "https://x.org/p#old"),
    "https://x.org/p".length + 7,
    "the base URL's own hash is replaced",
  );
  assert(fitsInLink("#nb=" + "A".repeat(SAFE_URL_LENGTH - 4)) && !fitsInLink("#nb=" + "A".repeat(SAFE_URL_LENGTH - 3)));
});

/**
 * A share link whose LZW codes each name the dictionary entry being defined (lz-string's "cScSc"
 * case): entry k is k characters long, so n codes expand to about n²/2 characters. The bomb of
 * issue 47 item 1 (a 199,000-character link, 3.2 GB and 12.7 s in lz-string).
 */
function bombHash(chars: number, end = false): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-$";
  const out: string[] = [];
  let acc = 0, nbits = 0;
  const write = (value: number, n: number) => {
    for (let k = 0; k < n; k++) {
      acc = (acc << 1) | ((value >> k) & 1);
      if (++nbits === 6) {
        out.push(alphabet[acc]);
        acc = 0;
        nbits = 0;
      }
    }
  };
  write(0, 2);
  write("a".charCodeAt(0), 8);
  let dictSize = 4, enlargeIn = 4, numBits = 3;
  while (out.length < chars) {
    write(dictSize, numBits);
    dictSize++;
    if (--enlargeIn === 0) enlargeIn = 2 ** numBits++;
  }
  if (end) write(2, numBits + 6);
  return "#nb=" + out.join("");
}

Deno.test("share: the bounded decompressor reads every link lz-string writes, as lz-string does", () => {
  const rng = new Rng(47);
  const pieces = [
    "a",
    "ab",
    '{"cells":',
    "ü",
    "🚀",
    "\u0000",
    "\uffff",
    "€",
    " ",
    "\n",
    "SELECT * FROM t WHERE x = 1;",
  ];
  const texts = [
    "x",
    "ab",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    JSON.stringify(sample()),
    "ü".repeat(3000),
    "a".repeat(100_000),
  ];
  for (let i = 0; i < 300; i++) {
    texts.push(Array.from({ length: 1 + rng.int(400) }, () => pieces[rng.int(pieces.length)]).join(""));
  }
  for (let i = 0; i < 50; i++) {
    texts.push(Array.from({ length: 1 + rng.int(200) }, () => String.fromCharCode(rng.int(0x10000))).join(""));
  }
  for (const t of texts) {
    const data = LZString.compressToEncodedURIComponent(t);
    const r = decompressBounded(data, MAX_DOCUMENT_LENGTH);
    assert(r.kind === "ok" && r.text === t, `round trip of ${JSON.stringify(t.slice(0, 40))}: ${r.kind}`);
    // Damaged input: whatever lz-string makes of it, the bounded decoder never returns something else.
    const cut = data.slice(0, Math.max(1, data.length - 1 - rng.int(4)));
    const old = (() => {
      try {
        return LZString.decompressFromEncodedURIComponent(cut);
      } catch {
        return null;
      }
    })();
    const mine = decompressBounded(cut, MAX_DOCUMENT_LENGTH);
    if (mine.kind === "ok") assertEquals(mine.text, old, `truncated ${JSON.stringify(t.slice(0, 40))}`);
  }
});

Deno.test("share: a decompression-bomb link is refused after reading a small prefix (issue 47 item 1)", () => {
  const hash = bombHash(199_000);
  assert(hash.length - 4 <= 200_000, "under the link limit");
  const data = hash.slice(4);
  const r = decompressBounded(data, MAX_DOCUMENT_LENGTH);
  assert(r.kind === "too-long", r.kind);
  assert(r.read < data.length / 20, `stopped after ${r.read} of ${data.length} characters`);
  const d = decodeShareHash(hash);
  assert(!d.ok && /expands past 2,000,000 characters/.test(d.errors[0].message), JSON.stringify(d).slice(0, 300));
  console.log(`bomb link of ${data.length} characters: ${d.ok ? "" : d.errors[0].message}`);
  // A small bomb below the budget still decodes (it is not JSON, so the link is refused as such).
  const small = decompressBounded(bombHash(200, true).slice(4), MAX_DOCUMENT_LENGTH);
  assert(small.kind === "ok" && /^a+$/.test(small.text) && small.text.length > 200 * 6 / 12, small.kind);
});

Deno.test("share: text at the document limit decompresses; one character more is refused by the same bound", () => {
  const at = decompressBounded(
    LZString.compressToEncodedURIComponent("x".repeat(MAX_DOCUMENT_LENGTH)),
    MAX_DOCUMENT_LENGTH,
  );
  assert(at.kind === "ok" && at.text.length === MAX_DOCUMENT_LENGTH, at.kind);
  const over = decompressBounded(
    LZString.compressToEncodedURIComponent("x".repeat(MAX_DOCUMENT_LENGTH + 1)),
    MAX_DOCUMENT_LENGTH,
  );
  assert(over.kind === "too-long", over.kind);
  const doc = JSON.stringify({ version: 1, title: "t".repeat(MAX_DOCUMENT_LENGTH), cells: [] });
  const r = decodeShareHash("#nb=" + LZString.compressToEncodedURIComponent(doc));
  assert(!r.ok && /expands past/.test(r.errors[0].message), JSON.stringify(r).slice(0, 300));
});
