// The run context the stage runners share: data per split, the model runtime (policy + trainer
// on one adapter), prompt settings, reward, SQL execution, the output store, the metrics and
// sample sinks, progress and cancellation. Nothing here touches Deno or the DOM: the environment
// (files, model folders, GPU, SQL workers) is injected through `RunEnv`, so the page's GPU worker
// can host the same runners.
import type { CompareMode } from "../../core/compare.ts";
import { encodeMetrics, type MetricsRecord } from "../../core/metrics.ts";
import type { DatasetParams, ModelParams, PromptParams } from "../../core/notebook-params.ts";
import type { RewardSpec } from "../../core/rewards.ts";
import type { DbSchema } from "../../core/schema.ts";
import type { Task } from "../../core/types.ts";
import type { HfModel, LoadProgressFn } from "../../model/hf.ts";
import type { ModelSource } from "../../model/source.ts";
import type { QueryReply } from "../sql-exec.ts";
import type { FileStore } from "../store.ts";
import { encodeSample, type SampleRecord } from "../records.ts";
import type { ModelRuntime } from "./model-runtime.ts";
import type { ModelSummary } from "./model-summary.ts";
import type { PrmModel } from "../prm/prm-model.ts";

/** Runs one read-only query (SqlPool satisfies it; tests may run sql.js in process). */
export interface SqlRunner {
  /** `timeoutMs` overrides the runner's own limit for this query. */
  query(dbId: string, sql: string, o?: { timeoutMs?: number }): Promise<QueryReply>;
}

/** Questions of a dataset by split name, and where its databases come from. */
export interface DatasetSource {
  /** Splits as the source defines them (the demo: train, test, heldout; a single file: its `split`). */
  splits: Record<string, Task[]>;
  /** A description for messages ("demo", a path, a URL). */
  describe: string;
}

/** What the host provides: files, models, GPU, SQL. Deno: env.deno.ts; the browser: the GPU worker. */
export interface RunEnv {
  /** Where outputs go (metrics, samples, predictions, checkpoints, adapter, exports). */
  store: FileStore;
  /** Reads a dataset cell's questions. */
  loadDataset(p: DatasetParams): Promise<DatasetSource>;
  /** A SQL runner over the dataset's databases (one per dataset; closed by `close`). */
  sqlRunner(p: DatasetParams): SqlRunner & { close(): void };
  /** The schema of one database, for prompts (introspection with sql.js where the host runs). */
  schemaOf(p: DatasetParams, dbId: string): Promise<DbSchema>;
  /**
   * Loads a model: a model cell, or a select cell's candidate string ("demo", "owner/name", a URL or
   * folder). An aborted `signal` rejects with its reason (checked between files); `onProgress` gets
   * each file's bytes as they arrive.
   */
  loadModel(
    which: ModelParams | string,
    o?: { signal?: AbortSignal; onProgress?: LoadProgressFn },
  ): Promise<HfModel & { name: string }>;
  /**
   * The folder of a model cell's `adapter` (PEFT: adapter_config.json + adapter_model.safetensors),
   * resolved as the cell's `url` is (relative to the notebook's folder headless, to the app's base
   * in the page); `where` names it for messages and the model summary.
   */
  adapterSource(ref: string): { source: ModelSource; where: string };
  /** The GPUDevice the trainer runs on. */
  gpuDevice(): Promise<GPUDevice>;
  /** Wall clock in milliseconds (injected so tests can pin it). */
  now(): number;
}

/** Progress of the running cell: fraction in [0, 1] and an ETA in seconds (null until known). */
export interface Progress {
  cellId: string;
  stage: string;
  fraction: number;
  etaSeconds: number | null;
  message: string;
  /** A model cell's last progress: what it loaded (so the page shows it while later cells run). */
  model?: ModelSummary;
}

/** Knobs of the run that are not in the notebook. */
export interface RunOptions {
  /** Samples kept per step in samples.jsonl (default 16). */
  samplesPerStep: number;
  /** Caps every GRPO cell's steps (the schedules keep the cell's own step count). */
  maxSteps: number | null;
  /** Overrides the seeds of the cells that have one. */
  seed: number | null;
  /** SQL worker count etc. are the env's business; this caps prompt batch per sampling call. */
  sampleBatchPrompts: number;
  /** Sequences per trainer forward/backward pass (gradients accumulate over passes; bounds activation memory). */
  trainMicroBatch: number;
}

/** Defaults of RunOptions. */
export const DEFAULT_RUN_OPTIONS: RunOptions = {
  samplesPerStep: 16,
  maxSteps: null,
  seed: null,
  sampleBatchPrompts: 16,
  trainMicroBatch: 8,
};

/** The state the cells build up, in notebook order. */
export interface RunContext {
  env: RunEnv;
  opts: RunOptions;
  signal: AbortSignal;
  onProgress: (p: Progress) => void;
  onMetrics: (r: MetricsRecord) => void;
  onLog: (msg: string) => void;
  dataset: { params: DatasetParams; splits: Record<string, Task[]>; sql: SqlRunner & { close(): void } } | null;
  model: { params: ModelParams; runtime: ModelRuntime } | null;
  prompt: PromptParams | null;
  reward: { spec: RewardSpec; comparison: CompareMode } | null;
  /** The cell running now: emitMetrics and emitSamples stamp it on the records (MetricsRecord.cell). */
  cellId?: string;
  /** Metric indices per phase, so each stage's records are numbered in order across cells. */
  counters: Record<string, number>;
  /** The PRMs of the PRM train cells run so far, by cell id, in the order they ran (on the current model). */
  prms?: Map<string, PrmModel>;
}

/** Appends one metrics record to metrics.jsonl and tells the listener. */
export async function emitMetrics(ctx: RunContext, r: MetricsRecord): Promise<void> {
  const rec = ctx.cellId !== undefined && r.cell === undefined ? { ...r, cell: ctx.cellId } : r;
  await ctx.env.store.append("metrics.jsonl", encodeMetrics(rec));
  ctx.onMetrics(rec);
}

/** Appends sample records to samples.jsonl (the caller keeps them within `samplesPerStep`). */
export async function emitSamples(ctx: RunContext, records: readonly SampleRecord[]): Promise<void> {
  if (records.length === 0) return;
  const stamped = ctx.cellId === undefined
    ? records
    : records.map((r) => (r.cell === undefined ? { ...r, cell: ctx.cellId } : r));
  await ctx.env.store.append("samples.jsonl", stamped.map(encodeSample).join(""));
}

/** Throws the signal's reason when the run was cancelled. */
export function checkAborted(ctx: RunContext): void {
  if (ctx.signal.aborted) {
    throw new Error(`run cancelled${ctx.signal.reason instanceof Error ? `: ${ctx.signal.reason.message}` : ""}`);
  }
}

/** The dataset, model, prompt and reward, or an error naming the missing cell. */
export function requireSetup(ctx: RunContext, cellId: string): {
  dataset: NonNullable<RunContext["dataset"]>;
  model: NonNullable<RunContext["model"]>;
  prompt: PromptParams;
  reward: NonNullable<RunContext["reward"]>;
} {
  const miss = (what: string) => new Error(`cell "${cellId}" needs a ${what} cell before it`);
  if (!ctx.dataset) throw miss("dataset");
  if (!ctx.model) throw miss("model");
  if (!ctx.prompt) throw miss("prompt");
  if (!ctx.reward) throw miss("reward");
  return { dataset: ctx.dataset, model: ctx.model, prompt: ctx.prompt, reward: ctx.reward };
}

/** The tasks of split `name`, or an error listing the splits there are. */
export function splitTasks(ctx: RunContext, cellId: string, name: string): Task[] {
  const d = ctx.dataset;
  if (!d) throw new Error(`cell "${cellId}" needs a dataset cell before it`);
  const tasks = d.splits[name];
  if (!tasks) {
    throw new Error(`cell "${cellId}": no split "${name}" (the dataset has ${Object.keys(d.splits).join(", ")})`);
  }
  if (tasks.length === 0) throw new Error(`cell "${cellId}": split "${name}" is empty`);
  return tasks;
}

/** A 32-bit seed mixed from parts (FNV-1a over their decimal text): one seed per stage and step. */
export function mixSeed(...parts: (number | string)[]): number {
  let h = 0x811c9dc5;
  for (const ch of parts.join("/")) {
    h ^= ch.charCodeAt(0);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/**
 * The least fraction done before a cell's time left is extrapolated: below it one slow first batch (the
 * prompts' prefill, shader compilation) weighs so much that the estimate fell by orders of magnitude as
 * the run went on (364 h, 182 h, 37 h, then 2 h 39 min on a software GPU). Until then: null ("measuring").
 */
export const ETA_MIN_FRACTION = 0.1;

/** Seconds left at `fraction` done after `elapsed` seconds, or null while too little is done to say. */
export function etaOf(fraction: number, elapsed: number): number | null {
  return fraction >= ETA_MIN_FRACTION && elapsed > 0 ? (elapsed * (1 - fraction)) / fraction : null;
}

/** Reports progress with an ETA from the elapsed time and the fraction done (etaOf). */
export function progressReporter(
  ctx: RunContext,
  cellId: string,
  stage: string,
): (fraction: number, message: string) => void {
  const t0 = ctx.env.now();
  return (fraction, message) => {
    const f = Math.min(1, Math.max(0, fraction));
    const elapsed = (ctx.env.now() - t0) / 1000;
    ctx.onProgress({ cellId, stage, fraction: f, etaSeconds: f >= 1 ? 0 : etaOf(f, elapsed), message });
  };
}

/** The next metric index of `phase` (0, 1, ...). */
export function nextIndex(ctx: RunContext, phase: string): number {
  const i = ctx.counters[phase] ?? 0;
  ctx.counters[phase] = i + 1;
  return i;
}
