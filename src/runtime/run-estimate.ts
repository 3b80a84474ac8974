// How long a notebook takes on this device, before it runs: per cell and in all, from the GPU cell's
// measured matmul speed (GFLOP/s) and the notebook's sizes (questions, answer lengths, samples, steps).
// And the quick version of a notebook (quickPreset): the same cells, smaller, for a device where the
// full notebook takes hours (a software GPU, a small laptop). Pure: the page and the worker share it.
//
// The model is coarse on purpose: tokens x the model's FLOPs per token at a fraction of the measured
// matmul speed (ONNX Runtime's kernels and the trainer do not reach the benchmark's tile), with a
// floor per decoding step (a fast GPU waits on the host between steps, not on arithmetic). The
// sampling constants were fitted to SwiftShader in headless Chromium (a 16-prompt, 160-token call took
// about 1,300 s at 2.4 GFLOP/s; the model cell 92-95 s); the training share is not measured there (a
// guess from the step's 6 x parameters x tokens). The plan says "about", and the run's own figures
// replace it as cells finish (remainingSeconds).
import type { Cell, Notebook } from "../core/notebook.ts";
import type { CellType } from "../core/notebook-params.ts";

/** What the estimate needs of the device: the GPU cell's matmul speed. */
export interface DeviceSpeed {
  gflops: number;
}

/** One cell's expected time and what it does, in words. */
export interface CellEstimate {
  id: string;
  type: CellType;
  seconds: number;
  what: string;
}

/** A notebook's expected time on a device. */
export interface RunEstimate {
  cells: CellEstimate[];
  seconds: number;
  gflops: number;
}

/** Sizes of the built-in demo's splits (other datasets: their cells' `n`, else UNKNOWN_SPLIT). */
const DEMO_SPLITS: Record<string, number> = { train: 240, "test-concepts": 96, "test-templates": 64, "heldout-db": 48 };
const UNKNOWN_SPLIT = 200;
/** Parameters of the shipped demo model, and of a model cell whose size its name does not say. */
const DEMO_PARAMS = 15.7e6;
const UNKNOWN_PARAMS = 0.5e9;
/** Prompt tokens of a question (a schema and the question: the demo's omnisql prompts average 690-740). */
const PROMPT_TOKENS = 700;
/** Prompts per sampling call (RunOptions.sampleBatchPrompts' default). */
const BATCH_PROMPTS = 16;
/** Share of maxNewTokens a batch decodes (its longest answer ends it; the demo model's answers often reach the cap). */
const DECODE_FILL = 0.9;
/** Share of the matmul benchmark's speed the policy's prefill, decoding and the trainer reach. */
export const EFFICIENCY = { prefill: 0.25, decode: 0.05, train: 0.1 } as const;
/** Least seconds of one decoding step (host round trip on a fast GPU). */
const STEP_FLOOR_S = 0.02;
/** A model cell: files, graph, session, then shader compilation that scales with the device's slowness. */
const MODEL_LOAD = { fixed: 10, perGflop: 300 } as const;

/** The parameter count a model cell loads, from its source (a name with "0.5B", "1.5B", … says it). */
export function modelParamsOf(cell: Extract<Cell, { type: "model" }> | undefined): number {
  if (!cell || cell.params.source === "demo") return DEMO_PARAMS;
  const m = /(\d+(?:\.\d+)?)\s*([BM])\b/i.exec(cell.params.repo ?? cell.params.url ?? "");
  if (!m) return UNKNOWN_PARAMS;
  return Number(m[1]) * (m[2].toUpperCase() === "B" ? 1e9 : 1e6);
}

/** Seconds of one sampling pass: `prompts` questions of `promptTokens`, `n` answers each, up to `maxNew` tokens. */
function samplingSeconds(
  prompts: number,
  n: number,
  maxNew: number,
  params: number,
  gflops: number,
  promptTokens = PROMPT_TOKENS,
): number {
  const calls = Math.ceil(prompts / BATCH_PROMPTS);
  const rows = Math.min(prompts, BATCH_PROMPTS) * n;
  const flop = 2 * params;
  const prefill = (Math.min(prompts, BATCH_PROMPTS) * promptTokens * flop) / (gflops * 1e9 * EFFICIENCY.prefill);
  const step = Math.max(STEP_FLOOR_S, (rows * flop) / (gflops * 1e9 * EFFICIENCY.decode));
  return calls * (prefill + maxNew * DECODE_FILL * step);
}

/** Seconds of training on `sequences` sequences of about `tokens` tokens each, `passes` times. */
function trainingSeconds(sequences: number, tokens: number, passes: number, params: number, gflops: number): number {
  return (sequences * tokens * passes * 6 * params) / (gflops * 1e9 * EFFICIENCY.train);
}

/** Questions a split holds (the dataset cell's limit applied). */
function splitSize(split: string, limit: number | undefined): number {
  const n = DEMO_SPLITS[split] ?? UNKNOWN_SPLIT;
  return limit === undefined ? n : Math.min(n, limit);
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** Every runnable cell's expected seconds on a device of `speed.gflops`, and their sum. */
export function estimateRun(doc: Notebook, speed: DeviceSpeed): RunEstimate {
  const g = Math.max(0.1, speed.gflops);
  let params = DEMO_PARAMS;
  let limit: number | undefined;
  // The prompt cell's budget bounds the prompts (the demo's fill about 700 of 800 tokens).
  let promptTokens = PROMPT_TOKENS;
  const cells: CellEstimate[] = [];
  const add = (c: Cell, seconds: number, what: string) => cells.push({ id: c.id, type: c.type, seconds, what });
  for (const c of doc.cells) {
    switch (c.type) {
      case "markdown":
      case "gpu":
        break;
      case "dataset":
        limit = c.params.limit;
        add(c, 2, "reads the questions");
        break;
      case "prompt":
        promptTokens = Math.min(PROMPT_TOKENS, c.params.maxPromptTokens);
        add(c, 0, "a setting");
        break;
      case "reward":
        add(c, 0, "a setting");
        break;
      case "model":
        params = modelParamsOf(c);
        add(c, MODEL_LOAD.fixed + MODEL_LOAD.perGflop / g, "loads the model and compiles its GPU programs");
        break;
      case "evaluate": {
        const n = Math.min(c.params.n, splitSize(c.params.split, limit));
        const k = c.params.k > 1 ? c.params.k : 0;
        const s = samplingSeconds(n, 1, c.params.maxNewTokens, params, g, promptTokens) +
          (k ? samplingSeconds(n, k, c.params.maxNewTokens, params, g, promptTokens) : 0);
        add(c, s, `${plural(n, "question")} of ${c.params.split}, answers up to ${c.params.maxNewTokens} tokens`);
        break;
      }
      case "select": {
        const n = Math.min(c.params.n, splitSize(c.params.split, limit));
        const pairs = Math.max(1, c.params.models.length) * Math.max(1, c.params.templates.length);
        add(
          c,
          pairs * (MODEL_LOAD.fixed + samplingSeconds(n, 1, c.params.maxNewTokens, params, g, promptTokens)),
          `${plural(pairs, "model × template pair")} on ${plural(n, "question")}`,
        );
        break;
      }
      case "warmup": {
        const q = splitSize("train", limit);
        const p = c.params;
        const sample = p.method === "sft"
          ? 0
          : samplingSeconds(q, p.samplesPerQuestion, p.maxNewTokens, params, g, promptTokens);
        const kept = p.method === "sft"
          ? q
          : q * Math.min(p.samplesPerQuestion, p.rftPerQuestion || p.samplesPerQuestion) * 0.3;
        const train = trainingSeconds(kept, promptTokens + p.maxNewTokens / 2, p.epochs, params, g);
        add(
          c,
          p.rounds * (sample + train),
          `${plural(p.rounds, "round")} of ${
            p.method === "sft" ? "" : `${plural(q * p.samplesPerQuestion, "answer")} sampled, then `
          }training`,
        );
        break;
      }
      case "grpo": {
        const p = c.params;
        const step = samplingSeconds(p.batchQuestions, p.G, p.maxNewTokens, params, g, promptTokens) +
          trainingSeconds(
            p.batchQuestions * p.G,
            promptTokens + p.maxNewTokens / 2,
            p.updatesPerBatch ?? 1,
            params,
            g,
          );
        const checks = p.evalEvery > 0 ? Math.floor(p.steps / p.evalEvery) : 0;
        const check = samplingSeconds(
          Math.min(p.evalN, splitSize(p.evalSplit, limit)),
          1,
          p.maxNewTokens,
          params,
          g,
          promptTokens,
        );
        add(
          c,
          p.steps * step + checks * check,
          `${plural(p.steps, "step")} of ${p.batchQuestions} questions × ${p.G} answers${
            checks ? `, ${plural(checks, "held-out check")}` : ""
          }`,
        );
        break;
      }
      case "selfconsistency": {
        const n = Math.min(c.params.n, splitSize(c.params.split, limit));
        add(
          c,
          samplingSeconds(n, c.params.N, c.params.maxNewTokens, params, g, promptTokens),
          `${plural(n, "question")} × ${c.params.N} answers`,
        );
        break;
      }
      case "prmdata": {
        const p = c.params;
        const n = Math.min(p.n, splitSize(p.split, limit));
        add(
          c,
          samplingSeconds(n, p.chains, p.maxNewTokens, params, g, promptTokens) * (1 + p.rollouts),
          `${plural(n, "question")}, step labels by rollouts`,
        );
        break;
      }
      case "prmtrain":
        add(c, trainingSeconds(200, promptTokens, c.params.epochs, params, g), "trains the process reward model");
        break;
      case "export":
        add(c, 2, "writes files");
        break;
      case "ask":
        add(
          c,
          2 * samplingSeconds(1, 1, c.params.maxNewTokens, params, g, promptTokens),
          "two greedy answers to one question",
        );
        break;
    }
  }
  return { cells, seconds: cells.reduce((a, c) => a + c.seconds, 0), gflops: g };
}

/** Cells whose time follows the device's arithmetic speed (sampling, training). */
const PACED: readonly CellType[] = ["evaluate", "select", "warmup", "grpo", "selfconsistency", "prmdata", "prmtrain"];

/** A run longer than this proposes the quick version first. */
export const LONG_RUN_SECONDS = 20 * 60;

/**
 * The whole run's seconds left: the cells not finished yet at their planned times, scaled by how
 * this run's finished cells compared with their plan (so a device slower than the model thinks is
 * noticed after the first cell that takes long), with the running cell's own estimate where it has one.
 */
export function remainingSeconds(
  plan: RunEstimate,
  done: ReadonlyMap<string, number>,
  running: { id: string; etaSeconds: number | null; fraction: number } | null,
): number {
  let planned = 0, took = 0;
  for (const c of plan.cells) {
    const s = done.get(c.id);
    // Only cells that sample or train measure the pace of the rest: a setting's 0 s, or a model's load
    // (files and shader compilation, not arithmetic), says little of it.
    if (s !== undefined && Number.isFinite(s) && c.seconds >= 5 && PACED.includes(c.type)) {
      planned += c.seconds;
      took += s;
    }
  }
  const scale = planned > 0 ? Math.min(20, Math.max(0.05, took / planned)) : 1;
  let left = 0;
  for (const c of plan.cells) {
    if (done.has(c.id)) continue;
    if (running && c.id === running.id) left += running.etaSeconds ?? c.seconds * scale * (1 - running.fraction);
    else left += c.seconds * scale;
  }
  return left;
}

/** What the quick version leaves out or makes smaller, in the user's words. */
export interface QuickPreset {
  doc: Notebook;
  /** What it gives up, one line each. */
  givesUp: string[];
}

/**
 * The most questions, answer tokens, samples and steps of the quick version. Sized for a software GPU
 * (SwiftShader on a 2-core machine), where the time goes to reading each ~700-token prompt (prefill)
 * and to training on prompt + answer: the prompts prefilled and the sequences trained are what it
 * cuts. Answers keep 80 tokens: the demo's gold answers run to about 80. Measured on SwiftShader: a 700-token
 * prompt's prefill and one 768-token sequence's training step cost about the same (docs/running.md).
 */
export const QUICK = {
  questions: 4,
  /** The prompt budget: the schema drops example values first, then the tables least related to the question. */
  promptTokens: 600,
  maxNewTokens: 80,
  grpoSteps: 1,
  G: 4,
  batchQuestions: 1,
  rounds: 1,
  epochs: 1,
  /** Kept answers trained per question in a warm-up round. */
  rftPerQuestion: 1,
} as const;

/**
 * The quick version of a notebook: the same cells, smaller — every split cut to QUICK.questions
 * (the dataset cell's `limit`), answers up to QUICK.maxNewTokens tokens, one warm-up round, a few GRPO
 * steps without held-out checks, evaluations on the first evaluated split only and there only before
 * the first training cell and after the last (the before/after picture), no self-consistency — with
 * what that gives up. A notebook already that small comes back the same, with nothing given up.
 */
export function quickPreset(doc: Notebook): QuickPreset {
  const givesUp = new Set<string>();
  const firstSplit = doc.cells.find((c) => c.type === "evaluate")?.params.split;
  const training = doc.cells.flatMap((c, i) => (c.type === "warmup" || c.type === "grpo" ? [i] : []));
  const notMeasured = new Set<string>();
  const between = (i: number) => training.length > 1 && i > training[0] && i < training.at(-1)!;
  const cells: Cell[] = [];
  const cap = (v: number, max: number, why: string) => {
    if (v > max) givesUp.add(why);
    return Math.min(v, max);
  };
  const tokens = `answers cut at ${QUICK.maxNewTokens} tokens (longer ones count as wrong)`;
  for (const [i, c] of doc.cells.entries()) {
    switch (c.type) {
      case "prompt":
        cells.push({
          ...c,
          params: {
            ...c.params,
            maxPromptTokens: cap(
              c.params.maxPromptTokens,
              QUICK.promptTokens,
              `prompts of at most ${QUICK.promptTokens} tokens instead of ${c.params.maxPromptTokens}: the schema shows fewer example values (none on the built-in demo) and, where that is not enough, leaves out the tables least related to the question`,
            ),
          },
        });
        break;
      case "dataset": {
        const limit = Math.min(c.params.limit ?? Infinity, QUICK.questions);
        if (limit < (c.params.limit ?? Infinity)) {
          givesUp.add(
            `${QUICK.questions} questions per split instead of all (accuracy moves in steps of ${
              Number((100 / QUICK.questions).toFixed(1))
            } points: noisy)`,
          );
        }
        cells.push({ ...c, params: { ...c.params, limit } });
        break;
      }
      case "evaluate":
        if (firstSplit !== undefined && c.params.split !== firstSplit) {
          notMeasured.add(c.params.split);
          break;
        }
        if (between(i)) {
          givesUp.add("no measurement between the training cells (before and after only)");
          break;
        }
        cells.push({
          ...c,
          params: {
            ...c.params,
            n: Math.min(c.params.n, QUICK.questions),
            k: 1,
            maxNewTokens: cap(c.params.maxNewTokens, QUICK.maxNewTokens, tokens),
          },
        });
        if (c.params.k > 1) givesUp.add("no pass@k / maj@k in evaluations");
        break;
      case "warmup":
        cells.push({
          ...c,
          params: {
            ...c.params,
            rounds: cap(
              c.params.rounds,
              QUICK.rounds,
              `${plural(QUICK.rounds, "warm-up round")} instead of ${c.params.rounds}`,
            ),
            epochs: cap(
              c.params.epochs,
              QUICK.epochs,
              `${plural(QUICK.epochs, "training pass")} per warm-up round instead of ${c.params.epochs}`,
            ),
            maxNewTokens: cap(c.params.maxNewTokens, QUICK.maxNewTokens, tokens),
            ...(c.params.method !== "rft" ? {} : {
              rftPerQuestion: cap(
                c.params.rftPerQuestion || Infinity,
                QUICK.rftPerQuestion,
                `${plural(QUICK.rftPerQuestion, "answer")} per question trained in the warm-up instead of ${
                  c.params.rftPerQuestion || "every kept one"
                }`,
              ),
            }),
          },
        });
        break;
      case "grpo":
        cells.push({
          ...c,
          params: {
            ...c.params,
            steps: cap(
              c.params.steps,
              QUICK.grpoSteps,
              `${
                plural(QUICK.grpoSteps, "GRPO step")
              } instead of ${c.params.steps} (it shows the loop, too few to move accuracy)`,
            ),
            G: cap(c.params.G, QUICK.G, `${QUICK.G} answers per question in GRPO instead of ${c.params.G}`),
            batchQuestions: cap(
              c.params.batchQuestions,
              QUICK.batchQuestions,
              `${plural(QUICK.batchQuestions, "question")} per GRPO step instead of ${c.params.batchQuestions}`,
            ),
            evalEvery: c.params.evalEvery > 0 ? (givesUp.add("no held-out checks during GRPO"), 0) : 0,
            maxNewTokens: cap(c.params.maxNewTokens, QUICK.maxNewTokens, tokens),
          },
        });
        break;
      case "selfconsistency":
        givesUp.add("no self-consistency cell");
        break;
      case "prmdata":
      case "prmtrain":
      case "select":
        givesUp.add(`no ${c.type === "select" ? "model and prompt selection" : "process reward model"} cells`);
        break;
      case "ask":
        // Run all answers the ask cell too: twice, one decoding step per token.
        cells.push({
          ...c,
          params: { ...c.params, maxNewTokens: cap(c.params.maxNewTokens, QUICK.maxNewTokens, tokens) },
        });
        break;
      default:
        cells.push(c);
    }
  }
  if (notMeasured.size) givesUp.add(`only ${firstSplit} is measured (not ${[...notMeasured].join(", ")})`);
  const title = / \(quick version\)$/.test(doc.title) || givesUp.size === 0
    ? doc.title
    : `${doc.title} (quick version)`;
  return { doc: { ...doc, title, cells }, givesUp: [...givesUp] };
}
