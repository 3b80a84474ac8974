// The bounded reader behind every local loader (issue 47 item 3: a symlink to /dev/zero grew
// `rlvr eval` to 19 GB; a FIFO hung it forever).
import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { fileDatabaseLoader } from "../runtime/sql-files.deno.ts";
import { DirStore } from "../runtime/store.deno.ts";
import { FileRefusedError, readFileBounded, readTextBounded } from "./files.deno.ts";
import { DirSource } from "./source.deno.ts";

async function mkfifo(path: string): Promise<boolean> {
  try {
    return (await new Deno.Command("mkfifo", { args: [path] }).output()).success;
  } catch {
    return false;
  }
}

Deno.test("files: a FIFO, a symlink to /dev/zero and a folder are refused by name, never read; a file over its cap is refused by size", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-files-" });
  try {
    await Deno.writeTextFile(`${dir}/ok.json`, '{"a": 1}');
    assertEquals(await readTextBounded(`${dir}/ok.json`), '{"a": 1}');
    assertEquals((await readFileBounded(`${dir}/ok.json`, { maxBytes: 8 })).length, 8);
    await assertRejects(
      () => readFileBounded(`${dir}/ok.json`, { maxBytes: 7, what: "questions file" }),
      /^questions file .*ok\.json is 0\.0 MiB, over the 0\.0 MiB limit/,
    );
    await Deno.symlink("/dev/zero", `${dir}/zero`);
    const e = await assertRejects(
      () => readFileBounded(`${dir}/zero`, { maxBytes: 2 ** 30, what: "database" }),
      /^database .*\/zero is a character device, not a regular file/,
    );
    assert(e instanceof FileRefusedError);
    await assertRejects(() => readTextBounded(dir), /is a folder, not a regular file/);
    await assertRejects(() => readTextBounded(`${dir}/absent`), /No such file|not found/i).then((err) =>
      assert(err instanceof Deno.errors.NotFound)
    );
    // A FIFO with no writer: opening it for reading would block forever.
    if (await mkfifo(`${dir}/fifo`)) {
      await assertRejects(
        () => readTextBounded(`${dir}/fifo`, { what: "notebook" }),
        /^notebook .*\/fifo is a FIFO \(named pipe\), not a regular file/,
      );
    } else {
      console.error("files test: mkfifo unavailable, FIFO case skipped");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("files: every loader goes through the bounded reader — model folder, database root, run store (issue 47 item 3)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-files-" });
  try {
    await Deno.symlink("/dev/zero", `${dir}/config.json`);
    await Deno.symlink("/dev/zero", `${dir}/model.safetensors`);
    const src = new DirSource(dir);
    await assertRejects(() => src.read("config.json"), /config\.json is a character device, not a regular file/);
    await assertRejects(() => src.read("model.safetensors"), /model\.safetensors is a character device/);
    await Deno.mkdir(`${dir}/db/zero`, { recursive: true });
    await Deno.symlink("/dev/zero", `${dir}/db/zero/zero.sqlite`);
    await Deno.mkdir(`${dir}/db/empty`);
    await Deno.writeFile(`${dir}/db/empty/empty.sqlite`, new Uint8Array());
    await Deno.mkdir(`${dir}/db/text`);
    await Deno.writeTextFile(`${dir}/db/text/text.sqlite`, "CREATE TABLE t(x);");
    const load = fileDatabaseLoader(`${dir}/db`);
    await assertRejects(() => load("zero"), /zero\.sqlite is a character device/);
    // Issue 47 item 13: a zero-byte .sqlite opened as an empty database and read "gold failed: no such table".
    await assertRejects(() => load("empty"), /empty\.sqlite is empty \(0 bytes\), not a SQLite database/);
    await assertRejects(() => load("text"), /text\.sqlite is not a SQLite database/);
    await Deno.mkdir(`${dir}/run`);
    await Deno.symlink("/dev/zero", `${dir}/run/latest.json`);
    await assertRejects(() => new DirStore(`${dir}/run`).read("latest.json"), /latest\.json is a character device/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
