// Runs a notebook's cells in order against an environment: each cell reads and extends the run
// context (dataset -> model -> prompt -> reward -> stages). A failing cell stops the run with an
// error naming it. Training cells checkpoint as they go, so running the same notebook into the
// same store again resumes where it stopped.
import type { MetricsRecord } from "../../core/metrics.ts";
import type { Cell, Notebook } from "../../core/notebook.ts";
import type { ModelParams } from "../../core/notebook-params.ts";
import type { LoraAdapter } from "../../model/lora.ts";
import { readPeftAdapter } from "../../model/peft.ts";
import type { StageReport } from "../records.ts";
import {
  checkAborted,
  DEFAULT_RUN_OPTIONS,
  type Progress,
  progressReporter,
  type RunContext,
  type RunEnv,
  type RunOptions,
} from "./context.ts";
import { resetDatasetCache, toolsFor } from "./common.ts";
import { buildSplits } from "./data.ts";
import { runAsk } from "./ask.ts";
import { runEvaluate } from "./evaluate.ts";
import { promptsJsonl, trlConfig, writeAdapter } from "./export.ts";
import { runGrpo } from "./grpo.ts";
import { ModelRuntime } from "./model-runtime.ts";
import {
  checkpointFacts,
  LOAD_PHASE_TEXT,
  LOAD_PHASES,
  type LoadPhase,
  type ModelSummary,
  summaryLine,
} from "./model-summary.ts";
import { runSelect } from "./select.ts";
import { runSelfConsistency } from "./selfconsistency.ts";
import { runWarmup } from "./warmup.ts";
import { runPrmData } from "../prm/prm-data.ts";
import { runPrmTrain } from "../prm/prm-train.ts";

/** One cell's outcome in the summary. */
export interface CellSummary {
  id: string;
  type: Cell["type"];
  ms: number;
  /** The stage's headline execution accuracy (evaluate: greedy; select: the winner's; warm-up: last round's samples; GRPO: last held-out check or last batch; self-consistency: the vote). */
  accuracy?: number;
  report?: StageReport;
  /** A model cell: what it loaded (name, shape, dtype, LoRA, provider, load time, bytes). */
  model?: ModelSummary;
  /** Reused from an earlier run of this folder (RunHooks.reuseFinished): `ms` is that run's. */
  reused?: boolean;
}

/** What a run returns (and writes as summary.json). */
export interface RunSummary {
  title: string;
  cells: CellSummary[];
  /** Cell id -> headline execution accuracy, in notebook order. */
  accuracy: Record<string, number>;
  /** Files the run wrote at the end (adapter, summary). */
  files: string[];
  /** The run's knobs outside the notebook (seed and step cap as `rlvr run` was given them); absent in older summaries. */
  options?: { seed: number | null; maxSteps: number | null };
}

/** Callbacks and knobs of one run. */
export interface RunHooks {
  opts?: Partial<RunOptions>;
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  onMetrics?: (r: MetricsRecord) => void;
  onLog?: (msg: string) => void;
  /** Replaces every model cell's source (headless: a local model folder). */
  modelOverride?: string;
  /**
   * Reuse the reports of evaluate and self-consistency cells that finished in an earlier run of this folder with the
   * same notebook up to them, options and model (cells/<id>.json): a resumed run (`rlvr run` into its folder again)
   * then does not evaluate and sample again what it had finished. Cells run in order, so such a cell's earlier
   * cells had finished too, and the training cells among them restore their final checkpoints.
   */
  reuseFinished?: boolean;
  /**
   * Hears each cell as it finishes (reused ones too), before the next one starts: the page keeps every
   * finished cell's output at once, so a Stop, a failure or a reload later in the run loses none of them.
   */
  onCellDone?: (entry: CellSummary) => Promise<void> | void;
}

/** What a reusable cell leaves in its run folder (RunHooks.reuseFinished). */
interface FinishedCell {
  key: string;
  entry: CellSummary;
  /** The metric indices the cell took (context.ts nextIndex), so later cells number theirs as in an uninterrupted run. */
  counters: Record<string, number>;
}

const REUSABLE: readonly Cell["type"][] = ["evaluate", "selfconsistency"];

/** What a reusable cell's report depends on: the notebook up to it, the run's options, the model override. */
function finishedKey(doc: Notebook, index: number, opts: RunOptions, modelOverride: string | undefined): string {
  return JSON.stringify({
    cells: doc.cells.slice(0, index + 1).map((c) => ({ id: c.id, type: c.type, params: c.params })),
    opts,
    modelOverride: modelOverride ?? null,
  });
}

/** The headline accuracy of a stage report. */
export function headline(r: StageReport, lastGrpoAcc: number | null): number | undefined {
  switch (r.kind) {
    case "evaluate":
      return r.overall.greedy;
    case "select":
      return Math.max(...r.entries.map((e) => e.accuracy));
    case "warmup":
      return r.rounds.at(-1)?.sampleAccuracy;
    case "grpo":
      return r.heldout.at(-1)?.accuracy ?? lastGrpoAcc ?? undefined;
    case "selfconsistency":
      return r.voteAccuracy;
    case "prmdata":
      return r.curated.chains ? r.curated.correctChains / r.curated.chains : undefined;
    case "prmtrain":
      return r.dev?.accuracy;
    case "export":
    case "ask":
      return undefined;
  }
}

/** Runs every cell of `doc` in order; returns the summary (also written to summary.json). */
export async function runNotebook(doc: Notebook, env: RunEnv, hooks: RunHooks = {}): Promise<RunSummary> {
  const ctx: RunContext = {
    env,
    opts: { ...DEFAULT_RUN_OPTIONS, ...hooks.opts },
    signal: hooks.signal ?? new AbortController().signal,
    onProgress: hooks.onProgress ?? (() => {}),
    onMetrics: hooks.onMetrics ?? (() => {}),
    onLog: hooks.onLog ?? (() => {}),
    dataset: null,
    model: null,
    prompt: null,
    reward: null,
    counters: {},
  };
  const summary: RunSummary = {
    title: doc.title,
    cells: [],
    accuracy: {},
    files: [],
    options: { seed: ctx.opts.seed, maxSteps: ctx.opts.maxSteps },
  };
  let lastGrpoAcc: number | null = null;
  const metricsTap = ctx.onMetrics;
  ctx.onMetrics = (r) => {
    if (r.phase === "grpo" && r.execAccuracy !== undefined) lastGrpoAcc = r.execAccuracy;
    metricsTap(r);
  };
  let trained: string | null = null;
  const makeRuntime = async (
    which: ModelParams | string,
    p: ModelParams,
    onFile?: (file: string, loaded: number, total: number | null) => void,
    onPhase?: (phase: LoadPhase) => void,
  ): Promise<ModelRuntime> => {
    const signal = ctx.signal;
    // The adapter first (small): a missing or unreadable one fails before the model downloads.
    let imported: { adapter: LoraAdapter; from: string } | undefined;
    if (p.adapter) {
      const { source, where } = env.adapterSource(p.adapter);
      ctx.onLog(`importing LoRA adapter from ${where}`);
      imported = { adapter: await readPeftAdapter(source), from: where };
    }
    const hf = await env.loadModel(which, { signal, onProgress: onFile });
    onPhase?.("device");
    const rt = await ModelRuntime.create(hf, () => env.gpuDevice(), {
      dtype: p.dtype,
      loraRank: p.loraRank,
      loraAlpha: p.loraAlpha,
      seed: 0,
      imported,
      onNote: ctx.onLog,
      signal,
      onPhase,
    });
    if (!onPhase) return rt;
    try {
      onPhase("shaders");
      await rt.warmUp();
      checkAborted(ctx);
    } catch (e) {
      await rt.release();
      throw e;
    }
    return rt;
  };
  let loaded: ModelSummary | undefined;
  try {
    // The document the outputs came from, beside them (a resumed run rewrites it).
    await env.store.write("notebook.json", JSON.stringify(doc, null, 1));
    for (const [index, cell] of doc.cells.entries()) {
      const t0 = env.now();
      const entry: CellSummary = { id: cell.id, type: cell.type, ms: 0 };
      const reusable = hooks.reuseFinished === true && REUSABLE.includes(cell.type);
      const key = reusable ? finishedKey(doc, index, ctx.opts, hooks.modelOverride) : "";
      const counters = { ...ctx.counters };
      if (reusable) {
        const prev = await readFinished(env, cell.id);
        if (prev?.key === key) {
          for (const [phase, n] of Object.entries(prev.counters)) ctx.counters[phase] = (ctx.counters[phase] ?? 0) + n;
          if (prev.entry.accuracy !== undefined) summary.accuracy[cell.id] = prev.entry.accuracy;
          summary.cells.push({ ...prev.entry, reused: true });
          await hooks.onCellDone?.({ ...prev.entry, reused: true });
          ctx.onLog(
            `cell "${cell.id}" (${cell.type}): finished in an earlier run of this folder with the same notebook up to it: its report is reused (cells/${cell.id}.json)`,
          );
          continue;
        }
      }
      try {
        loaded = undefined;
        ctx.cellId = cell.id;
        const report = await runCell(ctx, cell, {
          makeRuntime,
          modelOverride: hooks.modelOverride,
          trained,
          doc,
          onLoaded: (s) => (loaded = s),
        });
        if (loaded) entry.model = loaded;
        if (report) {
          entry.report = report;
          const acc = headline(report, lastGrpoAcc);
          if (acc !== undefined) {
            entry.accuracy = acc;
            summary.accuracy[cell.id] = acc;
          }
          if (report.kind === "warmup" || report.kind === "grpo") trained = cell.id;
        }
      } catch (caught) {
        let e = caught;
        // Stopped (while a model loads too, where the abort reason itself is thrown): say so as every
        // stage does ("run cancelled: ..."), so the cell shows "stopped".
        if (ctx.signal.aborted) {
          try {
            checkAborted(ctx);
          } catch (x) {
            e = x;
          }
        }
        const msg = e instanceof Error ? e.message : String(e);
        throw new Error(msg.startsWith(`cell "${cell.id}"`) ? msg : `cell "${cell.id}" (${cell.type}): ${msg}`, {
          cause: e,
        });
      }
      entry.ms = env.now() - t0;
      summary.cells.push(entry);
      if (reusable && entry.report) {
        const took = Object.fromEntries(
          Object.entries(ctx.counters).map(([k, v]) => [k, v - (counters[k] ?? 0)]).filter(([, v]) => v !== 0),
        );
        const rec: FinishedCell = { key, entry, counters: took };
        await env.store.write(`cells/${cell.id}.json`, JSON.stringify(rec));
      }
      await hooks.onCellDone?.(entry);
    }
    // The page's Ask runs the setup cells and the ask cell only: its runtime's adapter is the fresh one,
    // which must not replace the adapter the run trained.
    const asksOnly = doc.cells.some((c) => c.type === "ask") &&
      !doc.cells.some((c) => c.type === "warmup" || c.type === "grpo");
    if (ctx.model && !asksOnly) {
      summary.files.push(...(await writeAdapter(env.store, "adapter", ctx.model.runtime, ctx.model.runtime.hf.name)));
    }
    await env.store.write("summary.json", JSON.stringify(summary, null, 1));
    summary.files.push("summary.json");
    return summary;
  } finally {
    await ctx.model?.runtime.release();
    ctx.dataset?.sql.close();
  }
}

/** A reusable cell's record from an earlier run, or null (none, unreadable, or of another shape). */
async function readFinished(env: RunEnv, cellId: string): Promise<FinishedCell | null> {
  try {
    const bytes = await env.store.read(`cells/${cellId}.json`);
    if (!bytes) return null;
    const r = JSON.parse(new TextDecoder().decode(bytes)) as Partial<FinishedCell>;
    return typeof r.key === "string" && r.entry && typeof r.entry === "object" && r.counters &&
        typeof r.counters === "object"
      ? (r as FinishedCell)
      : null;
  } catch {
    return null;
  }
}

interface CellEnv {
  makeRuntime: (
    which: ModelParams | string,
    p: ModelParams,
    onFile?: (file: string, loaded: number, total: number | null) => void,
    onPhase?: (phase: LoadPhase) => void,
  ) => Promise<ModelRuntime>;
  onLoaded: (s: ModelSummary) => void;
  modelOverride?: string;
  trained: string | null;
  doc: Notebook;
}

async function runCell(ctx: RunContext, cell: Cell, e: CellEnv): Promise<StageReport | null> {
  switch (cell.type) {
    case "markdown":
    case "gpu":
      return null;
    case "dataset": {
      const src = await ctx.env.loadDataset(cell.params);
      const splits = buildSplits(cell.params, src.splits);
      ctx.dataset?.sql.close();
      resetDatasetCache(ctx);
      ctx.dataset = { params: cell.params, splits, sql: ctx.env.sqlRunner(cell.params) };
      ctx.onLog(`dataset ${src.describe}: ${Object.entries(splits).map(([k, v]) => `${k} ${v.length}`).join(", ")}`);
      return null;
    }
    case "model": {
      const t0 = ctx.env.now();
      const report = progressReporter(ctx, cell.id, "model");
      report(0, "loading the model files…");
      // The download is the first half of the bar (per file: the total of all files is not known up
      // front); the load phases after it share the second half, each with its own line.
      const phaseAt = (ph: LoadPhase) => 0.5 + (0.5 * LOAD_PHASES.indexOf(ph)) / LOAD_PHASES.length;
      const t1: { at: number; phase: LoadPhase | "download" } = { at: ctx.env.now(), phase: "download" };
      const times: Partial<Record<LoadPhase | "download", number>> = {};
      const onPhase = (ph: LoadPhase) => {
        times[t1.phase] = ctx.env.now() - t1.at;
        ctx.onLog(
          `model "${cell.id}": ${t1.phase} took ${((times[t1.phase] ?? 0) / 1000).toFixed(1)} s; ${
            LOAD_PHASE_TEXT[ph]
          }`,
        );
        Object.assign(t1, { at: ctx.env.now(), phase: ph });
        report(phaseAt(ph), LOAD_PHASE_TEXT[ph]);
      };
      const runtime = await e.makeRuntime(
        e.modelOverride ?? cell.params,
        cell.params,
        (file, got, total) =>
          report(
            0.5 * (total ? got / total : 0),
            `reading ${file}: ${(got / (1 << 20)).toFixed(1)}${
              total ? ` of ${(total / (1 << 20)).toFixed(1)}` : ""
            } MB`,
          ),
        onPhase,
      );
      try {
        times[t1.phase] = ctx.env.now() - t1.at;
        ctx.onLog(`model "${cell.id}": ${t1.phase} took ${((times[t1.phase] ?? 0) / 1000).toFixed(1)} s`);
        report(1, "checking the trainer's device…");
        const trainerProjections = await runtime.trainerProjections().catch(() => null);
        checkAborted(ctx);
        const s: ModelSummary = {
          name: runtime.hf.name,
          source: runtime.hf.source,
          ...checkpointFacts(runtime.hf.config, runtime.hf.weights),
          dtype: runtime.policy.dtype,
          precision: runtime.policy.precision,
          lora: {
            rank: runtime.adapter.r,
            alpha: runtime.adapter.alpha,
            targets: [...runtime.adapter.targets],
            ...(runtime.imported ? { imported: runtime.imported } : {}),
          },
          policyProvider: runtime.policy.provider,
          trainerProjections,
          contextLength: runtime.policy.maxPositions,
          loadMs: ctx.env.now() - t0,
          transferred: runtime.hf.transferred ?? null,
          phaseMs: times,
        };
        await ctx.model?.runtime.release();
        // PRMs were built on the released model's weights (the runtime freed them with it).
        ctx.prms?.clear();
        ctx.model = { params: cell.params, runtime };
        ctx.onLog(summaryLine(s));
        ctx.onProgress({ cellId: cell.id, stage: "model", fraction: 1, etaSeconds: 0, message: "loaded", model: s });
        e.onLoaded(s);
      } catch (err) {
        if (ctx.model?.runtime !== runtime) await runtime.release();
        throw err;
      }
      return null;
    }
    case "prompt":
      ctx.prompt = cell.params;
      return null;
    case "reward":
      ctx.reward = { spec: cell.params.spec, comparison: cell.params.comparison };
      return null;
    case "evaluate":
      return await runEvaluate(ctx, cell.id, cell.params, e.trained ? `after ${e.trained}` : "baseline");
    case "select": {
      const mp = ctx.model?.params;
      if (!mp) throw new Error("needs a model cell before it");
      // Other candidates start fresh: the model cell's adapter was trained on the model cell's model.
      const { adapter: _adapter, ...fresh } = mp;
      return await runSelect(ctx, cell.id, cell.params, (m) => e.makeRuntime(m, fresh));
    }
    case "warmup":
      return await runWarmup(ctx, cell.id, cell.params);
    case "grpo":
      return await runGrpo(ctx, cell.id, cell.params);
    case "selfconsistency":
      return await runSelfConsistency(ctx, cell.id, cell.params);
    case "prmdata":
      return await runPrmData(ctx, cell.id, cell.params);
    case "prmtrain": {
      // Without its own `data`, the nearest PRM data cell before it.
      const at = e.doc.cells.findIndex((c) => c.id === cell.id);
      const data = e.doc.cells.slice(0, Math.max(0, at)).reverse().find((c) => c.type === "prmdata")?.id ?? null;
      return await runPrmTrain(ctx, cell.id, cell.params, data);
    }
    case "export":
      return await runExport(ctx, cell.id, cell.params.what, e.doc);
    case "ask":
      return await runAsk(ctx, cell.id, cell.params);
  }
}

async function runExport(
  ctx: RunContext,
  cellId: string,
  what: "adapter" | "metrics" | "samples" | "notebook",
  doc: Notebook,
): Promise<StageReport> {
  const store = ctx.env.store;
  const files: string[] = [];
  switch (what) {
    case "adapter": {
      const model = ctx.model;
      if (!model) throw new Error("needs a model cell before it");
      files.push(...(await writeAdapter(store, `export/${cellId}/adapter`, model.runtime, model.runtime.hf.name)));
      const grpo = [...doc.cells].reverse().find((c) => c.type === "grpo");
      if (grpo && grpo.type === "grpo") {
        const cfg = trlConfig(grpo.params, model.params, model.runtime.adapter.targets, {
          maxSteps: ctx.opts.maxSteps,
          seed: ctx.opts.seed,
        });
        await store.write(`export/${cellId}/trl_grpo_config.json`, JSON.stringify(cfg, null, 1));
        files.push(`export/${cellId}/trl_grpo_config.json`);
      }
      if (ctx.dataset && ctx.prompt && ctx.reward) {
        const tasks = ctx.dataset.splits[ctx.dataset.params.split] ?? [];
        const prompts = await toolsFor(ctx, cellId).prompter.prompts(tasks);
        await store.write(`export/${cellId}/prompts.jsonl`, promptsJsonl(tasks, prompts));
        files.push(`export/${cellId}/prompts.jsonl`);
      }
      break;
    }
    case "notebook":
      await store.write(`export/${cellId}/notebook.json`, JSON.stringify(doc, null, 1));
      files.push(`export/${cellId}/notebook.json`);
      break;
    case "metrics":
      files.push("metrics.jsonl");
      break;
    case "samples":
      files.push("samples.jsonl");
      break;
  }
  return { kind: "export", cellId, files };
}
