// The PRM train cell: a process (or outcome) reward model — the policy's base weights, its own
// LoRA adapter and a scalar head — trained with binary cross-entropy on a PRM data cell's chains
// (prm-data/<data>/train.jsonl), questions split into train and dev by a seeded shuffle. A
// checkpoint after every optimiser step (adapter, head, AdamW moments, the step) lets a restarted
// run continue exactly; the PRM goes to prm/<cell>/ (PEFT + score head) and into the run context
// for the cells after it (GRPO's prm reward, self-consistency's PRM best-of-N).
import type { PrmTrainParams } from "../../core/notebook-params.ts";
import { decodePrmRecords, type PrmQuestion, type PrmRecord } from "../../core/prm-dataset.ts";
import { prmFigures } from "../../core/prm-eval.ts";
import { Rng } from "../../core/rng.ts";
import { readPrmFolder } from "../../model/prm-files.ts";
import { prmScores, prmStep } from "../../gpu/trainer/prm-step.ts";
import { loadCheckpoint, saveCheckpoint } from "../checkpoint.ts";
import type { PrmEval, PrmTrainReport } from "../records.ts";
import {
  checkAborted,
  emitMetrics,
  mixSeed,
  progressReporter,
  requireSetup,
  type RunContext,
} from "../recipe/context.ts";
import { prmDataPaths } from "./prm-data.ts";
import { type PrmLaidOut, PrmModel } from "./prm-model.ts";

const dec = new TextDecoder();

interface PrmTrainState {
  config: string;
  trainerStep: number;
  epochLoss: number[];
}

function isState(x: unknown): x is PrmTrainState {
  if (typeof x !== "object" || x === null) return false;
  const s: Record<string, unknown> = { ...x };
  return typeof s.config === "string" && typeof s.trainerStep === "number" && Array.isArray(s.epochLoss);
}

/** The data cell's questions and training chains. */
async function readData(
  ctx: RunContext,
  data: string,
): Promise<{ questions: Map<string, PrmQuestion>; records: PrmRecord[] }> {
  const paths = prmDataPaths(data);
  const [q, t] = await Promise.all([ctx.env.store.read(paths.questions), ctx.env.store.read(paths.train)]);
  if (!q || !t) throw new Error(`no PRM data at ${paths.train}: run the PRM data cell "${data}" first`);
  const questions = new Map<string, PrmQuestion>();
  for (const line of dec.decode(q).split("\n")) {
    if (line.trim() === "") continue;
    const v: PrmQuestion = JSON.parse(line);
    questions.set(v.taskId, v);
  }
  const d = decodePrmRecords(dec.decode(t));
  if (d.bad.length) throw new Error(`${paths.train}: lines ${d.bad.slice(0, 5).join(", ")} are not PRM records`);
  return { questions, records: d.records };
}

/** A PRM input and its labels: per step (process), or the answer's correctness at its last step (outcome). */
function laidOut(prm: PrmModel, q: Map<string, PrmQuestion>, r: PrmRecord): PrmLaidOut | null {
  const question = q.get(r.taskId);
  if (!question) throw new Error(`PRM record of question ${r.taskId}, absent from questions.jsonl`);
  const labels = prm.info.labels === "outcome"
    ? r.ends.map((_, k) => (k === r.ends.length - 1 ? (r.correct ? 1 : 0) : 0))
    : r.labels;
  const l = prm.layOut({ prompt: question.prompt, completion: r.completion }, labels);
  return l.example.rows.length ? l : null;
}

/** Step scores of held-out chains against their labels. */
export async function evaluatePrm(
  prm: PrmModel,
  dev: readonly PrmLaidOut[],
  microBatch: number,
): Promise<PrmEval | null> {
  if (dev.length === 0) return null;
  const scores = await prmScores(prm.model, prm.lora, prm.head, dev.map((d) => d.example), { microBatch });
  return prmFigures(dev.map((d, i) => ({ scores: scores[i], labels: d.example.labels ?? [] })));
}

/** Runs the PRM train cell (`data`: the PRM data cell it reads when its own `data` is empty). */
export async function runPrmTrain(
  ctx: RunContext,
  cellId: string,
  p: PrmTrainParams,
  data: string | null,
): Promise<PrmTrainReport> {
  const setup = requireSetup(ctx, cellId);
  const runtime = setup.model.runtime;
  const progress = progressReporter(ctx, cellId, "prmtrain");
  // Reported before anything else, so the page files this cell's records under it.
  progress(0, p.load ? "loading the PRM…" : "reading the PRM data…");
  const seed = ctx.opts.seed ?? p.seed;
  const register = (prm: PrmModel) => {
    const prms = (ctx.prms ??= new Map());
    prms.get(cellId)?.release();
    prms.delete(cellId);
    prms.set(cellId, prm);
  };
  if (p.load) {
    const { source, where } = ctx.env.adapterSource(p.load);
    progress(0, `loading the PRM from ${where}…`);
    const w = await readPrmFolder(source, runtime.hf.config);
    const prm = await PrmModel.create(runtime, {
      cellId,
      info: w.info,
      r: w.adapter.r,
      alpha: w.adapter.alpha,
      seed,
      init: { adapter: w.adapter, head: w.head },
    });
    register(prm);
    progress(1, `loaded (${w.info.labels} labels, template ${w.info.template})`);
    return {
      kind: "prmtrain",
      cellId,
      labels: w.info.labels,
      data: "",
      loadedFrom: where,
      steps: 0,
      examples: 0,
      devExamples: 0,
      resumedFrom: 0,
      loss: null,
      dev: null,
      files: [],
    };
  }
  const dataCell = p.data || data;
  if (!dataCell) {
    throw new Error("needs a PRM data cell before it (or its data parameter naming one, or load naming a PRM folder)");
  }
  const { questions, records } = await readData(ctx, dataCell);
  const template = [...questions.values()][0]?.template ?? "chain-of-ctes@1";
  const prm = await PrmModel.create(runtime, {
    cellId,
    info: { template, labels: p.labels, baseModel: runtime.hf.name },
    r: p.loraRank,
    alpha: p.loraAlpha,
    seed,
  });
  register(prm);
  // Questions, not chains, are held out: chains of one question share prefixes.
  const ids = [...new Set(records.map((r) => r.taskId))];
  const devIds = new Set(
    new Rng(mixSeed(seed, "prmtrain-dev")).shuffle([...ids]).slice(0, Math.round(p.devFraction * ids.length)),
  );
  const train: PrmLaidOut[] = [], dev: PrmLaidOut[] = [];
  for (const r of records) {
    const l = laidOut(prm, questions, r);
    if (l) (devIds.has(r.taskId) ? dev : train).push(l);
  }
  if (train.length === 0) {
    throw new Error(
      `no training chains in prm-data/${dataCell}/train.jsonl (${records.length} records, ${dev.length} held out)`,
    );
  }
  const perEpoch = Math.ceil(train.length / p.batchChains);
  const total = perEpoch * p.epochs;
  const tr = prm.trainer({
    lr: { base: p.lr, warmupSteps: p.warmupSteps, totalSteps: total, decay: p.lrSchedule },
    maxGradNorm: p.maxGradNorm,
  });
  const config = JSON.stringify({ ...p, seed, data: dataCell, records: records.length, model: runtime.hf.name });
  const prefix = `checkpoints/${cellId}`;
  let start = 0;
  let state: PrmTrainState = { config, trainerStep: 0, epochLoss: [] };
  const ck = await loadCheckpoint(ctx.env.store, prefix, ctx.onLog);
  if (ck) {
    if (!isState(ck.state)) throw new Error(`checkpoint under ${prefix} has no PRM state`);
    if (ck.state.config !== config) {
      throw new Error(
        `checkpoint under ${prefix} was made with other parameters; use a fresh output folder or remove it`,
      );
    }
    state = ck.state;
    start = ck.step;
    prm.restoreState(ck.tensors);
    tr.step = state.trainerStep;
    ctx.onLog(`prmtrain "${cellId}": resumed from step ${start}`);
  }
  let epochSum = 0, epochN = 0;
  for (let step = start; step < total; step++) {
    checkAborted(ctx);
    const epoch = Math.floor(step / perEpoch);
    // Each epoch's order is a function of the seed and the epoch: a resumed run draws the same batches.
    const order = new Rng(mixSeed(seed, "prmtrain-order", epoch)).shuffle(train.map((_, i) => i));
    const at = (step % perEpoch) * p.batchChains;
    const batch = order.slice(at, at + p.batchChains).map((i) => train[i].example);
    const t0 = ctx.env.now();
    const r = await prmStep(tr, batch, { microBatch: ctx.opts.trainMicroBatch });
    const ms = ctx.env.now() - t0;
    epochSum += r.loss;
    epochN++;
    if ((step + 1) % perEpoch === 0) {
      state.epochLoss.push(epochSum / epochN);
      epochSum = 0;
      epochN = 0;
    }
    await emitMetrics(ctx, {
      v: 1,
      step: step + 1,
      phase: "prmtrain",
      time: ctx.env.now(),
      loss: r.loss,
      lr: r.lr,
      gradNorm: r.gradNorm,
      ms: { train: ms },
      tokensPerSec: { train: ms > 0 ? batch.reduce((a, e) => a + e.ids.length, 0) / (ms / 1000) : 0 },
      extra: {
        epoch: epoch + 1,
        chains: batch.length,
        steps: batch.reduce((a, e) => a + e.rows.length, 0),
        skipped: r.skipped ? 1 : 0,
      },
    });
    state.trainerStep = tr.step;
    await saveCheckpoint(ctx.env.store, prefix, {
      step: step + 1,
      cursor: step + 1,
      rng: {},
      tensors: await prm.stateTensors(),
      state: { ...state },
    });
    progress(
      (step + 1 - start) / Math.max(1, total - start),
      `step ${step + 1}/${total} (epoch ${epoch + 1}): loss ${r.loss.toFixed(4)}`,
    );
  }
  const evalFigures = await evaluatePrm(prm, dev, ctx.opts.trainMicroBatch);
  if (evalFigures) {
    await emitMetrics(ctx, {
      // At the training step it was measured after, so the held-out loss sits on the training curve.
      v: 1,
      step: total,
      phase: "prmeval",
      time: ctx.env.now(),
      loss: evalFigures.bce,
      extra: {
        stepAccuracy: evalFigures.accuracy,
        auc: evalFigures.auc,
        firstError: evalFigures.firstError,
        chains: evalFigures.chains,
        steps: evalFigures.steps,
      },
    });
  }
  const files: string[] = [];
  for (const [name, bytes] of await prm.files()) {
    await ctx.env.store.write(`prm/${cellId}/${name}`, bytes);
    files.push(`prm/${cellId}/${name}`);
  }
  const losses = state.epochLoss;
  return {
    kind: "prmtrain",
    cellId,
    labels: p.labels,
    data: dataCell,
    steps: total,
    examples: train.length,
    devExamples: dev.length,
    resumedFrom: start,
    loss: losses.length ? { first: losses[0], last: losses[losses.length - 1] } : null,
    dev: evalFigures,
    files,
  };
}
