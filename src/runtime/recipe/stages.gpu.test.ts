// Select and the offline warm-up methods on a tiny random model (lavapipe), in process: the
// selection grid is ranked and its winner's template feeds the later cells; awpg and dpo build
// their fixed training sets as documented and move the adapter; each round's scored samples are
// written as an "rlvr" dataset file ("correct" for dpo, "all" for awpg) that loads back.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { parseQuestions } from "../../core/loaders.ts";
import { decodeMetrics } from "../../core/metrics.ts";
import { parseNotebook } from "../../core/notebook.ts";
import type { DatasetParams } from "../../core/notebook-params.ts";
import { PROMPT_TEMPLATES } from "../../core/prompts.ts";
import { decodeSamples, type SelectReport, type WarmupReport } from "../records.ts";
import { MemoryStore } from "../store.ts";
import { denoEnv } from "./env.deno.ts";
import { tinyDatasetCell, tinyPromptCorpus, writeTinyDataset, writeVaryingLengthModel } from "./fixtures.deno.ts";
import { buildSplits } from "./data.ts";
import { runNotebook } from "./runner.ts";
import { normalizeSql, type WarmupDatasetRecord } from "./warmup-dataset.ts";

Deno.test({
  name:
    "recipe: select ranks model x template and its winner feeds later cells; warm-up awpg and dpo train on their fixed sets; GRPO with KL schedule, 2 updates per batch, Dr. GRPO advantages and focus",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-stages-" });
    const templates = ["omnisql@1", "reasoning-answer@1"];
    await writeTinyDataset(`${dir}/data`);
    await writeVaryingLengthModel(`${dir}/model`, {
      seed: 5,
      corpus: await tinyPromptCorpus(`${dir}/data`, templates),
    });
    const spec = {
      components: [{ name: "error_penalty", weight: 1 }, { name: "length", weight: 1, params: { maxTokens: 2 } }],
    };
    const parsed = parseNotebook({
      version: 1,
      title: "stages",
      cells: [
        tinyDatasetCell({ devFraction: 0.25, limit: 6 }),
        {
          id: "model",
          type: "model",
          params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 },
        },
        { id: "prompt", type: "prompt", params: { template: "reasoning-answer@1" } },
        { id: "reward", type: "reward", params: { spec } },
        { id: "pick", type: "select", params: { models: ["model"], templates, split: "dev", n: 2, maxNewTokens: 3 } },
        // Small steps: a larger one teaches the tiny model to stop at once (the length reward), leaving the next stage no spread.
        {
          id: "dpo",
          type: "warmup",
          params: { rounds: 1, samplesPerQuestion: 3, method: "dpo", lr: 0.002, dpoBeta: 0.5, maxNewTokens: 4 },
        },
        {
          id: "awpg",
          type: "warmup",
          params: {
            rounds: 1,
            samplesPerQuestion: 3,
            method: "awpg",
            lr: 0.002,
            epochs: 2,
            maxNewTokens: 4,
            exportSamples: "all",
          },
        },
        // The GRPO variants: KL to the base model on a linear schedule, two updates per batch
        // (old log-probs from before the first), Dr. GRPO advantages, per-sequence aggregation, focus.
        {
          id: "grpo",
          type: "grpo",
          params: {
            G: 3,
            steps: 2,
            batchQuestions: 2,
            maxNewTokens: 4,
            lr: 0.002,
            kl: 0.05,
            klSchedule: "linear",
            updatesPerBatch: 2,
            advantage: "mean",
            aggregation: "seq-mean-token-mean",
            focusHard: true,
            dropEqualGroups: false,
            evalEvery: 0,
          },
        },
      ],
    });
    assert(parsed.ok, JSON.stringify(!parsed.ok && parsed.errors));
    const store = new MemoryStore();
    const summary = await runNotebook(parsed.doc, { ...denoEnv({ out: dir, base: dir }), store }, {
      opts: { samplesPerStep: 64 },
    });
    const read = async (name: string) => new TextDecoder().decode((await store.read(name)) ?? new Uint8Array());

    const select = summary.cells.find((c) => c.id === "pick")?.report as SelectReport;
    assertEquals(select.entries.map((e) => [e.template, e.questions]), [["omnisql@1", 2], ["reasoning-answer@1", 2]]);
    assertEquals(select.entries.map((e) => e.rank).sort(), [1, 2]);
    const best = select.entries.find((e) => e.rank === 1);
    assert(best && select.entries.every((e) => e.accuracy <= best.accuracy));
    assertEquals(select.winner, { model: best.model, template: best.template });
    const metrics = decodeMetrics(await read("metrics.jsonl")).records;
    assertEquals(metrics.filter((r) => r.phase === "select").length, 2);

    // The winner's template renders the warm-up prompts.
    const samples = decodeSamples(await read("samples.jsonl")).records.filter((r) => r.phase === "warmup");
    assertEquals(samples.length, 2 * 4 * 3, "both warm-ups keep all 4 questions x 3 samples");
    const winnerText = PROMPT_TEMPLATES[best.template].render({ question: "Q", ddl: "" })[0].content.slice(0, 40);
    assert(samples.every((s) => s.prompt.includes(winnerText)), "warm-up prompts use the selected template");

    // awpg: every sample with a non-zero group advantage, 2 epochs of minibatches of 16.
    const awpg = summary.cells.find((c) => c.id === "awpg")?.report as WarmupReport;
    const awpgSamples = samples.slice(12);
    const nonZero = awpgSamples.filter((s) => s.advantage !== 0).length;
    assertEquals(awpg.rounds[0].weightedSamples, nonZero);
    assert(nonZero > 0, "the length reward gives some groups a spread");
    assertEquals(awpg.rounds[0].optimiserSteps, 2 * Math.ceil(nonZero / 16));
    // dpo: one (best, worst) pair per question whose rewards differ.
    const dpo = summary.cells.find((c) => c.id === "dpo")?.report as WarmupReport;
    const dpoSamples = samples.slice(0, 12);
    const spread = [...new Set(dpoSamples.map((s) => s.taskId))].filter((id) => {
      const totals = dpoSamples.filter((s) => s.taskId === id).map((s) => s.reward.total);
      return Math.max(...totals) > Math.min(...totals);
    });
    assertEquals(dpo.rounds[0].weightedSamples, 2 * spread.length);
    assert(spread.length > 0 && dpo.rounds[0].optimiserSteps === 1, "dpo trained on its pairs");

    // The dataset files: dpo (default "correct") one line per distinct correct SQL per question of
    // the round's sample records; awpg ("all") every sample with its reward and correctness.
    const lines = (text: string) => text.split("\n").filter((l) => l !== "");
    assertEquals([dpo.exportSamples, dpo.datasetFiles, dpo.rounds[0].dataset?.path], ["correct", [
      "warmup/dpo/round-1.jsonl",
    ], "warmup/dpo/round-1.jsonl"]);
    assert(
      (await store.read("warmup/dpo/round-1.jsonl")) !== null,
      "the dpo round's file exists (empty when nothing was correct)",
    );
    const dpoText = await read("warmup/dpo/round-1.jsonl");
    const distinctCorrect = new Set(
      dpoSamples.filter((s) => s.correct && s.extraction.sql !== null).map((s) =>
        `${s.taskId}\t${normalizeSql(s.extraction.sql ?? "")}`
      ),
    );
    assertEquals(lines(dpoText).length, distinctCorrect.size, "one line per distinct correct sample");
    assertEquals(dpo.rounds[0].dataset?.records, distinctCorrect.size);
    const dpoLoaded = parseQuestions(dpoText);
    assertEquals([dpoLoaded.format, dpoLoaded.problems], [distinctCorrect.size > 0 ? "rlvr" : "empty", []]);
    assertEquals([awpg.exportSamples, awpg.datasetFiles], ["all", ["warmup/awpg/round-1.jsonl"]]);
    const awpgText = await read("warmup/awpg/round-1.jsonl");
    const awpgRecords = lines(awpgText).map((l) => JSON.parse(l) as WarmupDatasetRecord);
    assertEquals(awpgRecords.length, 12);
    assertEquals(awpg.rounds[0].dataset, { path: "warmup/awpg/round-1.jsonl", records: 12, questions: 4 });
    assertEquals(
      awpgRecords.map((r) => [r.source_id, r.sample_index, r.round, r.completion, r.reward, r.correct, r.sql]),
      awpgSamples.map((s) => [s.taskId, s.sampleIndex, 1, s.completion, s.reward.total, s.correct, s.extraction.sql]),
      "the file holds the round's sample records",
    );
    // It loads back as an rlvr dataset through the dataset cell's loader (written where a notebook can point at it).
    const awpgLoaded = parseQuestions(awpgText);
    assertEquals([awpgLoaded.format, awpgLoaded.problems, awpgLoaded.items.length], ["rlvr", [], 12]);
    await Deno.mkdir(`${dir}/export-check`, { recursive: true });
    await Deno.writeTextFile(`${dir}/export-check/round-1.jsonl`, awpgText);
    const dsParams = {
      ...(parsed.doc.cells[0].params as DatasetParams),
      questionsUrl: "export-check/round-1.jsonl",
      devFraction: 0,
      limit: undefined,
    };
    const reloaded = buildSplits(dsParams, (await denoEnv({ out: dir, base: dir }).loadDataset(dsParams)).splits);
    assertEquals(
      reloaded.train.map((t) => [t.id, t.db_id, t.gold_sql]),
      awpgRecords.map((r) => [r.id, "pets", r.correct && r.sql !== null ? r.sql : r.source_gold_sql]),
    );
    const warm = metrics.filter((r) => r.phase === "warmup");
    assertEquals(warm.length, 2);
    assert(
      warm.every((r) => r.loss !== undefined && Number.isFinite(r.loss) && (r.extra?.skippedUpdates ?? 1) === 0),
      `finite losses, no skipped updates: ${JSON.stringify(warm)}`,
    );
    const grpo = metrics.filter((r) => r.phase === "grpo");
    assertEquals(grpo.map((r) => [r.step, r.extra?.klCoef, r.extra?.trainedSamples]), [[1, 0.05, 6], [2, 0.025, 6]]);
    assert(
      grpo.every((r) =>
        r.kl !== undefined && r.kl >= 0 && r.approxKl !== undefined && r.clipFrac !== undefined &&
        (r.gpuMemoryBytes ?? 0) > 0
      ),
      "KL, approx. KL, clip fractions and GPU bytes reported",
    );
    await Deno.remove(dir, { recursive: true });
  },
});
