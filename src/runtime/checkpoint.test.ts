import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { type Checkpoint, loadCheckpoint, saveCheckpoint } from "./checkpoint.ts";
import { DirStore } from "./store.deno.ts";
import { MemoryStore } from "./store.ts";

function sample(step: number): Checkpoint {
  const r = new Rng(step);
  r.next();
  return {
    step,
    cursor: step * 4,
    rng: { sampler: Array.from(r.state()) },
    tensors: new Map([["lora.0.q.A", { shape: [3, 5], data: new Rng(step + 1).uniformArray(15) }], [
      "adam.m.lora.0.q.A",
      { shape: [3, 5], data: new Float32Array(15).fill(step) },
    ]]),
    state: { scheduler: { visits: { q1: 2 } } },
  };
}

Deno.test("checkpoint: round trip, newest wins, old ones pruned, RNG continues identically", async () => {
  for (const store of [new MemoryStore(), new DirStore(await Deno.makeTempDir())]) {
    assertEquals(await loadCheckpoint(store, "run"), null);
    for (const step of [1, 2, 3]) await saveCheckpoint(store, "run", sample(step), 2);
    const ck = await loadCheckpoint(store, "run");
    assert(ck !== null);
    assertEquals(ck.step, 3);
    assertEquals(ck.cursor, 12);
    assertEquals(ck.state, { scheduler: { visits: { q1: 2 } } });
    assertEquals(ck.tensors.get("lora.0.q.A")!.data, sample(3).tensors.get("lora.0.q.A")!.data);
    const resumed = new Rng(new Uint32Array(ck.rng.sampler));
    const r = new Rng(3);
    r.next();
    assertEquals(resumed.next(), r.next());
    assertEquals((await store.list("run")).filter((n) => n.startsWith("ckpt-")), ["ckpt-00000002", "ckpt-00000003"]);
  }
});

Deno.test("checkpoint: a crash before latest.json is written leaves the previous checkpoint in force", async () => {
  const store = new MemoryStore();
  await saveCheckpoint(store, "", sample(5));
  // Simulate a crash half-way through saving step 6: its tensors are written, latest.json is not.
  await store.write("ckpt-00000006/tensors.safetensors", new Uint8Array([1, 2, 3]));
  const ck = await loadCheckpoint(store, "");
  assertEquals(ck?.step, 5);
});

Deno.test("checkpoint: a truncated newest checkpoint falls back to the previous one and says so; a garbage latest.json is named (issue 47 item 11)", async () => {
  for (const store of [new MemoryStore(), new DirStore(await Deno.makeTempDir())]) {
    for (const step of [1, 2]) await saveCheckpoint(store, "run", sample(step), 2);
    const tensors = (await store.read("run/ckpt-00000002/tensors.safetensors"))!;
    // A disk that lost the end of the newest tensors file.
    await store.write("run/ckpt-00000002/tensors.safetensors", tensors.subarray(0, tensors.length - 9));
    const notes: string[] = [];
    const ck = await loadCheckpoint(store, "run", (m) => notes.push(m));
    assertEquals(ck?.step, 1);
    assertEquals(ck?.tensors.get("lora.0.q.A")!.data, sample(1).tensors.get("lora.0.q.A")!.data);
    assertEquals(notes.length, 1);
    assert(
      /run\/ckpt-00000002\/tensors\.safetensors.*resuming from the previous checkpoint run\/ckpt-00000001 \(step 1\)/
        .test(notes[0]),
      notes[0],
    );
    // The resumed run saves step 2 again: the broken folder is replaced, and nothing newer lingers.
    await saveCheckpoint(store, "run", sample(2), 2);
    assertEquals((await loadCheckpoint(store, "run", (m) => notes.push(m)))?.step, 2);
    assertEquals(notes.length, 1);
    // Only the newest exists and it is unreadable: its own error, naming the file.
    await store.write("run/ckpt-00000002/state.json", '{"step": 2, "cur');
    await store.remove("run/ckpt-00000001");
    await assertRejects(
      () => loadCheckpoint(store, "run", () => {}),
      /run\/ckpt-00000002\/state\.json is not valid JSON/,
    );
    for (const garbage of ["\u0000\u0001garbage", "[1, 2]", '{"step": 2, "folder": "../../etc"}']) {
      await store.write("run/latest.json", garbage);
      await assertRejects(
        () => loadCheckpoint(store, "run"),
        /^run\/latest\.json is not (valid JSON|a checkpoint manifest)/,
      );
    }
  }
});
