// Where runs keep their files: a directory under Deno, the Origin Private File System in the
// browser, memory in tests. Names are flat paths with '/' separators.

/** A small file store. `write` replaces the whole file. */
export interface FileStore {
  readonly kind: "dir" | "opfs" | "memory";
  write(name: string, data: Uint8Array | string): Promise<void>;
  /** The file's bytes, or null when it does not exist. */
  read(name: string): Promise<Uint8Array | null>;
  /** Appends to a file (the metrics stream), creating it when absent. */
  append(name: string, text: string): Promise<void>;
  /** Names directly under `prefix` ('' for the root), files and folders alike. */
  list(prefix?: string): Promise<string[]>;
  /** Removes a file or a folder with its contents; absent is not an error. */
  remove(name: string): Promise<void>;
}

const enc = new TextEncoder();

/**
 * How many bytes of a JSON Lines file of `size` bytes to keep so that it ends at a line break:
 * a crash or power cut mid-append leaves a torn last line without its newline, and the next
 * append would fuse with it (both records lost). `readAt` reads bytes [start, end).
 */
export async function untornLength(
  size: number,
  readAt: (start: number, end: number) => Promise<Uint8Array>,
): Promise<number> {
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - 64 * 1024);
    const chunk = await readAt(start, end);
    if (end === size && chunk[chunk.length - 1] === 10) return size;
    const at = chunk.lastIndexOf(10);
    if (at >= 0) return start + at + 1;
    end = start;
  }
  return 0;
}

/** A store in memory, for tests and for runs that keep nothing. */
export class MemoryStore implements FileStore {
  readonly kind = "memory" as const;
  readonly files = new Map<string, Uint8Array>();

  write(name: string, data: Uint8Array | string): Promise<void> {
    this.files.set(name, typeof data === "string" ? enc.encode(data) : data.slice());
    return Promise.resolve();
  }

  read(name: string): Promise<Uint8Array | null> {
    return Promise.resolve(this.files.get(name)?.slice() ?? null);
  }

  async append(name: string, text: string): Promise<void> {
    const whole = this.files.get(name) ?? new Uint8Array();
    // A torn last line (a crash mid-append) is cut off first, as the other stores do.
    const old = whole.subarray(0, await untornLength(whole.length, (a, b) => Promise.resolve(whole.subarray(a, b))));
    const add = enc.encode(text);
    const both = new Uint8Array(old.length + add.length);
    both.set(old);
    both.set(add, old.length);
    this.files.set(name, both);
  }

  list(prefix = ""): Promise<string[]> {
    const p = prefix && !prefix.endsWith("/") ? prefix + "/" : prefix;
    const names = new Set<string>();
    for (const k of this.files.keys()) if (k.startsWith(p)) names.add(k.slice(p.length).split("/")[0]);
    return Promise.resolve([...names].sort());
  }

  remove(name: string): Promise<void> {
    for (const k of [...this.files.keys()]) if (k === name || k.startsWith(name + "/")) this.files.delete(k);
    return Promise.resolve();
  }
}

/** A store in the browser's Origin Private File System under `root` (survives a tab reload). */
export class OpfsStore implements FileStore {
  readonly kind = "opfs" as const;
  /** Files whose tail was checked for a torn line since this store opened them. */
  private readonly checkedTails = new Set<string>();
  constructor(private readonly root: string) {}

  private async dir(path: string[], create: boolean): Promise<FileSystemDirectoryHandle | null> {
    let d = await navigator.storage.getDirectory();
    for (const part of [...this.root.split("/"), ...path].filter(Boolean)) {
      try {
        d = await d.getDirectoryHandle(part, { create });
      } catch {
        return null;
      }
    }
    return d;
  }

  private split(name: string): [string[], string] {
    const parts = name.split("/").filter(Boolean);
    const file = parts.pop();
    if (!file) throw new Error(`bad file name "${name}"`);
    return [parts, file];
  }

  async write(name: string, data: Uint8Array | string): Promise<void> {
    const [path, file] = this.split(name);
    const d = await this.dir(path, true);
    if (!d) throw new Error(`cannot create folder for ${name} in the browser's storage`);
    const w = await (await d.getFileHandle(file, { create: true })).createWritable();
    await w.write(typeof data === "string" ? data : (data as Uint8Array<ArrayBuffer>));
    await w.close();
  }

  async read(name: string): Promise<Uint8Array | null> {
    const [path, file] = this.split(name);
    const d = await this.dir(path, false);
    if (!d) return null;
    try {
      return new Uint8Array(await (await (await d.getFileHandle(file)).getFile()).arrayBuffer());
    } catch {
      return null;
    }
  }

  async append(name: string, text: string): Promise<void> {
    const [path, file] = this.split(name);
    const d = await this.dir(path, true);
    if (!d) throw new Error(`cannot create folder for ${name} in the browser's storage`);
    const h = await d.getFileHandle(file, { create: true });
    const blob = await h.getFile();
    let size = blob.size;
    const w = await h.createWritable({ keepExistingData: true });
    if (!this.checkedTails.has(name)) {
      // Once per file and store: a torn line can only predate this page (a resumed run).
      const keep = await untornLength(size, async (a, b) => new Uint8Array(await blob.slice(a, b).arrayBuffer()));
      if (keep < size) await w.truncate(keep);
      size = keep;
      this.checkedTails.add(name);
    }
    await w.write({ type: "write", position: size, data: text });
    await w.close();
  }

  async list(prefix = ""): Promise<string[]> {
    const d = await this.dir(prefix.split("/").filter(Boolean), false);
    if (!d) return [];
    const names: string[] = [];
    for await (const key of (d as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(key);
    return names.sort();
  }

  async remove(name: string): Promise<void> {
    const [path, file] = this.split(name);
    const d = await this.dir(path, false);
    await d?.removeEntry(file, { recursive: true }).catch(() => undefined);
  }
}

/** The files of `store` under folder `prefix`, as a store of their own (a run folder in a store of runs). */
export function subStore(store: FileStore, prefix: string): FileStore {
  const p = prefix.replace(/\/+$/, "");
  if (!p || p.split("/").includes("..")) throw new Error(`bad store folder "${prefix}"`);
  const at = (name: string) => `${p}/${name}`;
  return {
    kind: store.kind,
    write: (name, data) => store.write(at(name), data),
    read: (name) => store.read(at(name)),
    append: (name, text) => store.append(at(name), text),
    list: (sub = "") => store.list(sub ? at(sub) : p),
    remove: (name) => store.remove(at(name)),
  };
}

/** `store` with a listener told of every append (the page streams samples.jsonl lines this way). */
export function tapAppends(store: FileStore, onAppend: (name: string, text: string) => void): FileStore {
  return {
    kind: store.kind,
    write: (name, data) => store.write(name, data),
    read: (name) => store.read(name),
    list: (prefix) => store.list(prefix),
    remove: (name) => store.remove(name),
    async append(name, text) {
      await store.append(name, text);
      onAppend(name, text);
    },
  };
}
