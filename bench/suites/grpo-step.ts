// Suite grpo-step (issue 51): the whole GRPO step a user waits for, split by phase, against PyTorch's step on the same GPU.
//   hub   the Hub notebook's GRPO cell (notebooks/hub-qwen-coder.json: 2 questions x G 6, up to 320 new tokens, LoRA r 16
//         alpha 32 on the seven projections, q4) on a Spider database (default hospital_1, 15 tables), run by the recipe's
//         runner as `rlvr run` runs it, on a random model of Qwen2.5-0.5B's shape with the demo tokenizer (written here
//         when `model` has none). Random weights rarely end a sample early: every sample runs 320 tokens (an upper bound
//         for sampling); their SQL fails fast (a lower bound for scoring). dropEqualGroups off (all rewards equal on a
//         random model: the notebook's default would train nothing) and evaluations off; the rest as the notebook says.
//   torch bench/torch/grpo_step.py on the prompts our hub run sampled (its samples.jsonl), same tokenizer and database:
//         transformers generate (bf16, sdpa) + sqlite3 reward + PEFT LoRA forward/backward with the GRPO loss + AdamW.
//   demo  the demo notebook's GRPO cell (notebooks/demo.json: 4 questions x G 8, 160 new, f32) on a random model of the demo
//         model's shape (dropEqualGroups off, evaluations off).
// Each phase's time comes from the metrics records the GRPO cell writes (ms.sample, of which .prefill / .score / .train); "between" is the
// wall time from one record to the next less those three (prompt building, the adapter hand-over, bookkeeping). The
// first step (sessions, shaders) is reported apart; the figures are the median and the minimum of the later steps.
import { resolve } from "node:path";
import { decodeMetrics, type MetricsRecord } from "../../src/core/metrics.ts";
import { parseNotebook } from "../../src/core/notebook.ts";
import { writeHfFolder } from "../../src/model/tiny.deno.ts";
import { makeTinyModel } from "../../src/model/tiny.ts";
import { denoEnv } from "../../src/runtime/recipe/env.deno.ts";
import { runNotebook } from "../../src/runtime/recipe/runner.ts";
import { SHAPES } from "../shapes.ts";
import { bundleDir, median, numArg, pythonReference, round, type Suite, type SuiteContext } from "../suite.ts";

type Cell = { id: string; type: string; params: Record<string, unknown> };

/** Writes a random model of `shape` with the demo tokenizer into `dir` unless it holds one. */
async function ensureModel(dir: string, shape: keyof typeof SHAPES, tokDir: string) {
  try {
    await Deno.stat(`${dir}/config.json`);
    return;
  } catch { /* write it */ }
  const m = makeTinyModel("qwen2", { seed: 1, ...SHAPES[shape], tieWordEmbeddings: true });
  const read = async (f: string): Promise<Record<string, unknown>> =>
    JSON.parse(await Deno.readTextFile(`${tokDir}/${f}`));
  await writeHfFolder(dir, m, {
    tokenizerJson: await read("tokenizer.json"),
    tokenizerConfig: await read("tokenizer_config.json"),
  }, {
    dtype: "F16",
  });
}

/** The per-step phases of a GRPO cell's metrics: sample / score / train / between in seconds, tokens/s of sample and train. */
export function phasesOf(records: MetricsRecord[]) {
  const rows = records.filter((r) => r.phase === "grpo").map((r, i, all) => {
    const sample = (r.ms?.sample ?? 0) / 1000, score = (r.ms?.score ?? 0) / 1000, train = (r.ms?.train ?? 0) / 1000;
    const prefill = (r.ms?.prefill ?? 0) / 1000;
    const wall = i > 0 ? (r.time - all[i - 1].time) / 1000 : sample + score + train;
    return {
      step: r.step,
      sample,
      prefill,
      score,
      train,
      between: i > 0 ? Math.max(0, wall - sample - score - train) : 0,
      wall,
      sampleTokS: r.tokensPerSec?.sample ?? 0,
      trainTokS: r.tokensPerSec?.train ?? 0,
    };
  });
  return rows;
}

/** Figures of the steps after the first: `${prefix}_step_s` (median of the wall time a step), its minimum, each phase's median. */
export function stepFigures(prefix: string, rows: ReturnType<typeof phasesOf>): Record<string, number> {
  const later = rows.slice(1);
  if (later.length === 0) throw new Error(`${prefix}: fewer than two GRPO steps recorded`);
  const f: Record<string, number> = {};
  f[`${prefix}_step_s`] = round(median(later.map((r) => r.wall)), 3);
  f[`${prefix}_step_min_s`] = round(Math.min(...later.map((r) => r.wall)), 3);
  for (const k of ["sample", "prefill", "score", "train", "between"] as const) {
    f[`${prefix}_${k}_s`] = round(median(later.map((r) => r[k])), 3);
  }
  f[`${prefix}_sample_tok_s`] = round(median(later.map((r) => r.sampleTokS)));
  f[`${prefix}_train_tok_s`] = round(median(later.map((r) => r.trainTokS)));
  f[`${prefix}_first_step_s`] = round(rows[0].sample + rows[0].score + rows[0].train, 3);
  return f;
}

/** The cells of a notebook that one GRPO step needs: no evaluation, no export. */
const GRPO_CELLS = new Set(["gpu", "dataset", "model", "prompt", "reward", "grpo"]);

/**
 * Runs `cells` by the recipe's runner on `model`, the GRPO cell's params overridden by `grpo`, the run folder `out`;
 * prints each step's phases and returns stepFigures(name) of them.
 */
async function timeGrpoCell(name: string, cells: Cell[], grpo: Record<string, unknown>, model: string, opts: {
  steps: number;
  base: string;
  out: string;
}) {
  const doc = {
    version: 1,
    title: "grpo-step suite",
    cells: cells.filter((c) => GRPO_CELLS.has(c.type)).map((c) =>
      c.type === "grpo" ? { ...c, params: { ...c.params, ...grpo } } : c
    ),
  };
  const parsed = parseNotebook(doc);
  if (!parsed.ok) throw new Error(`notebook: ${JSON.stringify(parsed.errors)}`);
  await Deno.mkdir(opts.out, { recursive: true });
  const env = denoEnv({ out: opts.out, base: opts.base, onLog: () => {} });
  await runNotebook(parsed.doc, env, {
    modelOverride: model,
    opts: { maxSteps: opts.steps, seed: 1 },
    onLog: (m) => console.error(m),
  });
  const rows = phasesOf(decodeMetrics(await Deno.readTextFile(`${opts.out}/metrics.jsonl`)).records);
  for (const r of rows) {
    console.log(
      `${name} step ${r.step}: wall ${r.wall.toFixed(2)} s = sample ${r.sample.toFixed(2)} (prefill ${
        r.prefill.toFixed(2)
      }; ${r.sampleTokS.toFixed(0)} tok/s) + score ${r.score.toFixed(3)} + train ${r.train.toFixed(2)} (${
        r.trainTokS.toFixed(0)
      } tok/s) + between ${r.between.toFixed(2)}`,
    );
  }
  return stepFigures(name, rows);
}

async function run(ctx: SuiteContext) {
  await ctx.gpu(); // the record's device
  const b = bundleDir();
  const parts = new Set((ctx.args.get("parts") ?? "hub,torch,demo").split(","));
  const tokDir = ctx.args.get("tokenizer") ?? (b ? `${b}demo-tok` : "public/model");
  const spider = resolve(ctx.args.get("spider") ?? (b ? `${b}spider` : "../shared/datasets/spider-train"));
  const db = ctx.args.get("db") ?? "hospital_1";
  const steps = numArg(ctx.args, "steps", 3), demoSteps = numArg(ctx.args, "demoSteps", 4);
  const notebooks = resolve(ctx.args.get("notebooks") ?? "notebooks");
  const hubModel = resolve(ctx.args.get("model") ?? `${ctx.out}/model-0.5b`);
  const demoModel = resolve(ctx.args.get("demoModel") ?? `${ctx.out}/model-demo`);
  // A dry run on a CPU adapter: hubShape=demo and a few new tokens (the record then says so in its notes).
  const hubShape = (ctx.args.get("hubShape") ?? "qwen2.5-0.5b") as keyof typeof SHAPES;
  const demoShape = (ctx.args.get("demoShape") ?? "demo") as keyof typeof SHAPES;
  if (!(hubShape in SHAPES) || !(demoShape in SHAPES)) {
    throw new Error(`hubShape, demoShape: one of ${Object.keys(SHAPES).join(", ")}`);
  }
  const newTokens = ctx.args.get("newTokens") ? { maxNewTokens: numArg(ctx.args, "newTokens", 0) } : {};
  if (!Deno.env.get("RLVR_SAMPLER")) Deno.env.set("RLVR_SAMPLER", ctx.args.get("sampler") ?? "captured");
  const grpoParams = { evalEvery: 0, dropEqualGroups: false, ...newTokens };
  const figures: Record<string, number> = {}, reference: Record<string, number> = {};
  const notes: string[] = [];

  // The Hub step on one Spider database.
  const hubOut = `${ctx.out}/hub-run`;
  const questions = `${ctx.out}/hub-questions.jsonl`;
  if (parts.has("hub") || parts.has("torch")) {
    const all = (await Deno.readTextFile(`${spider}/questions.jsonl`)).split("\n").filter((l) => l.includes(`"${db}"`));
    if (all.length === 0) throw new Error(`no questions of ${db} in ${spider}/questions.jsonl`);
    await Deno.writeTextFile(questions, all.join("\n") + "\n");
  }
  if (parts.has("hub")) {
    await ensureModel(hubModel, hubShape, tokDir);
    const hub = JSON.parse(await Deno.readTextFile(`${notebooks}/hub-qwen-coder.json`)) as { cells: Cell[] };
    const cells = hub.cells.map((c): Cell =>
      c.type === "dataset"
        ? {
          ...c,
          params: {
            ...c.params,
            source: "url",
            questionsUrl: questions,
            dbRoot: `${spider}/database`,
            tablesUrl: `${spider}/tables.json`,
            devFraction: 0,
          },
        }
        : c
    );
    const t = performance.now();
    const opts = { steps, base: notebooks, out: hubOut };
    Object.assign(figures, await timeGrpoCell("hub", cells, grpoParams, hubModel, opts));
    figures.hub_run_s = round((performance.now() - t) / 1000, 1);
  }
  if (parts.has("torch") && ctx.reference) {
    const tj = ctx.args.get("torchJson");
    const r = (tj ? JSON.parse(await Deno.readTextFile(tj)) : await pythonReference(ctx, "grpo_step.py", [
      "--run",
      hubOut,
      "--tokenizer",
      `${tokDir}/tokenizer.json`,
      "--questions",
      questions,
      "--db-root",
      `${spider}/database`,
      "--steps",
      String(steps - 1),
      ...(newTokens.maxNewTokens ? ["--new", String(newTokens.maxNewTokens)] : []),
    ], "grpo-step-torch.json")) as {
      steps: {
        sample: number;
        score: number;
        train: number;
        total: number;
        sampleTokensPerSecond: number;
        trainTokensPerSecond: number;
      }[];
      errors: string[];
    };
    if (r.steps.length === 0) throw new Error(`grpo_step.py measured no step: ${r.errors.join("; ")}`);
    reference.torch_hub_step_s = round(median(r.steps.map((s) => s.total)), 3);
    reference.torch_hub_step_min_s = round(Math.min(...r.steps.map((s) => s.total)), 3);
    for (const k of ["sample", "score", "train"] as const) {
      reference[`torch_hub_${k}_s`] = round(median(r.steps.map((s) => s[k])), 3);
    }
    reference.torch_hub_sample_tok_s = round(median(r.steps.map((s) => s.sampleTokensPerSecond)));
    reference.torch_hub_train_tok_s = round(median(r.steps.map((s) => s.trainTokensPerSecond)));
    if (figures.hub_step_s) figures.hub_vs_torch = round(reference.torch_hub_step_s / figures.hub_step_s, 3);
  }
  if (parts.has("demo")) {
    await ensureModel(demoModel, demoShape, tokDir);
    const demo = JSON.parse(await Deno.readTextFile(`${notebooks}/demo.json`)) as { cells: Cell[] };
    const opts = { steps: demoSteps, base: notebooks, out: `${ctx.out}/demo-run` };
    Object.assign(figures, await timeGrpoCell("demo", demo.cells, grpoParams, demoModel, opts));
  }
  notes.push(
    `hub: notebooks/hub-qwen-coder.json's GRPO cell on Spider ${db}, random Qwen2.5-0.5B-shaped q4 model with the demo tokenizer, ` +
      `sampler ${Deno.env.get("RLVR_SAMPLER")}, ${steps} steps (figures: the later ${
        steps - 1
      }); demo: notebooks/demo.json's GRPO ` +
      `cell on a random demo-shaped model, ${demoSteps} steps; dropEqualGroups off and no evaluations in both; random weights run ` +
      `every sample to its length. torch: bench/torch/grpo_step.py on our hub run's prompts (bf16, sdpa, PEFT, AdamW).`,
  );
  if (hubShape !== "qwen2.5-0.5b" || demoShape !== "demo" || newTokens.maxNewTokens) {
    notes.push(
      `DRY RUN: shapes ${hubShape} / ${demoShape}, new tokens ${newTokens.maxNewTokens ?? "as the notebooks"}`,
    );
  }
  if (Deno.env.get("RLVR_ORT_PENDING_DISPATCHES")) {
    notes.push(`RLVR_ORT_PENDING_DISPATCHES=${Deno.env.get("RLVR_ORT_PENDING_DISPATCHES")}`);
  }
  return { figures, reference, notes: notes.join(" "), runs: Math.max(1, steps - 1) };
}

export const grpoStep: Suite = {
  about: "the whole GRPO step (sample, score, train) of the Hub and demo notebooks' GRPO cells, beside PyTorch's",
  usage:
    "[parts=hub,torch,demo] [hubShape=qwen2.5-0.5b] [demoShape=demo] (tiny for a dry run) [newTokens=N] [steps=3] [demoSteps=4] [db=hospital_1] [spider=DIR] [tokenizer=DIR] [model=DIR] [demoModel=DIR] [torchJson=FILE]",
  run,
};
