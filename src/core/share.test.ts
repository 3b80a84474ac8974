import LZString from "lz-string";
import { assert, assertEquals } from "../../tests/assert.ts";
import { addCell, emptyNotebook, type Notebook, updateParams } from "./notebook.ts";
import { CELL_TYPES } from "./notebook-params.ts";
import { Rng } from "./rng.ts";
import { decodeShareHash, encodeShareHash, fitsInLink, linkLength, SAFE_URL_LENGTH } from "./share.ts";

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
  console.log(`a notebook with all ${CELL_TYPES.length} cell types: ${hash.length} characters in the hash, ${JSON.stringify(doc).length} as JSON`);
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
    "#nb=" + LZString.compressToEncodedURIComponent(JSON.stringify({ version: 1, cells: [{ type: "code", params: { source: "fetch('//evil')" } }] })),
    "#nb=" + "B".repeat(300_000),
    ...Array.from({ length: 200 }, () => "#nb=" + Array.from({ length: 1 + rng.int(300) }, () => "ABCabc019+-$"[rng.int(12)]).join("")),
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
  const doc = { version: 1, title: "x", outputs: ["<b>result</b>"], cells: [{ id: "a", type: "grpo", run: "eval('1')", params: { G: 4, onload: "x" } }] };
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
  assertEquals(linkLength("#nb=abc", "https://x.org/p#old"), "https://x.org/p".length + 7, "the base URL's own hash is replaced");
  assert(fitsInLink("#nb=" + "A".repeat(SAFE_URL_LENGTH - 4)) && !fitsInLink("#nb=" + "A".repeat(SAFE_URL_LENGTH - 3)));
});
