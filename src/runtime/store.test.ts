import { assertEquals } from "../../tests/assert.ts";
import { decodeMetrics, encodeMetrics, type MetricsRecord } from "../core/metrics.ts";
import { DirStore } from "./store.deno.ts";
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

Deno.test("store: a torn last line of metrics.jsonl is cut before the next append, which is kept whole (issue 47 item 10)", async () => {
  // A power cut mid-write leaves a line without its newline; the resumed run's next record used to fuse with it and be lost.
  const rec = (step: number) =>
    encodeMetrics({ v: 1, phase: "grpo", step, time: step, rewardMean: 0.5 } as MetricsRecord);
  const torn = rec(1) + rec(2).slice(0, 17);
  const dir = await Deno.makeTempDir({ prefix: "rlvr-store-" });
  try {
    const mem = new MemoryStore();
    await mem.write("metrics.jsonl", torn);
    await Deno.writeTextFile(`${dir}/metrics.jsonl`, torn);
    await Deno.writeTextFile(`${dir}/whole.jsonl`, "x".repeat(70_000)); // no newline at all, longer than one read-back chunk
    const disk = new DirStore(dir);
    for (const store of [mem, disk]) {
      await store.append("metrics.jsonl", rec(3));
      await store.append("metrics.jsonl", rec(4));
      const d = decodeMetrics(text(await store.read("metrics.jsonl")) ?? "");
      assertEquals({ steps: d.records.map((r) => r.step), errors: d.errors, truncated: d.truncated }, {
        steps: [1, 3, 4],
        errors: [],
        truncated: false,
      }, store.kind);
    }
    await disk.append("whole.jsonl", "y\n");
    assertEquals(text(await disk.read("whole.jsonl")), "y\n");
    // A file that ends with its newline is left as it is.
    await disk.append("fresh.jsonl", "a\n");
    await new DirStore(dir).append("fresh.jsonl", "b\n");
    assertEquals(text(await disk.read("fresh.jsonl")), "a\nb\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
