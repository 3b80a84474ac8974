import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { fromBf16, toBf16 } from "./half.ts";
import { loadHfConfig, loadHfModel, loadHfTokenizer } from "./hf.ts";
import { referenceLogprobs } from "./reference.ts";
import { writeShardedSafetensors } from "./safetensors.ts";
import { DirSource } from "./source.deno.ts";
import { MemorySource } from "./source.ts";
import {
  type DirectoryHandleLike,
  DirectoryHandleSource,
  FileListSource,
  hubSource,
  memoryCache,
  UrlSource,
} from "./source.web.ts";
import { writeHfFolder } from "./tiny.deno.ts";
import { hfFolderFiles, makeTinyModel } from "./tiny.ts";

/** Serves `dir` on 127.0.0.1 (GET and HEAD, 404 for absent files), counting GETs per path. */
function serveDir(dir: string) {
  const gets = new Map<string, number>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const path = decodeURIComponent(new URL(req.url).pathname).replace(/^\/repo\//, "");
    if (path.includes("..")) return new Response("bad path", { status: 400 });
    try {
      const bytes = await Deno.readFile(`${dir}/${path}`);
      if (req.method === "GET") gets.set(path, (gets.get(path) ?? 0) + 1);
      return new Response(req.method === "HEAD" ? null : bytes, {
        headers: { "content-length": String(bytes.byteLength) },
      });
    } catch {
      return new Response("not found", { status: 404 });
    }
  });
  return { server, gets, base: `http://127.0.0.1:${server.addr.port}/repo` };
}

Deno.test("hf: a tiny folder written to disk loads back through the directory source with identical weights and log-probabilities", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const arch of ["qwen2", "llama", "qwen3"] as const) {
      const m = makeTinyModel(arch, { seed: 41 });
      await writeHfFolder(`${dir}/${arch}`, m);
      const got = await loadHfModel(new DirSource(`${dir}/${arch}`));
      assertEquals(got.config, m.config);
      assertEquals([...got.weights.keys()].sort(), [...m.weights.keys()].sort());
      for (const [k, t] of m.weights) assertEquals(got.weights.get(k), t, k);
      const ids = got.tokenizer.encode("<|im_start|>user\nSELECT name FROM t WHERE x = 1<|im_end|>");
      assert(ids.every((id) => id < got.config.vocabSize), "token ids fit the embedding");
      assertEquals(referenceLogprobs(got.config, got.weights, [ids]), referenceLogprobs(m.config, m.weights, [ids]));
      assert(got.chatTemplate?.includes("<|im_start|>"), "chat template");
      assertEquals(got.source, `directory ${dir}/${arch}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hf: loading over HTTP (sharded bf16 checkpoint) streams with progress and then hits the cache", async () => {
  const dir = await Deno.makeTempDir();
  const { server, gets, base } = serveDir(dir);
  try {
    const m = makeTinyModel("qwen3", { seed: 42 });
    const files = hfFolderFiles(m, { dtype: "BF16" });
    files.delete("model.safetensors");
    const { index, files: shards } = writeShardedSafetensors(m.weights, 20000, "BF16");
    assert(shards.size >= 2, "several shards");
    files.set("model.safetensors.index.json", new TextEncoder().encode(JSON.stringify(index)));
    for (const [k, v] of [...files, ...shards]) await Deno.writeFile(`${dir}/${k}`, v);
    const cache = memoryCache();
    const progress: [string, number, number | null][] = [];
    const src = new UrlSource(base, { cache });
    const got = await loadHfModel(src, { onProgress: (f, l, t) => progress.push([f, l, t]) });
    for (const [k, t] of m.weights) assertEquals(got.weights.get(k)?.data, fromBf16(toBf16(t.data)), k);
    for (const name of shards.keys()) {
      const last = progress.filter((p) => p[0] === name).at(-1);
      assertEquals(last?.[1], shards.get(name)!.byteLength, `progress reaches the size of ${name}`);
      assertEquals(last?.[2], shards.get(name)!.byteLength, `total of ${name} from content-length`);
    }
    const before = [...gets.values()].reduce((a, b) => a + b, 0);
    await loadHfModel(new UrlSource(base, { cache }));
    assertEquals([...gets.values()].reduce((a, b) => a + b, 0), before, "second load served from the cache");
    await assertRejects(
      () => src.read("missing.bin"),
      new RegExp(`missing\\.bin not found in ${base.replaceAll(".", "\\.")}.*HTTP 404`),
    );
    assertEquals(await src.exists("config.json"), true);
    assertEquals(await src.exists("nope.json"), false);
    const gated = new UrlSource(base, {
      fetch: () => Promise.resolve(new Response("no", { status: 401, statusText: "Unauthorized" })),
    });
    await assertRejects(
      () => gated.read("config.json"),
      /HTTP 401 Unauthorized \(a gated or private repository needs an access token/,
    );
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hf: missing files name the file and the source; the Hub source builds resolve URLs", async () => {
  const m = makeTinyModel("llama", { seed: 43 });
  const files = hfFolderFiles(m);
  files.delete("tokenizer.json");
  await assertRejects(
    () => loadHfModel(new MemorySource(files, "tiny-llama")),
    /model file tokenizer\.json not found in memory folder tiny-llama/,
  );
  files.delete("model.safetensors");
  await assertRejects(
    () => loadHfModel(new MemorySource(files, "tiny-llama")),
    /model\.safetensors not found in memory folder tiny-llama/,
  );
  const hub = hubSource("Qwen/Qwen2.5-0.5B-Instruct");
  assertEquals(hub.url("config.json"), "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct/resolve/main/config.json");
  assertEquals(hub.describe(), "Hugging Face Hub Qwen/Qwen2.5-0.5B-Instruct@main");
  await assertRejects(() => Promise.resolve(hubSource("not a repo")), /owner\/name/);
  await assertRejects(() => hub.read("../secret"), /must be relative/);
  const cfg = JSON.parse(new TextDecoder().decode(files.get("config.json")!));
  files.set(
    "config.json",
    new TextEncoder().encode(JSON.stringify({ ...cfg, model_type: "mistral", architectures: ["MistralForCausalLM"] })),
  );
  await assertRejects(
    () => loadHfModel(new MemorySource(files, "m")),
    /memory folder m: unsupported model: model_type "mistral"/,
  );
  await assertRejects(
    () => loadHfConfig(new MemorySource(files, "m")),
    /memory folder m: unsupported model: model_type "mistral"/,
  );
});

Deno.test("hf: a picked file list (browser folder picker) loads like a directory", async () => {
  const m = makeTinyModel("qwen2", { seed: 44, layers: 1 });
  const files = [...hfFolderFiles(m)].map(([name, bytes]) => new File([new Uint8Array(bytes)], name));
  const got = await loadHfModel(new FileListSource(files, "picked tiny"));
  assertEquals(got.config, m.config);
  const withTemplateFile = [
    ...files.filter((f) => f.name !== "tokenizer_config.json"),
    new File(["{{ messages }}"], "chat_template.jinja"),
  ];
  const tok = await loadHfTokenizer(new FileListSource(withTemplateFile));
  assertEquals([tok.chatTemplate, tok.eos], ["{{ messages }}", null]);
  assertEquals(tok.decode(tok.encode("SELECT 1")), "SELECT 1");
  assertEquals(got.weights.get("model.norm.weight"), m.weights.get("model.norm.weight"));
});

Deno.test("hf: a File System Access directory handle (nested paths, NotFoundError) loads like a directory", async () => {
  const m = makeTinyModel("llama", { seed: 45, layers: 1 });
  const files = hfFolderFiles(m);
  // A plain-object stand-in for FileSystemDirectoryHandle that throws DOMException NotFoundError as browsers do.
  const handle = (prefix: string, name: string): DirectoryHandleLike => ({
    name,
    getDirectoryHandle: (d) => {
      const p = `${prefix}${d}/`;
      if (![...files.keys()].some((k) => k.startsWith(p))) return Promise.reject(new DOMException(d, "NotFoundError"));
      return Promise.resolve(handle(p, d));
    },
    getFileHandle: (f) => {
      const bytes = files.get(prefix + f);
      if (!bytes) return Promise.reject(new DOMException(f, "NotFoundError"));
      return Promise.resolve({ getFile: () => Promise.resolve(new File([new Uint8Array(bytes)], f)) });
    },
  });
  files.set("extra/nested.json", new TextEncoder().encode("{}"));
  const src = new DirectoryHandleSource(handle("", "tiny-llama"));
  const got = await loadHfModel(src);
  assertEquals(got.config, m.config);
  assertEquals(await src.exists("extra/nested.json"), true);
  assertEquals(await src.exists("extra/absent.json"), false);
  assertEquals(await src.exists("nodir/x.json"), false);
  await assertRejects(() => src.read("absent.bin"), /absent\.bin not found in picked folder tiny-llama/);
});

Deno.test("UrlSource: a server's index.html fallback for a missing file counts as missing (Vite dev server, static hosts)", async () => {
  const { MissingFileError } = await import("./source.ts");
  const html = "<!doctype html><html></html>";
  const fetchFn = (input: RequestInfo | URL) => {
    const url = String(input);
    if (url.endsWith("/config.json")) {
      return Promise.resolve(new Response("{}", { headers: { "content-type": "application/json" } }));
    }
    return Promise.resolve(new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }));
  };
  const src = new UrlSource("http://x/model", { fetch: fetchFn as typeof fetch });
  assertEquals(await src.exists("model.safetensors.index.json"), false);
  assertEquals(await src.exists("config.json"), true);
  const e = await assertRejects(() => src.read("model.safetensors"), /answered with a web page/);
  assert(e instanceof MissingFileError, "a MissingFileError");
  assertEquals(new TextDecoder().decode(await src.read("config.json")), "{}");
});
