// The session config entries ORT's WebGPU EP gets under Deno (ort.ts): RLVR_ORT_PENDING_DISPATCHES parsed and bounded,
// and the stand-in module built around onnxruntime's own.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { pendingDispatchesFromEnv, webgpuEntriesFactory } from "./ort.ts";

Deno.test("RLVR_ORT_PENDING_DISPATCHES: unset is null (the default applies), integers 1..4096 taken, others refused", async () => {
  const before = Deno.env.get("RLVR_ORT_PENDING_DISPATCHES");
  try {
    Deno.env.delete("RLVR_ORT_PENDING_DISPATCHES");
    assertEquals(pendingDispatchesFromEnv(), null);
    Deno.env.set("RLVR_ORT_PENDING_DISPATCHES", "1024");
    assertEquals(pendingDispatchesFromEnv(), 1024);
    for (const bad of ["0", "4097", "2.5", "many"]) {
      Deno.env.set("RLVR_ORT_PENDING_DISPATCHES", bad);
      await assertRejects(() => pendingDispatchesFromEnv(), /1\.\.4096/);
    }
  } finally {
    if (before === undefined) Deno.env.delete("RLVR_ORT_PENDING_DISPATCHES");
    else Deno.env.set("RLVR_ORT_PENDING_DISPATCHES", before);
  }
});

Deno.test("webgpuEntriesFactory: a data: module importing onnxruntime's factory and adding the entries before the EP is appended", () => {
  const url = webgpuEntriesFactory("file:///x/ort-wasm-simd-threaded.asyncify.mjs");
  assert(url.startsWith("data:text/javascript;base64,"), "a data: URL (Deno's npm loader refuses blob: ones)");
  const src = atob(url.slice(url.indexOf(",") + 1));
  assert(src.includes('import factory from "file:///x/ort-wasm-simd-threaded.asyncify.mjs"'));
  const add = src.indexOf("_OrtAddSessionConfigEntry"), append = src.indexOf("return append(options");
  assert(add > 0 && append > add, "the entries go in before the provider is appended");
});
