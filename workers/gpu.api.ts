// The comlink contract of workers/gpu.worker.ts, imported by both sides.
import type { MetricsRecord } from "../src/core/metrics.ts";
import type { Notebook } from "../src/core/notebook.ts";
import type { MatmulBenchResult } from "../src/gpu/bench.ts";
import type { GpuInfo } from "../src/gpu/device.ts";
import type { CacheUsage } from "../src/model/source.web.ts";
import type { Progress, RunOptions } from "../src/runtime/recipe/context.ts";
import type { CellSummary, RunSummary } from "../src/runtime/recipe/runner.ts";
import type { UploadedDataset } from "../src/runtime/recipe/env.web.ts";
import type { SampleRecord } from "../src/runtime/records.ts";
import type { RunInfo, RunMode } from "../src/runtime/run-plan.ts";

export type {
  CacheUsage,
  CellSummary,
  GpuInfo,
  MatmulBenchResult,
  Progress,
  RunInfo,
  RunMode,
  RunSummary,
  UploadedDataset,
};

/** What the GPU worker found: an adapter, or why there is none and how to get one. */
export type GpuProbe =
  | { available: true; info: GpuInfo }
  | { available: false; reason: string };

/** A run to start: which cells of `doc`, into the run folder `runId` (created or resumed). */
export interface RunRequest {
  runId: string;
  doc: Notebook;
  mode: RunMode;
  /** The cell of modes "cell" and "from". */
  cellId?: string;
  opts?: Partial<RunOptions>;
  /** The app's base URL: the demo data at `demo/`, the demo model at `model/`, relative cell URLs. */
  baseUrl: string;
  /** The files of a dataset cell with source "upload" (the page transfers the database bytes). */
  uploads?: UploadedDataset;
}

/** Streams of a run, called from the worker (comlink proxies). */
export interface RunEvents {
  progress(p: Progress): void;
  metrics(r: MetricsRecord): void;
  /** Sample records as the runners append them to samples.jsonl. */
  samples(records: SampleRecord[]): void;
  log(msg: string): void;
  /** A cell finished (its output is already kept in the run folder's outputs.json). */
  cellDone?(c: CellSummary): void;
}

/** How a run ended. A failure names its cell when the runner did. */
export type RunOutcome =
  | { ok: true; summary: RunSummary }
  | { ok: false; error: string; cellId: string | null; stopped: boolean };

/** Where the worker keeps runs: OPFS (survives a reload) or memory (no OPFS in this browser). */
export type RunStorage = { kind: "opfs" | "memory"; note?: string };

/** The API the GPU worker exposes. It owns the one GPUDevice of the page. */
export interface GpuWorkerApi {
  /** Requests the adapter and device (once) and describes them. */
  probe(): Promise<GpuProbe>;
  /** GFLOP/s of the tiled matmul kernel on a size^3 product; progress in [0, 1]. */
  benchmarkMatmul(size: number, onProgress?: (fraction: number) => void): Promise<MatmulBenchResult>;
  /** Starts a run and resolves when it ends (done, failed or stopped); one run at a time. */
  startRun(req: RunRequest, events: RunEvents): Promise<RunOutcome>;
  /** Stops the run in progress (its AbortSignal); true when one was running. */
  stopRun(reason?: string): Promise<boolean>;
  /** Runs kept in storage, newest first, with their newest checkpoint steps. */
  listRuns(): Promise<RunInfo[]>;
  /** A text file of a run folder (metrics.jsonl, samples.jsonl, summary.json), or null. */
  readRunFile(runId: string, name: string): Promise<string | null>;
  /** Any file of a run folder as bytes (an exported adapter, a warm-up dataset), or null. */
  readRunBytes(runId: string, name: string): Promise<Uint8Array | null>;
  /** Deletes a run folder. */
  removeRun(runId: string): Promise<void>;
  /** Where runs are kept. */
  storage(): Promise<RunStorage>;
  /** What the model-file cache (OPFS, "hub" and "url" model sources) holds; null without OPFS. */
  modelCache(): Promise<CacheUsage | null>;
  /** Deletes every cached model file; returns what was removed (null without OPFS). */
  clearModelCache(): Promise<CacheUsage | null>;
}
