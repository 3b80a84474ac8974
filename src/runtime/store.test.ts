import { assertEquals } from "../../tests/assert.ts";
import { MemoryStore, subStore, tapAppends } from "./store.ts";

const text = (b: Uint8Array | null) => (b ? new TextDecoder().decode(b) : null);

Deno.test("store: a run folder as a store of its own; appends tapped", async () => {
  const root = new MemoryStore();
  const run = subStore(root, "runs/a");
  await run.write("checkpoints/g/latest.json", "{}");
  await run.append("metrics.jsonl", "1\n");
  await subStore(root, "runs/b").write("x", "y");
  assertEquals(await root.list("runs"), ["a", "b"]);
  assertEquals(await run.list(), ["checkpoints", "metrics.jsonl"]);
  assertEquals(await run.list("checkpoints"), ["g"]);
  assertEquals(text(await root.read("runs/a/metrics.jsonl")), "1\n");
  const seen: string[] = [];
  const tapped = tapAppends(run, (name, t) => seen.push(`${name}:${t}`));
  await tapped.append("samples.jsonl", "s\n");
  await tapped.write("other", "w");
  assertEquals(seen, ["samples.jsonl:s\n"]);
  assertEquals(text(await run.read("samples.jsonl")), "s\n");
  await run.remove("checkpoints");
  assertEquals(await run.list(), ["metrics.jsonl", "other", "samples.jsonl"]);
  assertEquals(await root.list("runs/b"), ["x"]);
});
