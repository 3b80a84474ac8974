// The sft warm-up on a tiny random model (lavapipe), on a gold-to-CoCTE dataset file (half the
// lines with their `completion`, half without, so both target sources are used): one round raises
// the mean token log-probability of the gold targets under the cell's prompts, measured apart from
// the run on a second runtime with the trainer's log-prob function, before (the fresh adapter) and
// after (the round's checkpoint); the report's own figures agree with it. Run again into the same
// store, the finished round is not redone.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { decodeMetrics } from "../../core/metrics.ts";
import type { DatasetParams, ModelParams, PromptParams } from "../../core/notebook-params.ts";
import { parseNotebook } from "../../core/notebook.ts";
import type { Task } from "../../core/types.ts";
import { sampleLogprobs } from "../../gpu/trainer/grpo-step.ts";
import { loadCheckpoint } from "../checkpoint.ts";
import { cocteDatasetRecord } from "../cocte-dataset.ts";
import { promptOpensThink, type WarmupReport } from "../records.ts";
import { MemoryStore } from "../store.ts";
import { denoEnv } from "./env.deno.ts";
import { tinyPromptCorpus, writeTinyDataset, writeVaryingLengthModel } from "./fixtures.deno.ts";
import { ModelRuntime } from "./model-runtime.ts";
import { cachedSchemas, Prompter } from "./prompting.ts";
import { runNotebook } from "./runner.ts";
import { sftSequence, sftTarget, targetLogprob } from "./sft-targets.ts";

const TEMPLATE = "chain-of-ctes@1";
const chain = (gold: string) =>
  `WITH\n  -- the rows the question asks for\n  step_1 AS (\n    ${gold}\n  )\nSELECT * FROM step_1`;

/**
 * A temp folder with the tiny dataset, its training questions also as data/cocte.jsonl — even lines as
 * `rlvr cocte --dataset` writes them (with `completion`), odd ones plain rlvr lines — and a tiny model
 * whose vocabulary covers `template`'s prompts and the chains.
 */
async function mixedCocteSetup(prefix: string, template: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  await writeTinyDataset(`${dir}/data`);
  const train: Task[] = (await Deno.readTextFile(`${dir}/data/train.jsonl`)).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  const lines = train.map((t, i) =>
    JSON.stringify(i % 2 === 0 ? cocteDatasetRecord(t, chain(t.gold_sql), [{ name: "step_1", sql: t.gold_sql }]) : t)
  );
  await Deno.writeTextFile(`${dir}/data/cocte.jsonl`, lines.join("\n") + "\n");
  await writeVaryingLengthModel(`${dir}/model`, {
    seed: 7,
    corpus: [...await tinyPromptCorpus(`${dir}/data`, [template]), ...train.map((t) => chain(t.gold_sql))],
  });
  return dir;
}

Deno.test({
  name:
    "warm-up sft: one round on the gold-to-CoCTE targets raises their mean token log-probability; a resumed run does not redo it",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await mixedCocteSetup("rlvr-warm-sft-", TEMPLATE);
    const parsed = parseNotebook({
      version: 1,
      title: "sft cold start",
      cells: [
        {
          id: "data",
          type: "dataset",
          params: {
            source: "url",
            questionsUrl: "data/cocte.jsonl",
            dbRoot: "data",
            format: "rlvr",
            split: "train",
            devFraction: 0,
          },
        },
        {
          id: "model",
          type: "model",
          params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 },
        },
        { id: "prompt", type: "prompt", params: { template: TEMPLATE } },
        { id: "reward", type: "reward", params: { spec: { components: [{ name: "execution", weight: 1 }] } } },
        { id: "warm", type: "warmup", params: { method: "sft", rounds: 1, epochs: 2, lr: 0.01 } },
      ],
    });
    assert(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
    const doc = parsed.doc;
    const env = denoEnv({ out: dir, base: dir });
    const store = new MemoryStore();
    const logs: string[] = [];
    const first = await runNotebook(doc, { ...env, store }, { onLog: (m) => logs.push(m) });
    const rep = first.cells.find((c) => c.id === "warm")?.report as WarmupReport;
    assertEquals([rep.kind, rep.method, rep.exportSamples, rep.datasetFiles], ["warmup", "sft", "none", []]);
    assertEquals(rep.targets, { completion: 4, gold: 4, template: TEMPLATE });
    assertEquals(rep.rounds.length, 1);
    const r = rep.rounds[0];
    // 8 targets, minibatches of 16, 2 epochs: 2 updates; nothing sampled.
    assertEquals([r.round, r.samples, r.goldTargets, r.optimiserSteps, r.sampleAccuracy], [1, 0, 8, 2, undefined]);
    assert(r.targetLogprob, "the round reports the targets' log-probability");
    assert(
      logs.some((l) =>
        l.includes("8 gold targets under chain-of-ctes@1: 4 from the records' completion, 4 the gold SQL")
      ),
      logs.join("\n"),
    );

    // Measured apart: a second runtime of the same model, the cell's prompts, the trainer's forward.
    const cell = <T>(id: string) => doc.cells.find((c) => c.id === id)?.params as T;
    const data = cell<DatasetParams>("data");
    const hf = await env.loadModel(cell<ModelParams>("model"));
    const rt = await ModelRuntime.create(hf, () => env.gpuDevice(), {
      dtype: "f32",
      loraRank: 2,
      loraAlpha: 4,
      seed: 0,
    });
    try {
      const tasks = (await env.loadDataset(data)).splits.train;
      const prompter = new Prompter(rt, cell<PromptParams>("prompt"), cachedSchemas((db) => env.schemaOf(data, db)));
      const seqs: { ids: number[]; promptLen: number }[] = [];
      for (const t of tasks) {
        const p = await prompter.prompt(t);
        const target = sftTarget(t, TEMPLATE, await prompter.schemaOf(t.db_id), promptOpensThink(p.text));
        seqs.push(sftSequence(p.ids, rt.encodePlain(target.text), hf.config.eosTokenIds));
      }
      assertEquals(tasks.filter((t) => t.completion !== undefined).length, 4);
      const trainer = await rt.freshTrainer({});
      const measure = async () => targetLogprob(seqs, await sampleLogprobs(trainer, seqs.map((s) => s.ids))).mean;
      const before = await measure();
      const ck = await loadCheckpoint(store, "checkpoints/warm");
      assert(ck, "the round's checkpoint");
      assertEquals(ck.step, 1);
      await rt.restoreState(ck.tensors, Number(ck.state.trainerStep));
      const after = await measure();
      console.log(
        `gold targets' mean token log-probability: ${before.toFixed(4)} -> ${after.toFixed(4)} (report: ${
          r.targetLogprob.before.toFixed(4)
        } -> ${r.targetLogprob.after.toFixed(4)})`,
      );
      assert(after > before + 0.05, `one sft round raises the targets' log-probability: ${before} -> ${after}`);
      assert(
        Math.abs(before - r.targetLogprob.before) < 1e-3 && Math.abs(after - r.targetLogprob.after) < 1e-3,
        "the report's figures are the measured ones",
      );
    } finally {
      await rt.release();
    }

    // Resumed: the finished round is not redone (no new metrics record, the same report and checkpoint).
    const logs2: string[] = [];
    const second = await runNotebook(doc, { ...env, store }, { onLog: (m) => logs2.push(m) });
    assert(logs2.includes(`warmup "warm": 1 round(s) already done`), logs2.join("\n"));
    assertEquals(second.cells.find((c) => c.id === "warm")?.report, rep);
    const metrics = decodeMetrics(new TextDecoder().decode((await store.read("metrics.jsonl")) ?? new Uint8Array()))
      .records.filter((m) => m.phase === "warmup");
    assertEquals(metrics.length, 1);
    assertEquals([metrics[0].extra?.goldTargets, metrics[0].extra?.optimiserSteps], [8, 2]);
    assertEquals((await loadCheckpoint(store, "checkpoints/warm"))?.state.trainerStep, 2);
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name:
    "warm-up sft under chain-of-ctes@2: targets train after the answer start the prompt writes; those that do not begin with it are left out, by count",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await mixedCocteSetup("rlvr-warm-sft2-", "chain-of-ctes@2");
    const cells = (questionsUrl: string) => [
      {
        id: "data",
        type: "dataset",
        params: { source: "url", questionsUrl, dbRoot: "data", format: "rlvr", split: "train", devFraction: 0 },
      },
      { id: "model", type: "model", params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 } },
      { id: "prompt", type: "prompt", params: { template: "chain-of-ctes@2" } },
      { id: "reward", type: "reward", params: { spec: { components: [{ name: "execution", weight: 1 }] } } },
      { id: "warm", type: "warmup", params: { method: "sft", rounds: 1, epochs: 1, lr: 0.01 } },
    ];
    const run = async (questionsUrl: string, logs: string[]) => {
      const parsed = parseNotebook({ version: 1, title: "sft after the answer start", cells: cells(questionsUrl) });
      assert(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
      return await runNotebook(parsed.doc, { ...denoEnv({ out: dir, base: dir }), store: new MemoryStore() }, {
        onLog: (m) => logs.push(m),
      });
    };
    const logs: string[] = [];
    const rep = (await run("data/cocte.jsonl", logs)).cells.find((c) => c.id === "warm")?.report as WarmupReport;
    // The four chains (answers that start "```sql\nWITH") train; the four plain golds cannot follow that start.
    assertEquals(rep.targets, { completion: 4, gold: 0, template: "chain-of-ctes@2" });
    assertEquals(rep.rounds[0].goldTargets, 4);
    assert(
      logs.some((l) => l.includes('4 target(s) do not start with "```sql\\nWITH"') && l.includes("left out")),
      logs.join("\n"),
    );
    const lp = rep.rounds[0].targetLogprob;
    assert(lp && lp.after > lp.before, `the round raised the targets' log-probability: ${JSON.stringify(lp)}`);
    // No target starts so: a clear error instead of an empty round.
    await assertRejects(
      () => run("data/train.jsonl", []),
      /8 target\(s\) do not start with "```sql\\nWITH".*none is left to train on/,
    );
    await Deno.remove(dir, { recursive: true });
  },
});
