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
  const t = "a\n// #if A\nb\n  // #if !B\n  c\n  // #else\n  d\n  // #endif\n// #else\ne\n// #endif\n    // #include inc.wgsl\nf {{V}}";
  assertEquals(expandTemplate("t", t, { A: true, B: false, V: 7 }, files), "a\nb\n  c\n    let x = 7;\nf 7");
  assertEquals(expandTemplate("t", t, { A: false, B: true, V: "w" }, files), "a\ne\n    let x = w;\n    let y = 1;\nf w");
});

Deno.test("wgsl template: unknown variables, files and unbalanced blocks are errors naming the place", () => {
  assertThrows(() => expandTemplate("t", "// #if X\n// #endif", {}, {}), "t:1: #if X");
  assertThrows(() => expandTemplate("t", "// #if X\n", { X: true }, {}), "#if without #endif");
  assertThrows(() => expandTemplate("t", "// #endif", {}, {}), "#endif without #if");
  assertThrows(() => expandTemplate("t", "// #include nope.wgsl", {}, {}), "no such file");
  assertThrows(() => expandTemplate("t", "{{N}}", { N: true }, {}), "{{N}}");
});
