// The recipe end to end on a tiny random model (lavapipe): `rlvr run` with --max-steps 1, then
// again with --max-steps 2 into the same folder (it resumes), against one straight in-process run
// of 2 steps. A random model writes no SQL, so accuracies are 0; what is checked is the mechanics:
// identical adapters, optimiser moments and metrics after resuming, complete sample records whose
// rewards are scoreSample's, equal-reward groups dropped and counted, BIRD-format predictions,
// the PEFT adapter and the TRL config.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { parsePredictions } from "../../core/loaders.ts";
import { decodeMetrics, type MetricsRecord } from "../../core/metrics.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { scoreSample } from "../../core/rewards.ts";
import { parsePeftAdapter } from "../../model/peft.ts";
import { decodeSamples } from "../records.ts";
import { denoEnv } from "./env.deno.ts";
import {
  tinyLengthSpec,
  tinyPromptCorpus,
  tinySetupCells,
  writeTinyDataset,
  writeVaryingLengthModel,
} from "./fixtures.deno.ts";
import { runNotebook } from "./runner.ts";

const TEMPLATE = "reasoning-answer@1";
const SPEC = tinyLengthSpec(2);
const NOTEBOOK = {
  version: 1,
  title: "tiny recipe",
  cells: [
    ...tinySetupCells(TEMPLATE, { spec: SPEC }, 0.25),
    { id: "base", type: "evaluate", params: { split: "dev", n: 2, k: 2, maxNewTokens: 4 } },
    {
      id: "warm",
      type: "warmup",
      params: { rounds: 1, samplesPerQuestion: 2, method: "rft", lr: 0.01, maxNewTokens: 4, exportSamples: "all" },
    },
    {
      id: "grpo",
      type: "grpo",
      params: { G: 4, steps: 4, batchQuestions: 2, maxNewTokens: 4, lr: 0.01, evalEvery: 2, evalN: 2 },
    },
    { id: "sc", type: "selfconsistency", params: { N: 2, split: "dev", n: 2, maxNewTokens: 4 } },
    { id: "exp", type: "export", params: { what: "adapter" } },
  ],
};

// The first, interrupted run needs only the cells that shape the training state (evaluations
// change nothing; the GRPO checkpoint records the GRPO cell's parameters, not the others').
const TRAINING_ONLY = { ...NOTEBOOK, cells: NOTEBOOK.cells.filter((c) => !["base", "sc", "exp"].includes(c.id)) };

async function cli(
  dir: string,
  notebook: string,
  out: string,
  maxSteps: number,
): Promise<{ last: Record<string, unknown>; stderr: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../../cli/main.ts", import.meta.url).pathname,
      "run",
      `${dir}/${notebook}`,
      "--out",
      out,
      "--max-steps",
      String(maxSteps),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(r.stderr);
  const lines = new TextDecoder().decode(r.stdout).trim().split("\n");
  assert(r.code === 0, `rlvr run exited ${r.code}: ${stderr.slice(-2000)}`);
  return { last: JSON.parse(lines[lines.length - 1]), stderr };
}

const text = async (p: string) => await Deno.readTextFile(p);
const metricsOf = async (dir: string) => decodeMetrics(await text(`${dir}/metrics.jsonl`)).records;
/** A record without its wall-clock fields (the only ones a resumed run may change). */
/** A record without wall-clock fields and GPU bytes (the step's peak depends on what the process allocated before: a resumed run starts a fresh uniform pool). */
function timeless(r: MetricsRecord): Omit<MetricsRecord, "time" | "ms" | "tokensPerSec" | "gpuMemoryBytes"> {
  const { time: _t, ms: _m, tokensPerSec: _s, gpuMemoryBytes: _g, ...rest } = r;
  if (rest.extra) {
    // SQL work counters depend on what the process had cached (a resumed run starts with no gold results).
    const { gpuLiveBytes: _l, sqlRuns: _q, sqlRepeats: _p, goldRuns: _gr, ...extra } = rest.extra;
    return { ...rest, extra };
  }
  return rest;
}

Deno.test({
  name:
    "rlvr run: 1 step + resume + 1 step equals 2 straight steps (adapter, AdamW moments, metrics); records, predictions and exports",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-run-" });
    await writeTinyDataset(`${dir}/data`);
    await writeVaryingLengthModel(`${dir}/model`, {
      seed: 3,
      corpus: await tinyPromptCorpus(`${dir}/data`, [TEMPLATE]),
    });
    await Deno.writeTextFile(`${dir}/nb.json`, JSON.stringify(NOTEBOOK));
    await Deno.writeTextFile(`${dir}/train.json`, JSON.stringify(TRAINING_ONLY));

    const a = await cli(dir, "train.json", `${dir}/resumed`, 1);
    assertEquals(Object.keys(a.last.accuracy as Record<string, number>), ["warm", "grpo"]);
    const b = await cli(dir, "nb.json", `${dir}/resumed`, 2);
    assert(b.stderr.includes(`grpo "grpo": resumed from step 1`), "the second run resumes GRPO from its checkpoint");
    assert(b.stderr.includes(`warmup "warm": 1 round(s) already done`), "the second run does not redo the warm-up");
    const acc = b.last.accuracy as Record<string, number>;
    assertEquals(Object.keys(acc), ["base", "warm", "grpo", "sc"]);
    assert(Object.values(acc).every((x) => x >= 0 && x <= 1), `accuracies ${JSON.stringify(acc)}`);

    const parsed = parseNotebook(NOTEBOOK);
    assert(parsed.ok);
    const straight = `${dir}/straight`;
    const summary = await runNotebook(parsed.doc, denoEnv({ out: straight, base: dir }), { opts: { maxSteps: 2 } });
    assertEquals(summary.accuracy, acc);

    // Identical adapter and optimiser state: the resumed run continued exactly.
    const bytes = (p: string) => Deno.readFile(p);
    assertEquals(
      await bytes(`${dir}/resumed/adapter/adapter_model.safetensors`),
      await bytes(`${straight}/adapter/adapter_model.safetensors`),
    );
    assertEquals(
      await bytes(`${dir}/resumed/checkpoints/grpo/ckpt-00000002/tensors.safetensors`),
      await bytes(`${straight}/checkpoints/grpo/ckpt-00000002/tensors.safetensors`),
    );
    const adapter = parsePeftAdapter(
      JSON.parse(await text(`${straight}/adapter/adapter_config.json`)),
      await bytes(`${straight}/adapter/adapter_model.safetensors`),
    );
    let bMax = 0;
    for (const [k, t] of adapter.tensors) {
      if (k.includes("lora_B")) { for (const x of t.data) bMax = Math.max(bMax, Math.abs(x)); }
    }
    assert(bMax > 0, "training moved the adapter (B starts at zero)");

    // Identical metrics, wall-clock fields aside; the resumed folder holds step 1 once.
    const resumed = await metricsOf(`${dir}/resumed`);
    const plain = await metricsOf(straight);
    const pick = (rs: MetricsRecord[], phase: string) => rs.filter((r) => r.phase === phase).map(timeless);
    assertEquals(pick(resumed, "grpo"), pick(plain, "grpo"));
    for (const r of [...resumed, ...plain].filter((r) => r.phase === "grpo")) {
      assert(
        (r.gpuMemoryBytes ?? 0) >= (r.extra?.gpuLiveBytes ?? Infinity) && (r.extra?.gpuLiveBytes ?? 0) > 0,
        `GPU bytes: peak ${r.gpuMemoryBytes} >= live ${r.extra?.gpuLiveBytes} > 0`,
      );
      // The prompts' prefill is timed within the sampling.
      const { sample = 0, prefill = -1 } = r.ms ?? {};
      assert(prefill > 0 && prefill <= sample, `ms.prefill ${prefill} within ms.sample ${sample}`);
    }
    assertEquals(pick(resumed, "grpo").map((r) => r.step), [1, 2]);
    // Every record names the cell that wrote it: the GRPO cell's held-out checks are "eval" records of cell "grpo".
    const cellsBy = (rs: { phase: string; cell?: string }[]) =>
      [...new Set(rs.map((r) => `${r.phase}:${r.cell}`))].sort();
    assertEquals(cellsBy(plain), ["eval:base", "eval:grpo", "grpo:grpo", "selfconsistency:sc", "warmup:warm"]);
    assertEquals(pick(resumed, "eval"), pick(plain, "eval"), "baseline and the held-out check at step 2");
    assertEquals(pick(resumed, "selfconsistency").at(-1), pick(plain, "selfconsistency").at(-1));
    const warm = plain.find((r) => r.phase === "warmup");
    assert(
      warm?.extra && warm.extra.trainItems > 0 && warm.extra.optimiserSteps > 0,
      `warm-up trained on RFT targets: ${JSON.stringify(warm?.extra)}`,
    );

    // Sample records: complete, rewards as scoreSample gives them, equal-reward groups dropped and counted.
    const samples = decodeSamples(await text(`${straight}/samples.jsonl`));
    assertEquals(samples.errors, []);
    assert(samples.records.length > 0);
    assertEquals(cellsBy(samples.records), [
      "eval:base",
      "eval:grpo",
      "grpo:grpo",
      "selfconsistency:sc",
      "warmup:warm",
    ]);
    for (const r of samples.records) {
      const outcome = r.extraction.sql === null ? null : { correct: r.correct, error: r.error, ms: r.execMs };
      assertEquals(
        scoreSample(SPEC, {
          completion: r.completion,
          completionTokens: r.completionTokens,
          extraction: r.extraction,
          outcome,
        }).total,
        r.reward.total,
      );
      assert(
        r.prompt.includes(r.question) && r.gold !== null && r.gold.columns.length > 0,
        "prompt and gold result kept",
      );
    }
    for (const m of plain.filter((x) => x.phase === "grpo")) {
      const recs = samples.records.filter((r) => r.phase === "grpo" && r.step === m.step);
      assertEquals(recs.length, 8, "all 2 x 4 samples of the step are kept (samplesPerStep 16)");
      assertEquals(
        m.extra?.scoredWhileSampling,
        8,
        "every completion was scored as its row finished, its early text the final one",
      );
      const groups = [...new Set(recs.map((r) => r.taskId))].map((id) => recs.filter((r) => r.taskId === id));
      const equal = groups.filter((g) => g.every((r) => r.reward.total === g[0].reward.total));
      assertEquals(m.equalGroupFraction, equal.length / groups.length, `step ${m.step} equal-reward fraction`);
      for (const g of groups) {
        const isEqual = equal.includes(g);
        assert(
          g.every((r) => (r.advantage === null) === isEqual),
          "advantage null exactly for dropped (equal-reward) groups",
        );
        if (!isEqual) {
          assert(Math.abs(g.reduce((s, r) => s + (r.advantage ?? 0), 0)) < 1e-9, "group advantages sum to zero");
        }
      }
      assertEquals(m.extra?.trainedSamples, (groups.length - equal.length) * 4);
    }

    // The warm-up's dataset file ("all"): the round's 6 x 2 samples once, also in the resumed
    // folder (its second run restored the round and did not write it again); the restored
    // round's report still names it.
    const warmFile = "warmup/warm/round-1.jsonl";
    const warmLines = (await text(`${straight}/${warmFile}`)).split("\n").filter((l) => l !== "");
    assertEquals(warmLines.length, samples.records.filter((r) => r.phase === "warmup").length);
    assertEquals(warmLines.length, 12);
    assertEquals(await text(`${dir}/resumed/${warmFile}`), await text(`${straight}/${warmFile}`));
    const resumedSummary = JSON.parse(await text(`${dir}/resumed/summary.json`)) as {
      cells: { id: string; report?: { datasetFiles?: string[] } | Record<string, unknown> }[];
    };
    assertEquals(resumedSummary.cells.find((c) => c.id === "warm")?.report?.datasetFiles, [warmFile]);

    // A third run into the finished folder: the evaluations it finished are reused, not run again (no new metrics
    // or samples); a run with another step cap evaluates again.
    const before = await text(`${dir}/resumed/metrics.jsonl`),
      samplesBefore = await text(`${dir}/resumed/samples.jsonl`);
    const c = await cli(dir, "nb.json", `${dir}/resumed`, 2);
    for (const id of ["base", "sc"]) {
      assert(
        c.stderr.includes(`cell "${id}" (`) && c.stderr.includes(`its report is reused (cells/${id}.json)`),
        `${id} reused: ${c.stderr.slice(-3000)}`,
      );
    }
    assertEquals(c.last.accuracy, acc);
    assertEquals(await text(`${dir}/resumed/metrics.jsonl`), before, "no metrics record added");
    assertEquals(await text(`${dir}/resumed/samples.jsonl`), samplesBefore, "no sample record added");
    const third = JSON.parse(await text(`${dir}/resumed/summary.json`)) as {
      cells: { id: string; reused?: boolean; report?: unknown }[];
    };
    assertEquals(third.cells.filter((x) => x.reused).map((x) => x.id), ["base", "sc"]);
    assertEquals(
      third.cells.find((x) => x.id === "sc")?.report,
      resumedSummary.cells.find((x) => x.id === "sc")?.report,
    );
    const d = await cli(dir, "nb.json", `${dir}/resumed`, 3);
    assert(!d.stderr.includes("its report is reused"), "another --max-steps: every evaluation runs again");

    // Predictions in BIRD's format, one per dev question.
    const preds = parsePredictions(await text(`${straight}/predictions/base.json`));
    assertEquals([preds.format, preds.sql.size, preds.problems.length], ["bird", 2, 0]);
    assert(
      Object.values(JSON.parse(await text(`${straight}/predictions/base.json`))).every((v) =>
        typeof v === "string" && v.endsWith("\t----- bird -----\tpets")
      ),
    );

    // Exports: PEFT adapter equal to the run's, TRL config, prompts with gold SQL.
    assertEquals(
      await bytes(`${straight}/export/exp/adapter/adapter_model.safetensors`),
      await bytes(`${straight}/adapter/adapter_model.safetensors`),
    );
    const trl = JSON.parse(await text(`${straight}/export/exp/trl_grpo_config.json`));
    assertEquals([
      trl.grpo_config.num_generations,
      trl.grpo_config.loss_type,
      trl.grpo_config.max_steps,
      trl.peft_config.r,
    ], [4, "dapo", 2, 4]);
    const prompts = (await text(`${straight}/export/exp/prompts.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
    assertEquals(prompts.length, 6);
    assert(
      prompts.every((p) =>
        typeof p.prompt === "string" && p.prompt.includes(p.gold_sql) === false && typeof p.gold_sql === "string"
      ),
    );
    await Deno.remove(dir, { recursive: true });
  },
});
