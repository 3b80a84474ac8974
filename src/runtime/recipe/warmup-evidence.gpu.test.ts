// The warm-up with the definitions (sampleWithEvidence) on a tiny random model (lavapipe): samples
// are drawn from prompts with the questions' evidence, the training sequences carry the prompt cell's
// prompts without it (shorter), other methods refuse it; and GRPO's held-out checks on the split
// its evalSplit names.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { decodeMetrics } from "../../core/metrics.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { decodeSamples } from "../records.ts";
import { MemoryStore } from "../store.ts";
import { denoEnv } from "./env.deno.ts";
import { tinyDatasetCell, tinyPromptCorpus, writeTinyDataset, writeVaryingLengthModel } from "./fixtures.deno.ts";
import { runNotebook } from "./runner.ts";

const EVIDENCE = "pets refers to the table of animals with kind and age";

async function setup(seed = 5) {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-warm-ev-" });
  await writeTinyDataset(`${dir}/data`);
  // Every question gets the same definition as its evidence.
  for (const f of ["train", "test"]) {
    const lines = (await Deno.readTextFile(`${dir}/data/${f}.jsonl`)).trim().split("\n").map((l) =>
      JSON.stringify({ ...JSON.parse(l), evidence: EVIDENCE })
    );
    await Deno.writeTextFile(`${dir}/data/${f}.jsonl`, lines.join("\n") + "\n");
  }
  await writeVaryingLengthModel(`${dir}/model`, { seed, corpus: await tinyPromptCorpus(`${dir}/data`, ["omnisql@1"]) });
  return dir;
}

function notebook(warmup: Record<string, unknown>) {
  const spec = {
    components: [{ name: "error_penalty", weight: 1 }, { name: "length", weight: 1, params: { maxTokens: 2 } }],
  };
  const parsed = parseNotebook({
    version: 1,
    title: "warm-up with the definitions",
    cells: [
      tinyDatasetCell({ devFraction: 0, limit: 4 }),
      { id: "model", type: "model", params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 } },
      { id: "prompt", type: "prompt", params: { template: "omnisql@1", evidence: false } },
      { id: "reward", type: "reward", params: { spec } },
      {
        id: "warm",
        type: "warmup",
        params: { rounds: 1, samplesPerQuestion: 2, lr: 0.002, maxNewTokens: 3, exportSamples: "all", ...warmup },
      },
    ],
  });
  assert(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
  return parsed.doc;
}

Deno.test({
  name:
    "warm-up sampleWithEvidence: sampled with the definitions, trained on the prompts without them; refused outside rft",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await setup();
    const doc = notebook({ method: "rft", sampleWithEvidence: true });
    const store = new MemoryStore();
    await runNotebook(doc, { ...denoEnv({ out: dir, base: dir }), store }, { opts: { samplesPerStep: 64 } });
    const text = async (name: string) => new TextDecoder().decode((await store.read(name)) ?? new Uint8Array());
    const samples = decodeSamples(await text("samples.jsonl")).records.filter((r) => r.phase === "warmup");
    assertEquals(samples.length, 8);
    assert(samples.every((r) => r.prompt.includes(EVIDENCE)), "sampled with the evidence in the prompt");
    const m = decodeMetrics(await text("metrics.jsonl")).records.find((r) => r.phase === "warmup");
    const sampleLen = m?.extra?.samplePromptTokens ?? 0, trainLen = m?.extra?.trainPromptTokens ?? 0;
    assert(
      trainLen > 0 && trainLen < sampleLen,
      `trained on shorter prompts (${trainLen}) than sampled with (${sampleLen})`,
    );
    const plain = notebook({ method: "rft" });
    const store2 = new MemoryStore();
    await runNotebook(plain, { ...denoEnv({ out: dir, base: dir }), store: store2 }, { opts: { samplesPerStep: 64 } });
    const m2 = decodeMetrics(new TextDecoder().decode((await store2.read("metrics.jsonl")) ?? new Uint8Array())).records
      .find((r) => r.phase === "warmup");
    assertEquals(
      m2?.extra?.trainPromptTokens,
      m2?.extra?.samplePromptTokens,
      "without it, trained on the prompts sampled",
    );
    assert((m2?.extra?.samplePromptTokens ?? 0) === trainLen, "the prompt cell's prompts are the ones trained on");
    const awpg = notebook({ method: "awpg", sampleWithEvidence: true });
    await assertRejects(
      () => runNotebook(awpg, { ...denoEnv({ out: dir, base: dir }), store: new MemoryStore() }),
      /sampleWithEvidence needs method "rft"/,
    );
  },
});

Deno.test({
  name:
    "warm-up rftKeep: 'correct' trains on the correct samples only, 'better' (the default) also on those above their group's mean reward; refused outside rft; rftPerQuestion 1 keeps one per question",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    // A model whose completions end after 1-4 tokens (seed 3, as run.gpu.test.ts): the length reward varies within groups.
    const dir = await setup(3);
    const run = async (warmup: Record<string, unknown>) => {
      const store = new MemoryStore();
      await runNotebook(notebook({ method: "rft", samplesPerQuestion: 4, maxNewTokens: 4, ...warmup }), {
        ...denoEnv({ out: dir, base: dir }),
        store,
      }, { opts: { samplesPerStep: 64 } });
      const text = async (name: string) => new TextDecoder().decode((await store.read(name)) ?? new Uint8Array());
      const samples = decodeSamples(await text("samples.jsonl")).records.filter((r) => r.phase === "warmup");
      const m = decodeMetrics(await text("metrics.jsonl")).records.find((r) => r.phase === "warmup");
      return { samples, items: m?.extra?.trainItems };
    };
    const better = await run({});
    const correct = await run({ rftKeep: "correct" });
    // Same seed: the same samples both times; only the kept set differs.
    assertEquals(correct.samples.map((r) => r.completion), better.samples.map((r) => r.completion));
    const groups = new Map<string, number[]>();
    for (const r of better.samples) groups.set(r.taskId, [...(groups.get(r.taskId) ?? []), r.reward.total]);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const above = better.samples.filter((r) =>
      r.completionTokens > 0 && (r.correct || r.reward.total > mean(groups.get(r.taskId)!) + 1e-9)
    ).length;
    const right = correct.samples.filter((r) =>
      r.completionTokens > 0 && r.correct
    ).length;
    assertEquals(better.items, above, "better: correct or above the group's mean");
    assertEquals(correct.items, right, "correct: only the correct ones");
    assert(
      above > right,
      `the fixture has samples above their group's mean that are not correct (${above} vs ${right})`,
    );
    // rftPerQuestion 1 over 16 draws per question: one kept answer per question that has any (the same draws as uncapped).
    const many = await run({ samplesPerQuestion: 16 });
    const capped = await run({ samplesPerQuestion: 16, rftPerQuestion: 1 });
    assertEquals(capped.samples.map((r) => r.completion), many.samples.map((r) => r.completion));
    const g16 = new Map<string, number[]>();
    for (const r of many.samples) g16.set(r.taskId, [...(g16.get(r.taskId) ?? []), r.reward.total]);
    const kept16 = many.samples.filter((r) =>
      r.completionTokens > 0 && (r.correct || r.reward.total > mean(g16.get(r.taskId)!) + 1e-9)
    );
    const withKept = new Set(kept16.map((r) => r.taskId));
    assertEquals(many.items, kept16.length);
    assertEquals(capped.items, withKept.size, "rftPerQuestion 1: one per question with a kept sample");
    assert(
      withKept.size < kept16.length,
      `the fixture keeps several samples of some question (${withKept.size} questions, ${kept16.length} samples)`,
    );
    const parsed = parseNotebook({
      version: 1,
      title: "x",
      cells: [{ id: "w", type: "warmup", params: { method: "awpg", rftKeep: "correct" } }],
    });
    assert(
      !parsed.ok && JSON.stringify(parsed.errors).includes("rftKeep chooses the samples of method"),
      JSON.stringify(!parsed.ok && parsed.errors),
    );
  },
});

Deno.test({
  name: "grpo evalSplit: the held-out checks run on the named split",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await setup();
    const parsed = parseNotebook({
      version: 1,
      title: "eval split",
      cells: [
        tinyDatasetCell({ devFraction: 0.5, limit: 4 }),
        {
          id: "model",
          type: "model",
          params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 },
        },
        { id: "prompt", type: "prompt", params: { template: "omnisql@1" } },
        {
          id: "reward",
          type: "reward",
          params: { spec: { components: [{ name: "length", weight: 1, params: { maxTokens: 2 } }] } },
        },
        {
          id: "grpo",
          type: "grpo",
          params: {
            G: 2,
            steps: 1,
            batchQuestions: 1,
            maxNewTokens: 3,
            lr: 0.002,
            evalEvery: 1,
            evalN: 8,
            evalSplit: "train",
            dropEqualGroups: false,
          },
        },
      ],
    });
    assert(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
    const store = new MemoryStore();
    await runNotebook(parsed.doc, { ...denoEnv({ out: dir, base: dir }), store });
    const evals = decodeMetrics(new TextDecoder().decode((await store.read("metrics.jsonl")) ?? new Uint8Array()))
      .records.filter((r) => r.phase === "eval");
    // devFraction 0.5 of 4: train keeps 2, dev 2; the check ran on train (2 questions), not dev.
    assertEquals(evals.map((r) => r.extra?.questions), [2]);
  },
});
