// A model folder on disk (Deno).
import { limitFor, readFileBounded } from "./files.deno.ts";
import { checkRelativePath, MissingFileError, type ModelSource, type ProgressFn, throwIfAborted } from "./source.ts";

/** Reads model files from a local directory. */
export class DirSource implements ModelSource {
  constructor(readonly dir: string) {}

  /** Reads a regular file within its kind's size cap; progress is reported once, at the end. */
  async read(path: string, onProgress?: ProgressFn, signal?: AbortSignal): Promise<Uint8Array> {
    throwIfAborted(signal);
    try {
      const full = `${this.dir}/${checkRelativePath(path)}`;
      const bytes = await readFileBounded(full, { maxBytes: limitFor(path), what: "model file", signal });
      onProgress?.(bytes.byteLength, bytes.byteLength);
      return bytes;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) throw new MissingFileError(path, this.describe());
      throwIfAborted(signal);
      throw e;
    }
  }

  /** Whether the file exists as a regular file. */
  async exists(path: string): Promise<boolean> {
    try {
      return (await Deno.stat(`${this.dir}/${checkRelativePath(path)}`)).isFile;
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return false;
      throw e;
    }
  }

  /** "directory <path>". */
  describe(): string {
    return `directory ${this.dir}`;
  }
}
