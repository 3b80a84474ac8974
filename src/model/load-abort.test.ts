// Stop while a model loads: an aborted signal rejects with its reason between files and mid-download,
// and the OPFS-style cache never holds a partly downloaded file as complete (the next load downloads
// it again). Also: a body cut short of its Content-Length is not cached.
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { parseNotebook } from "../core/notebook.ts";
import { ModelRuntime } from "../runtime/recipe/model-runtime.ts";
import type { RunEnv } from "../runtime/recipe/context.ts";
import { runNotebook } from "../runtime/recipe/runner.ts";
import { MemoryStore } from "../runtime/store.ts";
import { classifyRunError } from "../runtime/run-plan.ts";
import { loadHfModel } from "./hf.ts";
import { MemorySource, type ModelSource } from "./source.ts";
import { memoryCache, UrlSource } from "./source.web.ts";
import { hfFolderFiles, makeTinyModel } from "./tiny.ts";

const BASE = "https://models.example/tiny";

/** Serves `files` under BASE; GET bodies stream in 64-byte chunks; `cut` sends only that many bytes of a file. */
function streamingServer(files: Map<string, Uint8Array>, cut: Record<string, number> = {}) {
  const log: string[] = [];
  const fetchFn = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = String(input);
    const method = init?.method ?? "GET";
    log.push(`${method} ${url}`);
    init?.signal?.throwIfAborted();
    const name = url.slice(BASE.length + 1);
    const f = files.get(name);
    if (!f) return Promise.resolve(new Response("not found", { status: 404 }));
    const headers = { "content-length": String(f.byteLength), etag: `"${f.byteLength}"` };
    if (method === "HEAD") return Promise.resolve(new Response(null, { headers }));
    const send = f.subarray(0, cut[name] ?? f.byteLength);
    let at = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (init?.signal?.aborted) return c.error(init.signal.reason);
        if (at >= send.byteLength) return c.close();
        c.enqueue(send.slice(at, at + 64));
        at += 64;
      },
    });
    return Promise.resolve(new Response(body, { headers }));
  };
  return {
    log,
    fetch: fetchFn as typeof fetch,
    gets: (name: string) => log.filter((l) => l === `GET ${BASE}/${name}`).length,
  };
}

const tiny = () => hfFolderFiles(makeTinyModel("qwen2", { seed: 3 }));

Deno.test("load abort: Stop mid-download rejects with the reason and caches no partial file; the next load downloads it whole", async () => {
  const files = tiny();
  const weights = files.get("model.safetensors")!;
  assert(weights.byteLength > 64 * 4, "the weights stream in several chunks");
  const srv = streamingServer(files);
  const cache = memoryCache();
  const stop = new AbortController();
  const reason = new Error("stopped by the user");
  let seen = 0;
  const src = new UrlSource(BASE, { cache, fetch: srv.fetch });
  const err = await assertRejects(() =>
    loadHfModel(src, {
      signal: stop.signal,
      onProgress: (file, loaded) => {
        seen = loaded;
        if (file === "model.safetensors" && loaded >= 128) stop.abort(reason);
      },
    })
  );
  assert(err === reason, `rejects with the abort reason itself, got ${String(err)}`);
  assert(seen < weights.byteLength, `stopped part-way (${seen} of ${weights.byteLength} bytes)`);
  const url = `${BASE}/model.safetensors`;
  assertEquals(cache.map.has(url), false, "no partial weights file in the cache");
  assertEquals(cache.map.has(`${url}#meta`), false, "no validator for it either");
  assert(cache.map.has(`${BASE}/config.json`), "files finished before the stop stay cached");
  assertEquals(srv.gets("tokenizer.json"), 0, "nothing after the stop was requested");

  // Next time: the weights are downloaded again, in full, and loaded.
  const again = new UrlSource(BASE, { cache, fetch: srv.fetch });
  const hf = await loadHfModel(again);
  assertEquals(srv.gets("model.safetensors"), 2);
  assertEquals(cache.map.get(url)?.byteLength, weights.byteLength);
  assertEquals(hf.config.numLayers, 2);
  // config.json and generation_config.json came before the stop: from the cache now; the rest downloaded.
  const before = files.get("config.json")!.byteLength + files.get("generation_config.json")!.byteLength;
  const all = [...files.values()].reduce((n, f) => n + f.byteLength, 0);
  assertEquals(hf.transferred, { downloadedBytes: all - before, cachedBytes: before, viaCache: true });
  console.log(`aborted at ${seen}/${weights.byteLength} bytes; reload moved ${JSON.stringify(hf.transferred)}`);
});

Deno.test("load abort: a body cut short of its Content-Length is not cached as the file", async () => {
  const files = tiny();
  const srv = streamingServer(files, { "model.safetensors": 200 });
  const cache = memoryCache();
  const got = await new UrlSource(BASE, { cache, fetch: srv.fetch }).read("model.safetensors");
  assertEquals(got.byteLength, 200);
  assertEquals(cache.map.has(`${BASE}/model.safetensors`), false);
  assertEquals(cache.map.has(`${BASE}/model.safetensors#meta`), false);
});

Deno.test("load abort: between files (memory source): the files after the stop are never read", async () => {
  const files = tiny();
  const reads: string[] = [];
  const mem = new MemorySource(files);
  const src: ModelSource = {
    read: (p, on, signal) => (reads.push(p), mem.read(p, on, signal)),
    exists: (p) => mem.exists(p),
    describe: () => "logged memory folder",
  };
  const stop = new AbortController();
  const reason = new Error("stopped by the user");
  const err = await assertRejects(() =>
    loadHfModel(src, { signal: stop.signal, onProgress: () => stop.abort(reason) })
  );
  assert(err === reason, String(err));
  assertEquals(reads, ["config.json", "generation_config.json", "model.safetensors"]);
});

Deno.test("load abort: ModelRuntime.create honours a stop before the graph build", async () => {
  const hf = await loadHfModel(new MemorySource(tiny()));
  const stop = new AbortController();
  const reason = new Error("stopped by the user");
  stop.abort(reason);
  const err = await assertRejects(() =>
    ModelRuntime.create({ ...hf, name: "tiny" }, () => Promise.reject(new Error("no GPU needed")), {
      dtype: "f32",
      loraRank: 2,
      loraAlpha: 4,
      seed: 0,
      signal: stop.signal,
    })
  );
  assert(err === reason, String(err));
});

Deno.test("load abort: runNotebook stopped while the model cell loads reports a cancelled run (the cell shows 'stopped')", async () => {
  const files = tiny();
  const stop = new AbortController();
  const unused = () => Promise.reject(new Error("not used"));
  const env: RunEnv = {
    store: new MemoryStore(),
    loadDataset: unused,
    sqlRunner: () => ({ query: unused, close: () => {} }),
    schemaOf: unused,
    loadModel: async (_which, lo) => ({ ...(await loadHfModel(new MemorySource(files), lo)), name: "tiny" }),
    adapterSource: () => {
      throw new Error("not used");
    },
    gpuDevice: unused,
    now: () => 0,
  };
  const r = parseNotebook({
    version: 1,
    title: "t",
    cells: [{ id: "m", type: "model", params: { source: "url", url: "x", dtype: "f32", loraRank: 2, loraAlpha: 4 } }],
  });
  assert(r.ok);
  const err = await assertRejects(() =>
    runNotebook(r.doc, env, {
      signal: stop.signal,
      onProgress: (p) => {
        if (p.message.startsWith("reading model.safetensors")) stop.abort(new Error("stopped by the user"));
      },
    })
  );
  const msg = err instanceof Error ? err.message : String(err);
  assertEquals(msg, 'cell "m" (model): run cancelled: stopped by the user');
  assertEquals(classifyRunError(msg), "cancelled");
});
