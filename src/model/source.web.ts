// Model sources over HTTP (any URL, the Hugging Face Hub) with an optional byte cache (OPFS in the
// browser), and folders the user picked (FileList from <input webkitdirectory>, or a File System
// Access directory handle). Nothing here touches the DOM at import time, so Deno can test it.
import {
  checkRelativePath,
  MissingFileError,
  type ModelSource,
  type ProgressFn,
  throwIfAborted,
  type TransferStats,
} from "./source.ts";

/** A persistent byte store keyed by URL (OPFS in the browser, a Map in tests). */
export interface ByteCache {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Whether `key` is stored, without reading it (a model file can be gigabytes). */
  has?(key: string): Promise<boolean>;
}

/** An in-memory ByteCache. */
export function memoryCache(): ByteCache & { map: Map<string, Uint8Array> } {
  const map = new Map<string, Uint8Array>();
  return {
    map,
    get: (k) => Promise.resolve(map.get(k) ?? null),
    put: (k, b) => {
      map.set(k, b);
      return Promise.resolve();
    },
    has: (k) => Promise.resolve(map.has(k)),
  };
}

/** The part of an OPFS directory handle the cache uses (a plain object in tests). */
export interface CacheDirLike {
  getDirectoryHandle(name: string, o?: { create?: boolean }): Promise<CacheDirLike>;
  getFileHandle(name: string, o?: { create?: boolean }): Promise<CacheFileLike>;
  removeEntry(name: string, o?: { recursive?: boolean }): Promise<void>;
  keys(): AsyncIterable<string>;
}

/** The part of an OPFS file handle the cache uses. */
export interface CacheFileLike {
  getFile(): Promise<{ size: number; arrayBuffer(): Promise<ArrayBuffer> }>;
  createWritable(): Promise<{ write(data: Uint8Array<ArrayBuffer>): Promise<void>; close(): Promise<void> }>;
}

/** Files and bytes a cache holds (or a clear removed). */
export interface CacheUsage {
  files: number;
  bytes: number;
}

/** A ByteCache that can say what it holds and forget it all ("Clear cached model files"). */
export interface ClearableCache extends ByteCache {
  usage(): Promise<CacheUsage>;
  clear(): Promise<CacheUsage>;
}

/** FNV-1a over a string with a given offset basis, as 8 hex digits. */
function fnv(text: string, basis: number): string {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/**
 * The OPFS file name of a cache key: the percent-encoded URL (names cannot hold "/"); a long one
 * keeps its start and end around two hashes of the whole key (file names are limited to 255 bytes).
 */
export function cacheFileName(key: string): string {
  const name = encodeURIComponent(key);
  return name.length <= 200
    ? name
    : `${name.slice(0, 150)}~${fnv(key, 0x811c9dc5)}${fnv(key, 0x01000193)}~${name.slice(-24)}`;
}

/** Validator entries (ETag, length) kept beside each file: not counted as files. */
const META_SUFFIX = encodeURIComponent("#meta");

const isNotFound = (e: unknown) =>
  e instanceof DOMException && (e.name === "NotFoundError" || e.name === "TypeMismatchError");

/**
 * A ByteCache in the Origin Private File System, one file per URL under `dirName`. `root` is the
 * OPFS root (navigator.storage.getDirectory() unless given: tests pass an in-memory directory).
 */
export function opfsCache(dirName = "rlvr-model-cache", root?: () => Promise<CacheDirLike>): ClearableCache {
  const getRoot = root ?? (async () => (await navigator.storage.getDirectory()) as unknown as CacheDirLike);
  const dir = async () => (await getRoot()).getDirectoryHandle(dirName, { create: true });
  const file = async (key: string) => {
    try {
      return await (await dir()).getFileHandle(cacheFileName(key));
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  };
  return {
    async get(key) {
      const fh = await file(key);
      return fh ? new Uint8Array(await (await fh.getFile()).arrayBuffer()) : null;
    },
    async has(key) {
      return (await file(key)) !== null;
    },
    async put(key, bytes) {
      const d = await dir();
      // A writable stream commits only on close(), so an interrupted write leaves no partial entry.
      const fh = await d.getFileHandle(cacheFileName(key), { create: true });
      const w = await fh.createWritable();
      await w.write(new Uint8Array(bytes));
      await w.close();
    },
    async usage() {
      const d = await dir();
      const u: CacheUsage = { files: 0, bytes: 0 };
      for await (const name of d.keys()) {
        if (!name.endsWith(META_SUFFIX)) u.files++;
        u.bytes += (await (await d.getFileHandle(name)).getFile()).size;
      }
      return u;
    },
    async clear() {
      const u = await this.usage();
      await (await getRoot()).removeEntry(dirName, { recursive: true }).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
      return u;
    },
  };
}

/** Options of an HTTP source. */
export interface UrlSourceOptions {
  cache?: ByteCache;
  /** Extra request headers (e.g. `Authorization: Bearer hf_...` for gated repos). */
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  /** How to name the source in messages. */
  label?: string;
  /**
   * The files at this URL never change (a Hub revision that is a commit hash): a cached file is
   * used without asking the server. Otherwise a cached file is checked with a HEAD request (ETag,
   * else Content-Length) and downloaded again when the server's copy changed.
   */
  immutable?: boolean;
}

/** What the cache keeps beside a file, to tell whether the server's copy changed. */
interface CacheMeta {
  etag: string | null;
  length: number;
}

const metaKey = (url: string) => `${url}#meta`;

/**
 * A request that got no answer at all (offline, a blocked host, a refused cross-origin request): the browser says
 * only "Failed to fetch". The message says which source and URL, whether the model cache holds the file, and what
 * to do.
 */
export class UnreachableError extends Error {
  override name = "UnreachableError";
  constructor(readonly url: string, readonly source: string, override readonly cause: unknown, cacheNote: string) {
    super(
      `${source} was unreachable: the request for ${url} got no answer (${
        cause instanceof Error ? cause.message : String(cause)
      }: ` +
        `no network, the host blocked, or a cross-origin request refused). ${cacheNote} ` +
        `To do: connect to the internet and run the cell again; files downloaded once stay in this browser's model cache and then load without a connection.`,
    );
  }
}

/** What the model cache holds, for an unreachable-source message. */
async function cacheNote(cache: ByteCache | undefined, url: string): Promise<string> {
  if (!cache) return "This source is read without the model cache: no copy of its files is kept in the browser.";
  const has = await (cache.has ? cache.has(url) : cache.get(url).then((b) => b !== null)).catch(() => false);
  if (has) {
    return "The model cache holds this file, but not its check data: it is downloaded again when the source can be reached.";
  }
  const usage = "usage" in cache && typeof cache.usage === "function"
    ? await (cache as ClearableCache).usage().catch(() => null)
    : null;
  const held = usage === null
    ? ""
    : usage.files === 0
    ? " (the cache is empty: no model has been downloaded in this browser yet)"
    : ` (it holds ${usage.files} file${usage.files === 1 ? "" : "s"}, ${
      (usage.bytes / 1e6).toFixed(1)
    } MB, of other downloads)`;
  return `The model cache has no copy of this file${held}.`;
}
const enc = new TextEncoder();
const dec = new TextDecoder();

/** Reads `${base}/${path}` over HTTP, streaming with progress, through the cache when given. */
/**
 * Whether `res` is a single-page app's fallback rather than `path`: Vite's dev server and many static
 * hosts answer a missing file with index.html (200, text/html). Model files are never HTML.
 */
function spaFallback(path: string, res: Response): boolean {
  return res.ok && !/\.html?$/i.test(path) &&
    (res.headers.get("content-type") ?? "").toLowerCase().startsWith("text/html");
}

export class UrlSource implements ModelSource {
  private readonly base: string;
  private readonly fetchFn: typeof fetch;
  private readonly moved = { downloadedBytes: 0, cachedBytes: 0 };
  constructor(base: string, private o: UrlSourceOptions = {}) {
    this.base = base.replace(/\/+$/, "");
    this.fetchFn = o.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The URL of one file. */
  url(path: string): string {
    return `${this.base}/${checkRelativePath(path).split("/").map(encodeURIComponent).join("/")}`;
  }

  /** Bytes downloaded and read from the cache by this source so far. */
  transferred(): TransferStats {
    return { ...this.moved, viaCache: this.o.cache !== undefined };
  }

  /**
   * Downloads (or reads from the cache, when the server's copy is unchanged) one file. An aborted
   * `signal` cancels the request mid-body; only a complete body is ever put in the cache.
   */
  async read(path: string, onProgress?: ProgressFn, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal);
    const url = this.url(path);
    const cache = this.o.cache;
    if (cache && (await this.fresh(url, signal))) {
      const cached = await cache.get(url);
      throwIfAborted(signal);
      if (cached) {
        this.moved.cachedBytes += cached.byteLength;
        onProgress?.(cached.byteLength, cached.byteLength);
        return cached;
      }
    }
    const res = await this.request(url, { headers: this.o.headers, signal }, signal);
    if (res.status === 404 || spaFallback(path, res)) {
      await res.body?.cancel();
      throw new MissingFileError(
        path,
        this.describe(),
        res.status === 404
          ? `HTTP 404 for ${url}`
          : `${url} answered with a web page (the server's fallback for a missing file)`,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`fetching ${url}: HTTP ${res.status} ${res.statusText}${accessHint(res.status)}`);
    }
    const lenHeader = res.headers.get("content-length");
    const total = lenHeader === null ? null : Number(lenHeader);
    const bytes = await readBody(res, total, onProgress, signal);
    this.moved.downloadedBytes += bytes.byteLength;
    throwIfAborted(signal);
    // A body shorter than its Content-Length was cut off (a compressed transfer decodes to more,
    // not less): never keep it as the file, so the next run downloads it again.
    if (cache && !(total !== null && bytes.byteLength < total)) {
      // The file first, its validator second: fresh() needs both, so a write interrupted between
      // them leaves an entry that is downloaded again, never a partial one taken as complete.
      const meta: CacheMeta = { etag: res.headers.get("etag"), length: bytes.byteLength };
      await cache.put(url, bytes);
      await cache.put(metaKey(url), enc.encode(JSON.stringify(meta)));
    }
    return bytes;
  }

  /**
   * Whether the cached copy of `url` may be used: it is there, and the files are immutable, or
   * a HEAD request reports the same ETag (else the same length), or the server cannot be reached.
   */
  private async fresh(url: string, signal?: AbortSignal): Promise<boolean> {
    const cache = this.o.cache!;
    const raw = await cache.get(metaKey(url));
    if (!raw || !(cache.has ? await cache.has(url) : true)) return false;
    if (this.o.immutable) return true;
    let meta: CacheMeta;
    try {
      meta = JSON.parse(dec.decode(raw));
    } catch {
      return false;
    }
    let res: Response;
    try {
      res = await this.fetchFn(url, { method: "HEAD", headers: this.o.headers, signal });
      await res.body?.cancel();
    } catch {
      throwIfAborted(signal);
      return true; // offline: the cached copy is the best there is
    }
    if (!res.ok) return false; // let the download say what is wrong
    const etag = res.headers.get("etag");
    if (etag && meta.etag) return etag === meta.etag;
    const len = res.headers.get("content-length");
    return len === null || Number(len) === meta.length;
  }

  /** HEAD request (cache first); 404 means absent. */
  async exists(path: string): Promise<boolean> {
    const url = this.url(path);
    const cache = this.o.cache;
    if (cache && (cache.has ? await cache.has(url) : (await cache.get(url)) !== null)) return true;
    const res = await this.request(url, { method: "HEAD", headers: this.o.headers });
    await res.body?.cancel();
    if (res.status === 404 || spaFallback(path, res)) return false;
    if (res.ok) return true;
    throw new Error(`checking ${url}: HTTP ${res.status} ${res.statusText}${accessHint(res.status)}`);
  }

  /** `fetch`, where no answer at all (a rejected fetch, not an abort) is an UnreachableError naming the URL. */
  private async request(url: string, init: RequestInit, signal?: AbortSignal): Promise<Response> {
    try {
      return await this.fetchFn(url, init);
    } catch (e) {
      throwIfAborted(signal);
      if (e instanceof DOMException && e.name === "AbortError") throw e;
      throw new UnreachableError(url, this.describe(), e, await cacheNote(this.o.cache, url));
    }
  }

  /** The label or base URL. */
  describe(): string {
    return this.o.label ?? this.base;
  }
}

function accessHint(status: number): string {
  return status === 401 || status === 403
    ? ' (a gated or private repository needs an access token: pass headers { Authorization: "Bearer hf_..." })'
    : "";
}

async function readBody(
  res: Response,
  total: number | null,
  onProgress?: ProgressFn,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  if (!res.body) {
    const b = new Uint8Array(await res.arrayBuffer());
    onProgress?.(b.byteLength, total ?? b.byteLength);
    return b;
  }
  const reader = res.body.getReader();
  // With a known length write straight into one buffer; otherwise gather chunks.
  const chunks: Uint8Array[] = [];
  let out = total !== null && Number.isFinite(total) ? new Uint8Array(total) : null;
  let loaded = 0;
  for (;;) {
    if (signal?.aborted) {
      await reader.cancel().catch(() => undefined);
      throw signal.reason;
    }
    const { done, value } = await reader.read();
    if (done) break;
    if (out && loaded + value.byteLength <= out.byteLength) out.set(value, loaded);
    else {
      if (out) {
        // The server sent more than announced: fall back to chunks.
        chunks.push(out.subarray(0, loaded));
        out = null;
      }
      chunks.push(value);
    }
    loaded += value.byteLength;
    onProgress?.(loaded, total);
  }
  if (out) return loaded === out.byteLength ? out : out.subarray(0, loaded);
  const all = new Uint8Array(loaded);
  let p = 0;
  for (const c of chunks) {
    all.set(c, p);
    p += c.byteLength;
  }
  return all;
}

/** A Hugging Face Hub repository (`https://huggingface.co/<repo>/resolve/<revision>/<file>`). */
export function hubSource(
  repo: string,
  o: UrlSourceOptions & { revision?: string; endpoint?: string } = {},
): UrlSource {
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) {
    throw new Error(`Hugging Face repo id ${JSON.stringify(repo)} must look like "owner/name"`);
  }
  const rev = o.revision ?? "main";
  const endpoint = (o.endpoint ?? "https://huggingface.co").replace(/\/+$/, "");
  return new UrlSource(`${endpoint}/${repo}/resolve/${encodeURIComponent(rev)}`, {
    ...o,
    label: o.label ?? `Hugging Face Hub ${repo}@${rev}`,
    immutable: o.immutable ?? /^[0-9a-f]{40}$/.test(rev),
  });
}

/** Files the user picked (`<input type=file webkitdirectory>` or drag and drop), keyed by their path below the picked folder. */
export class FileListSource implements ModelSource {
  private files = new Map<string, File>();
  constructor(files: Iterable<File>, private name = "picked files") {
    for (const f of files) {
      // webkitRelativePath is "<picked folder>/<path>"; plain picks have only the name.
      const rel = f.webkitRelativePath ? f.webkitRelativePath.split("/").slice(1).join("/") : f.name;
      this.files.set(rel || f.name, f);
    }
  }

  /** Reads one picked file. */
  async read(path: string, onProgress?: ProgressFn, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal);
    const f = this.files.get(checkRelativePath(path));
    if (!f) throw new MissingFileError(path, this.describe());
    const b = new Uint8Array(await f.arrayBuffer());
    onProgress?.(b.byteLength, b.byteLength);
    return b;
  }

  /** Whether that file was picked. */
  exists(path: string): Promise<boolean> {
    return Promise.resolve(this.files.has(checkRelativePath(path)));
  }

  /** "picked files" or the given name. */
  describe(): string {
    return this.name;
  }
}

/** The part of FileSystemDirectoryHandle we use (so tests can pass a plain object). */
export interface DirectoryHandleLike {
  readonly name: string;
  getDirectoryHandle(name: string): Promise<DirectoryHandleLike>;
  getFileHandle(name: string): Promise<{ getFile(): Promise<File> }>;
}

/** A folder opened with `showDirectoryPicker()` (File System Access API). */
export class DirectoryHandleSource implements ModelSource {
  constructor(private root: DirectoryHandleLike) {}

  private async file(path: string): Promise<File | null> {
    const parts = checkRelativePath(path).split("/");
    try {
      let d = this.root;
      for (const p of parts.slice(0, -1)) d = await d.getDirectoryHandle(p);
      return await (await d.getFileHandle(parts[parts.length - 1])).getFile();
    } catch (e) {
      if (e instanceof DOMException && (e.name === "NotFoundError" || e.name === "TypeMismatchError")) return null;
      throw e;
    }
  }

  /** Reads one file below the handle. */
  async read(path: string, onProgress?: ProgressFn, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal);
    const f = await this.file(path);
    if (!f) throw new MissingFileError(path, this.describe());
    const b = new Uint8Array(await f.arrayBuffer());
    onProgress?.(b.byteLength, b.byteLength);
    return b;
  }

  /** Whether the file exists below the handle. */
  async exists(path: string): Promise<boolean> {
    return (await this.file(path)) !== null;
  }

  /** "picked folder <name>". */
  describe(): string {
    return `picked folder ${this.root.name}`;
  }
}
