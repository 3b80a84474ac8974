// A FileStore over a directory, for headless runs under Deno. Writes go to a temporary file
// renamed into place, so a crash mid-write never leaves a half-written file under the real name.
import type { FileStore } from "./store.ts";

/** A store rooted at directory `root`. */
export class DirStore implements FileStore {
  readonly kind = "dir" as const;
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
      return await Deno.readFile(this.path(name));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  }

  async append(name: string, text: string): Promise<void> {
    const p = this.path(name);
    await Deno.mkdir(p.slice(0, p.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(p, text, { append: true });
  }

  async list(prefix = ""): Promise<string[]> {
    const names: string[] = [];
    try {
      for await (const e of Deno.readDir(prefix ? this.path(prefix) : this.root)) if (!e.name.includes(".tmp-")) names.push(e.name);
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
