// Model sources over HTTP (any URL, the Hugging Face Hub) with an optional byte cache (OPFS in the
// browser), and folders the user picked (FileList from <input webkitdirectory>, or a File System
// Access directory handle). Nothing here touches the DOM at import time, so Deno can test it.
import { checkRelativePath, MissingFileError, type ModelSource, type ProgressFn } from "./source.ts";

/** A persistent byte store keyed by URL (OPFS in the browser, a Map in tests). */
export interface ByteCache {
  get(key: string): Promise<Uint8Array | null>;
  put(key: string, bytes: Uint8Array): Promise<void>;
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
  };
}

/** A ByteCache in the Origin Private File System, one file per URL under `dirName`. */
export function opfsCache(dirName = "rlvr-model-cache"): ByteCache {
  // OPFS file names cannot hold "/", so the URL is percent-encoded into one flat name.
  const fileName = (key: string) => encodeURIComponent(key);
  const dir = async () => (await navigator.storage.getDirectory()).getDirectoryHandle(dirName, { create: true });
  return {
    async get(key) {
      try {
        const fh = await (await dir()).getFileHandle(fileName(key));
        return new Uint8Array(await (await fh.getFile()).arrayBuffer());
      } catch (e) {
        if (e instanceof DOMException && e.name === "NotFoundError") return null;
        throw e;
      }
    },
    async put(key, bytes) {
      const d = await dir();
      // A writable stream commits only on close(), so an interrupted write leaves no partial entry.
      const fh = await d.getFileHandle(fileName(key), { create: true });
      const w = await fh.createWritable();
      await w.write(new Uint8Array(bytes));
      await w.close();
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
}

/** Reads `${base}/${path}` over HTTP, streaming with progress, through the cache when given. */
export class UrlSource implements ModelSource {
  private readonly base: string;
  private readonly fetchFn: typeof fetch;
  constructor(base: string, private o: UrlSourceOptions = {}) {
    this.base = base.replace(/\/+$/, "");
    this.fetchFn = o.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The URL of one file. */
  url(path: string): string {
    return `${this.base}/${checkRelativePath(path).split("/").map(encodeURIComponent).join("/")}`;
  }

  /** Downloads (or reads from the cache) one file. */
  async read(path: string, onProgress?: ProgressFn): Promise<Uint8Array> {
    const url = this.url(path);
    const cached = await this.o.cache?.get(url);
    if (cached) {
      onProgress?.(cached.byteLength, cached.byteLength);
      return cached;
    }
    const res = await this.fetchFn(url, { headers: this.o.headers });
    if (res.status === 404) {
      await res.body?.cancel();
      throw new MissingFileError(path, this.describe(), `HTTP 404 for ${url}`);
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`fetching ${url}: HTTP ${res.status} ${res.statusText}${accessHint(res.status)}`);
    }
    const lenHeader = res.headers.get("content-length");
    const total = lenHeader === null ? null : Number(lenHeader);
    const bytes = await readBody(res, total, onProgress);
    await this.o.cache?.put(url, bytes);
    return bytes;
  }

  /** HEAD request (cache first); 404 means absent. */
  async exists(path: string): Promise<boolean> {
    const url = this.url(path);
    if (await this.o.cache?.get(url)) return true;
    const res = await this.fetchFn(url, { method: "HEAD", headers: this.o.headers });
    await res.body?.cancel();
    if (res.status === 404) return false;
    if (res.ok) return true;
    throw new Error(`checking ${url}: HTTP ${res.status} ${res.statusText}${accessHint(res.status)}`);
  }

  /** The label or base URL. */
  describe(): string {
    return this.o.label ?? this.base;
  }
}

function accessHint(status: number): string {
  return status === 401 || status === 403 ? " (a gated or private repository needs an access token: pass headers { Authorization: \"Bearer hf_...\" })" : "";
}

async function readBody(res: Response, total: number | null, onProgress?: ProgressFn): Promise<Uint8Array> {
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
export function hubSource(repo: string, o: UrlSourceOptions & { revision?: string; endpoint?: string } = {}): UrlSource {
  if (!/^[\w.-]+\/[\w.-]+$/.test(repo)) throw new Error(`Hugging Face repo id ${JSON.stringify(repo)} must look like "owner/name"`);
  const rev = o.revision ?? "main";
  const endpoint = (o.endpoint ?? "https://huggingface.co").replace(/\/+$/, "");
  return new UrlSource(`${endpoint}/${repo}/resolve/${encodeURIComponent(rev)}`, { ...o, label: o.label ?? `Hugging Face Hub ${repo}@${rev}` });
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
  async read(path: string, onProgress?: ProgressFn): Promise<Uint8Array> {
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
  async read(path: string, onProgress?: ProgressFn): Promise<Uint8Array> {
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
