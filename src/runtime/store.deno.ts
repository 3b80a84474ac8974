// A FileStore over a directory, for headless runs under Deno. Writes go to a temporary file
// renamed into place, so a crash mid-write never leaves a half-written file under the real name.
import { FILE_LIMITS, readFileBounded } from "../model/files.deno.ts";
import { type FileStore, untornLength } from "./store.ts";

/**
 * Cuts a torn last line (a crash or power cut mid-append leaves a line without its newline) off
 * the file at `path`, so the next append starts a line of its own instead of fusing with it and
 * both being lost. Returns the bytes cut.
 */
export async function cutTornTail(path: string): Promise<number> {
  let f: Deno.FsFile;
  try {
    f = await Deno.open(path, { read: true, write: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return 0;
    throw e;
  }
  using file = f;
  const info = await file.stat();
  if (!info.isFile) return 0;
  const keep = await untornLength(info.size, async (start, end) => {
    const buf = new Uint8Array(end - start);
    await file.seek(start, Deno.SeekMode.Start);
    let got = 0;
    while (got < buf.length) {
      const n = await file.read(buf.subarray(got));
      if (n === null) break;
      got += n;
    }
    return buf.subarray(0, got);
  });
  if (keep < info.size) await file.truncate(keep);
  return info.size - keep;
}

/** A store rooted at directory `root`. */
export class DirStore implements FileStore {
  readonly kind = "dir" as const;
  /** Files whose tail was checked for a torn line since this store opened them. */
  private readonly checkedTails = new Set<string>();
  constructor(readonly root: string) {}

  private path(name: string): string {
    if (name.split("/").includes("..")) throw new Error(`bad file name "${name}"`);
    return `${this.root}/${name}`;
  }

  async write(name: string, data: Uint8Array | string): Promise<void> {
    const p = this.path(name);
    await Deno.mkdir(p.slice(0, p.lastIndexOf("/")), { recursive: true });
    const tmp = `${p}.tmp-${crypto.randomUUID().slice(0, 8)}`;
    if (typeof data === "string") await Deno.writeTextFile(tmp, data);
    else await Deno.writeFile(tmp, data);
    await Deno.rename(tmp, p);
  }

  async read(name: string): Promise<Uint8Array | null> {
    try {
      // A run's own files, but still never a FIFO or a device planted in the folder.
      return await readFileBounded(this.path(name), { maxBytes: FILE_LIMITS.tensors, what: "run file" });
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  }

  async append(name: string, text: string): Promise<void> {
    const p = this.path(name);
    await Deno.mkdir(p.slice(0, p.lastIndexOf("/")), { recursive: true });
    if (!this.checkedTails.has(p)) {
      // Once per file and store: a torn line can only predate this process (a resumed run).
      await cutTornTail(p);
      this.checkedTails.add(p);
    }
    await Deno.writeTextFile(p, text, { append: true });
  }

  async list(prefix = ""): Promise<string[]> {
    const names: string[] = [];
    try {
      for await (const e of Deno.readDir(prefix ? this.path(prefix) : this.root)) {
        if (!e.name.includes(".tmp-")) names.push(e.name);
      }
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw e;
    }
    return names.sort();
  }

  async remove(name: string): Promise<void> {
    await Deno.remove(this.path(name), { recursive: true }).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
  }
}
