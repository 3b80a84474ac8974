// Where model files come from: a directory (Deno), a URL or the Hugging Face Hub (browser and
// Deno), a folder the user picked (browser), or memory (tests). Paths are relative to the model
// root, with "/" separators.

/** Download or read progress: bytes so far and the total when known. */
export type ProgressFn = (loaded: number, total: number | null) => void;

/** A read-only model folder. */
export interface ModelSource {
  /**
   * The file's bytes; throws MissingFileError when it is absent. An aborted `signal` rejects with
   * its reason (before the read, or mid-download where the source streams).
   */
  read(path: string, onProgress?: ProgressFn, signal?: AbortSignal): Promise<Uint8Array>;
  /** Whether the file exists. */
  exists(path: string): Promise<boolean>;
  /** Human-readable origin for messages ("directory /models/x", "https://..."). */
  describe(): string;
  /** Bytes this source downloaded and took from its cache so far (sources that download; others leave it out). */
  transferred?(): TransferStats;
}

/** What a downloading source moved: over the network, and from its cache (OPFS). */
export interface TransferStats {
  downloadedBytes: number;
  cachedBytes: number;
  /** Whether the source keeps files in a cache of its own (else "downloaded" may have come from the HTTP cache). */
  viaCache: boolean;
}

/** Rejects with the signal's reason when it was aborted (Stop while a model loads). */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason ?? new DOMException("aborted", "AbortError");
}

/** Raised when a model file is absent; names the file and the source. */
export class MissingFileError extends Error {
  readonly file: string;
  readonly source: string;
  constructor(file: string, source: string, detail = "") {
    super(`model file ${file} not found in ${source}${detail ? ` (${detail})` : ""}`);
    this.name = "MissingFileError";
    this.file = file;
    this.source = source;
  }
}

/** Rejects absolute paths and `..` segments so a source never reads outside its root. */
export function checkRelativePath(path: string): string {
  const parts = path.split("/");
  if (path.startsWith("/") || parts.some((p) => p === ".." || p === "")) {
    throw new Error(`model file path ${JSON.stringify(path)} must be relative, without '..' or empty segments`);
  }
  return path;
}

/** A model folder held in memory (tests, generated models, unpacked archives). */
export class MemorySource implements ModelSource {
  constructor(private files: Map<string, Uint8Array>, private name = "memory") {}

  /** Reads a file from the map. */
  read(path: string, onProgress?: ProgressFn, signal?: AbortSignal): Promise<Uint8Array> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const f = this.files.get(checkRelativePath(path));
    if (!f) return Promise.reject(new MissingFileError(path, this.describe()));
    onProgress?.(f.byteLength, f.byteLength);
    return Promise.resolve(f);
  }

  /** Whether the map has the file. */
  exists(path: string): Promise<boolean> {
    return Promise.resolve(this.files.has(checkRelativePath(path)));
  }

  /** "memory folder <name>". */
  describe(): string {
    return `memory folder ${this.name}`;
  }
}

/** Reads a UTF-8 JSON file from a source, with the file and source in parse errors. */
export async function readJson(src: ModelSource, path: string, signal?: AbortSignal): Promise<unknown> {
  const text = new TextDecoder().decode(await src.read(path, undefined, signal));
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${path} in ${src.describe()} is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
}
