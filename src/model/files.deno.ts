// Bounded reads of local files (Deno): the one reader behind every loader of databases, models,
// adapters, tokenizers, questions, prompts, notebooks and checkpoints. A path that is not a regular
// file (a FIFO would block forever, a symlink to /dev/zero never ends) is refused before it is
// opened for reading, and a file larger than its kind's cap is refused by its size, so no input
// file can make a command read without limit.

/** Size caps by kind of file, in bytes. */
export const FILE_LIMITS = {
  /** JSON, JSONL, Jinja and text inputs: V8 strings stop at about 512 MiB, so past this no parse could succeed. */
  text: 256 * 2 ** 20,
  /** SQLite databases: sql.js holds the whole file in 32-bit WebAssembly memory. */
  database: 2 * 2 ** 30,
  /** One safetensors file (a model shard, an adapter, a checkpoint's tensors). */
  tensors: 64 * 2 ** 30,
} as const;

/** The kind of a file whose name tells it: tensors for safetensors, text for the rest of a model folder. */
export function limitFor(path: string): number {
  return /\.safetensors$/i.test(path) ? FILE_LIMITS.tensors : FILE_LIMITS.text;
}

/** Raised for a file that is there but may not be read: not a regular file, or too large. */
export class FileRefusedError extends Error {
  constructor(msg: string) {
    super(msg);
    this.name = "FileRefusedError";
  }
}

function kindOf(i: Deno.FileInfo): string {
  if (i.isDirectory) return "a folder";
  if (i.isFifo) return "a FIFO (named pipe)";
  if (i.isCharDevice) return "a character device";
  if (i.isBlockDevice) return "a block device";
  if (i.isSocket) return "a socket";
  return "not a regular file";
}

function mib(n: number): string {
  return n >= 2 ** 30
    ? `${(n / 2 ** 30).toFixed(n % 2 ** 30 ? 1 : 0)} GiB`
    : `${(n / 2 ** 20).toFixed(n % 2 ** 20 ? 1 : 0)} MiB`;
}

function checkInfo(path: string, i: Deno.FileInfo, maxBytes: number, what: string): void {
  if (!i.isFile) throw new FileRefusedError(`${what} ${path} is ${kindOf(i)}, not a regular file; it is not read`);
  if (i.size > maxBytes) {
    throw new FileRefusedError(
      `${what} ${path} is ${mib(i.size)}, over the ${mib(maxBytes)} limit for this kind of file`,
    );
  }
}

const CHUNK = 16 * 2 ** 20;

/**
 * The bytes of the regular file at `path` (symlinks followed), at most `maxBytes` of them. A missing
 * file rejects with Deno.errors.NotFound as Deno.readFile does; anything else that is not a regular
 * file, or is larger than `maxBytes`, rejects with a FileRefusedError naming the file. `what`
 * ("database", "questions file") starts the message.
 */
export async function readFileBounded(
  path: string,
  o: { maxBytes: number; what?: string; signal?: AbortSignal },
): Promise<Uint8Array> {
  const what = o.what ?? "file";
  // stat first: opening a FIFO for reading blocks until a writer comes, so it must never be opened.
  checkInfo(path, await Deno.stat(path), o.maxBytes, what);
  using f = await Deno.open(path, { read: true });
  // Again on the open handle: the path may have been swapped since the stat.
  const info = await f.stat();
  checkInfo(path, info, o.maxBytes, what);
  const out = new Uint8Array(info.size);
  let got = 0;
  while (got < out.length) {
    if (o.signal?.aborted) throw o.signal.reason ?? new DOMException("aborted", "AbortError");
    const n = await f.read(out.subarray(got, Math.min(out.length, got + CHUNK)));
    if (n === null) break;
    got += n;
  }
  if (got < out.length) return out.subarray(0, got);
  // A file that grew after the stat is read no further than its size then: one byte tells.
  if ((await f.read(new Uint8Array(1))) !== null) {
    throw new FileRefusedError(`${what} ${path} changed size while being read`);
  }
  return out;
}

/** The UTF-8 text of a regular file at `path`, within the text cap (or `maxBytes`); errors as readFileBounded. */
export async function readTextBounded(
  path: string,
  o: { maxBytes?: number; what?: string; signal?: AbortSignal } = {},
): Promise<string> {
  const bytes = await readFileBounded(path, {
    maxBytes: o.maxBytes ?? FILE_LIMITS.text,
    what: o.what,
    signal: o.signal,
  });
  return new TextDecoder().decode(bytes);
}
