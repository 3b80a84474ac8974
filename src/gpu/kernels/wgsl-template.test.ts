import { assert, assertEquals } from "../../../tests/assert.ts";

function assertThrows(fn: () => unknown, text: string): void {
  let msg = "";
  try {
    fn();
  } catch (e) {
    msg = e instanceof Error ? e.message : String(e);
  }
  assert(msg.includes(text), `expected an error with '${text}', got '${msg}'`);
}
import { expandTemplate } from "./wgsl-template.ts";

Deno.test("wgsl template: #if / #else / #endif keep or drop lines, nested; {{NAME}} takes the value; #include indents the file's expansion", () => {
  const files = { "inc.wgsl": "let x = {{V}};\n// #if B\nlet y = 1;\n// #endif\n" };
  const t =
    "a\n// #if A\nb\n  // #if !B\n  c\n  // #else\n  d\n  // #endif\n// #else\ne\n// #endif\n    // #include inc.wgsl\nf {{V}}";
  assertEquals(expandTemplate("t", t, { A: true, B: false, V: 7 }, files), "a\nb\n  c\n    let x = 7;\nf 7");
  assertEquals(
    expandTemplate("t", t, { A: false, B: true, V: "w" }, files),
    "a\ne\n    let x = w;\n    let y = 1;\nf w",
  );
});

Deno.test("wgsl template: an #include with NAME=value sets variables for that file only", () => {
  const files = { "load.wgsl": "fn {{FN}}() -> f32 { return {{BUF}}[0]; }" };
  const t = "// #include load.wgsl FN=loadQ BUF=q\n// #include load.wgsl FN=loadK BUF=k\n{{BUF}}";
  assertEquals(
    expandTemplate("t", t, { BUF: "x" }, files),
    "fn loadQ() -> f32 { return q[0]; }\nfn loadK() -> f32 { return k[0]; }\nx",
  );
});

Deno.test("wgsl template: unknown variables, files and unbalanced blocks are errors naming the place", () => {
  assertThrows(() => expandTemplate("t", "// #if X\n// #endif", {}, {}), "t:1: #if X");
  assertThrows(() => expandTemplate("t", "// #if X\n", { X: true }, {}), "#if without #endif");
  assertThrows(() => expandTemplate("t", "// #endif", {}, {}), "#endif without #if");
  assertThrows(() => expandTemplate("t", "// #include nope.wgsl", {}, {}), "no such file");
  assertThrows(() => expandTemplate("t", "// #include a.wgsl X", {}, { "a.wgsl": "" }), "'X' is not NAME=value");
  assertThrows(() => expandTemplate("t", "{{N}}", { N: true }, {}), "{{N}}");
});
