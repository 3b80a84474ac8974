// The page's model-file cache (source.web.ts opfsCache + UrlSource): files kept in an OPFS folder
// (an in-memory directory handle here), a second read served without downloading, the server's
// copy checked with HEAD (ETag, else length) and downloaded again when it changed, immutable Hub
// revisions used without asking, usage and clearing.
import { assert, assertEquals } from "../../tests/assert.ts";
import { type CacheDirLike, type CacheFileLike, cacheFileName, hubSource, opfsCache, UrlSource } from "./source.web.ts";

/** An in-memory stand-in for an OPFS directory (the subset opfsCache uses), with its error names. */
class MemDir implements CacheDirLike {
  readonly dirs = new Map<string, MemDir>();
  readonly files = new Map<string, Uint8Array>();
  reads = 0;
  private notFound(name: string): never {
    throw new DOMException(`${name} not found`, "NotFoundError");
  }
  getDirectoryHandle(name: string, o: { create?: boolean } = {}): Promise<CacheDirLike> {
    let d = this.dirs.get(name);
    if (!d) {
      if (!o.create) this.notFound(name);
      d = new MemDir();
      this.dirs.set(name, d);
    }
    return Promise.resolve(d);
  }
  getFileHandle(name: string, o: { create?: boolean } = {}): Promise<CacheFileLike> {
    assert(!name.includes("/") && name.length <= 255, `valid OPFS file name: ${name}`);
    if (!this.files.has(name)) {
      if (!o.create) return Promise.reject(new DOMException(`${name} not found`, "NotFoundError"));
      this.files.set(name, new Uint8Array(0));
    }
    const files = this.files;
    const self = this;
    return Promise.resolve({
      getFile: () => {
        const b = files.get(name)!;
        return Promise.resolve({
          size: b.byteLength,
          arrayBuffer: () => (self.reads++, Promise.resolve(b.slice().buffer)),
        });
      },
      createWritable: () => {
        const parts: Uint8Array[] = [];
        return Promise.resolve({
          write: (data: Uint8Array) => (parts.push(data.slice()), Promise.resolve()),
          // Like OPFS, the file changes only when the stream closes.
          close: () => {
            const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
            let at = 0;
            for (const p of parts) (all.set(p, at), (at += p.byteLength));
            files.set(name, all);
            return Promise.resolve();
          },
        });
      },
    });
  }
  removeEntry(name: string): Promise<void> {
    if (!this.dirs.delete(name) && !this.files.delete(name)) this.notFound(name);
    return Promise.resolve();
  }
  async *keys(): AsyncIterable<string> {
    for (const k of [...this.dirs.keys(), ...this.files.keys()]) yield k;
  }
}

/** A scripted HTTP server: files with ETags (or none), counting GETs and HEADs; `down` fails every request. */
function fakeServer() {
  const files = new Map<string, { bytes: Uint8Array; etag: string | null }>();
  const log: string[] = [];
  let down = false;
  const fetchFn = (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = String(input);
    const method = init?.method ?? "GET";
    log.push(`${method} ${url}`);
    if (down) return Promise.reject(new TypeError("Failed to fetch"));
    const f = files.get(url);
    if (!f) return Promise.resolve(new Response("not found", { status: 404 }));
    const headers: Record<string, string> = { "content-length": String(f.bytes.byteLength) };
    if (f.etag) headers.etag = f.etag;
    return Promise.resolve(new Response(method === "HEAD" ? null : f.bytes.slice(), { headers }));
  };
  return {
    files,
    log,
    fetch: fetchFn as typeof fetch,
    setDown: (v: boolean) => (down = v),
    count: (method: string) => log.filter((l) => l.startsWith(method + " ")).length,
  };
}

const bytes = (...xs: number[]) => new Uint8Array(xs);

Deno.test("model cache: OPFS folder holds each file once; a second read downloads nothing; usage and clear", async () => {
  const root = new MemDir();
  const cache = opfsCache("rlvr-model-cache", () => Promise.resolve(root));
  const srv = fakeServer();
  const base = "https://models.example/tiny";
  srv.files.set(`${base}/config.json`, { bytes: bytes(1, 2, 3), etag: '"v1"' });
  srv.files.set(`${base}/model.safetensors`, {
    bytes: bytes(...Array.from({ length: 1000 }, (_, i) => i % 251)),
    etag: '"w1"',
  });
  const src = new UrlSource(base, { cache, fetch: srv.fetch });

  assertEquals(await src.read("config.json"), bytes(1, 2, 3));
  assertEquals((await src.read("model.safetensors")).byteLength, 1000);
  assertEquals(srv.count("GET"), 2);
  // Each file and its validator (ETag, length) are in the cache folder.
  const folder = root.dirs.get("rlvr-model-cache")!;
  assertEquals(
    [...folder.files.keys()].sort(),
    [
      cacheFileName(`${base}/config.json`),
      cacheFileName(`${base}/config.json#meta`),
      cacheFileName(`${base}/model.safetensors`),
      cacheFileName(`${base}/model.safetensors#meta`),
    ].sort(),
  );

  // Second run (a new source over the same cache): only HEAD requests, the same bytes.
  const again = new UrlSource(base, { cache, fetch: srv.fetch });
  assertEquals(await again.read("config.json"), bytes(1, 2, 3));
  assertEquals((await again.read("model.safetensors")).byteLength, 1000);
  assertEquals([srv.count("GET"), srv.count("HEAD")], [2, 2]);

  // exists() answers from the cache without reading the (possibly huge) file.
  const reads = folder.reads;
  assertEquals(await again.exists("model.safetensors"), true);
  assertEquals([folder.reads, srv.count("HEAD")], [reads, 2]);

  const u = await cache.usage();
  assertEquals(u.files, 2, "two model files (their validators are counted in bytes only)");
  assert(u.bytes > 1003 && u.bytes < 1003 + 400, `usage counts files and their small validators: ${u.bytes}`);
  assertEquals(await cache.clear(), u);
  assertEquals(await cache.usage(), { files: 0, bytes: 0 });
  assertEquals(await cache.get(`${base}/config.json`), null);
  await again.read("config.json");
  assertEquals(srv.count("GET"), 3, "downloaded again after clearing");
});

Deno.test("model cache: a changed file on the server is downloaded again (ETag, else length); offline uses the cache", async () => {
  const root = new MemDir();
  const cache = opfsCache("c", () => Promise.resolve(root));
  const srv = fakeServer();
  const base = "http://127.0.0.1:9/model";
  srv.files.set(`${base}/a.bin`, { bytes: bytes(1, 1), etag: '"a1"' });
  srv.files.set(`${base}/b.bin`, { bytes: bytes(2, 2), etag: null });
  const src = () => new UrlSource(base, { cache, fetch: srv.fetch });
  await src().read("a.bin");
  await src().read("b.bin");
  assertEquals(srv.count("GET"), 2);

  srv.files.set(`${base}/a.bin`, { bytes: bytes(9, 9), etag: '"a2"' });
  assertEquals(await src().read("a.bin"), bytes(9, 9), "new ETag: new bytes");
  assertEquals(srv.count("GET"), 3);
  assertEquals(await src().read("a.bin"), bytes(9, 9));
  assertEquals(srv.count("GET"), 3, "and then cached again");

  srv.files.set(`${base}/b.bin`, { bytes: bytes(3, 3, 3), etag: null });
  assertEquals(await src().read("b.bin"), bytes(3, 3, 3), "no ETag: a new length means new bytes");
  assertEquals(srv.count("GET"), 4);

  srv.setDown(true);
  assertEquals(await src().read("b.bin"), bytes(3, 3, 3), "server unreachable: the cached copy");
  srv.setDown(false);

  srv.files.delete(`${base}/a.bin`);
  let err = "";
  await src().read("a.bin").catch((e) => (err = String(e)));
  assert(/a\.bin not found.*HTTP 404/.test(err), `a file gone from the server is reported, not served stale: ${err}`);
});

Deno.test("model cache: a Hub revision that is a commit hash is used from the cache without asking the Hub", async () => {
  const root = new MemDir();
  const cache = opfsCache("c", () => Promise.resolve(root));
  const srv = fakeServer();
  const sha = "0123456789abcdef0123456789abcdef01234567";
  const pinned = hubSource("owner/tiny", { revision: sha, cache, fetch: srv.fetch });
  srv.files.set(pinned.url("config.json"), { bytes: bytes(7), etag: '"x"' });
  await pinned.read("config.json");
  await hubSource("owner/tiny", { revision: sha, cache, fetch: srv.fetch }).read("config.json");
  assertEquals(srv.log, [`GET ${pinned.url("config.json")}`]);
  // "main" moves: checked with HEAD each time.
  const main = hubSource("owner/tiny", { cache, fetch: srv.fetch });
  srv.files.set(main.url("config.json"), { bytes: bytes(8), etag: '"y"' });
  await main.read("config.json");
  await hubSource("owner/tiny", { cache, fetch: srv.fetch }).read("config.json");
  assertEquals(srv.log.slice(1), [`GET ${main.url("config.json")}`, `HEAD ${main.url("config.json")}`]);
});

Deno.test("model cache: long URLs get valid, distinct file names", () => {
  const a = `https://huggingface.co/${"x".repeat(150)}/resolve/main/model-00001-of-00002.safetensors`;
  const b = a.replace("00001", "00002");
  const na = cacheFileName(a);
  const nb = cacheFileName(b);
  assert(na.length <= 255 && !na.includes("/"), na);
  assert(na !== nb, "distinct");
  assert(cacheFileName(`${a}#meta`).endsWith("%23meta"), "a validator entry stays recognisable");
  assertEquals(cacheFileName("http://a/b"), "http%3A%2F%2Fa%2Fb");
});
