// The page's run state: which cells are running, waiting, done or failed, their progress (the latest line and every phase so far), reports,
// metrics and sample records, errors with their remedies, and the resumption of a run a reload
// interrupted. Runs happen in the GPU worker (workers/run-host.ts); this only talks to its API and
// never touches the saved document (runtime state stays apart from it). Uploaded datasets go to the
// worker with the run request (their bytes transferred); the model-file cache is reported and cleared here.
import { parseQuestions } from "../core/loaders.ts";
import type { MetricsRecord } from "../core/metrics.ts";
import { decodeMetrics, withSteps } from "../core/metrics.ts";
import type { Cell, Notebook } from "../core/notebook.ts";
import type { Progress } from "../runtime/recipe/context.ts";
import { decodeSamples, type SampleRecord, type StageReport } from "../runtime/records.ts";
import type { CellSummary, RunSummary } from "../runtime/recipe/runner.ts";
import type { ModelSummary } from "../runtime/recipe/model-summary.ts";
import type {
  CacheUsage,
  GpuWorkerApi,
  RunEvents,
  RunInfo,
  RunOutcome,
  RunRequest,
  UploadedDataset,
} from "../../workers/gpu.api.ts";
import {
  classifyRunError,
  NO_UPLOAD_MESSAGE,
  planRun,
  REMEDIES,
  type RunErrorKind,
  runIdOf,
  type RunMode,
  uploadCell,
  uploadKey,
} from "../runtime/run-plan.ts";
import {
  estimateRun,
  LONG_RUN_SECONDS,
  quickPreset,
  remainingSeconds,
  type RunEstimate,
} from "../runtime/run-estimate.ts";

/** Where a cell stands in the current (or last) run. */
export type CellRunStatus = "idle" | "waiting" | "running" | "done" | "failed" | "stopped";

/** A failure shown in the cell that failed. */
export interface CellRunError {
  kind: RunErrorKind;
  message: string;
  remedy: string;
  /** How to continue (device lost, stopped): the same run again, resuming from checkpoints. */
  resume: { mode: RunMode; cellId: string | null } | null;
  /** The button that does `resume`: "Resume" only where the cell kept a checkpoint to resume from. */
  resumeLabel: "Resume" | "Run again";
}

/**
 * One phase of a cell's run as its progress lines told it: the line it showed last and when it
 * began and last changed (ms since the run started). Lines that differ only in their numbers
 * ("decoding (greedy) 3/8 questions, 96 tokens") are one phase.
 */
export interface ProgressEntry {
  message: string;
  startMs: number;
  lastMs: number;
}

/** Phases a cell keeps (its last ones): a long GRPO run has a few per step. */
export const PROGRESS_HISTORY_CAP = 200;

/** What makes two progress lines the same phase: their text without its numbers. */
export function phaseKey(message: string): string {
  return message.replace(/\d+(?:\.\d+)?/g, "#");
}

/** `history` with progress line `message` at `t` ms: the last phase updated, or a new one. */
export function withProgress(history: readonly ProgressEntry[], message: string, t: number): ProgressEntry[] {
  const last = history.at(-1);
  if (last && phaseKey(last.message) === phaseKey(message)) {
    return [...history.slice(0, -1), { ...last, message, lastMs: t }];
  }
  return [...history.slice(-(PROGRESS_HISTORY_CAP - 1)), { message, startMs: t, lastMs: t }];
}

/** One cell's runtime state (never saved with the document). */
export interface CellRunState {
  status: CellRunStatus;
  progress: Progress | null;
  /** Every phase of the cell's current (or last) run, in order (`progress` is only the latest line). */
  history: ProgressEntry[];
  error: CellRunError | null;
  report: StageReport | null;
  accuracy: number | null;
  /** Metrics records emitted while this cell was running. */
  metrics: MetricsRecord[];
  /** Sample records drawn while this cell was running. */
  samples: SampleRecord[];
  /** GRPO: the step a resumed run continued from. */
  resumedFrom: number | null;
  /** A model cell: what it loaded. */
  model: ModelSummary | null;
}

/** The parts of the worker API a run needs (the page passes the comlink remote); the model cache is optional. */
export type RunApi =
  & Pick<GpuWorkerApi, "startRun" | "stopRun" | "listRuns" | "readRunFile" | "removeRun" | "storage">
  & Partial<Pick<GpuWorkerApi, "modelCache" | "clearModelCache" | "readRunBytes" | "benchmarkMatmul">>;

/** Run all's plan on a device where the notebook is long: its time, the quick version's, what that gives up. */
export interface RunProposal {
  full: RunEstimate;
  quick: RunEstimate;
  givesUp: string[];
}

/** Wraps the run events for the worker (comlink.proxy in the page; identity in tests). */
export type EventsWrapper = (events: RunEvents) => RunEvents;

/** What else the page gives the controller. */
export interface RunControllerOptions {
  /** The files uploaded in the dataset cell (dataset-upload.ts `uploadedDataset`), or null. */
  uploads?: () => UploadedDataset | null;
  /** Fires "change" when the uploaded files change (dataset-upload.ts `uploads`): see `uploadsChanged`. */
  uploadEvents?: EventTarget;
  /** Fires "change" when the document changes (the NotebookController): see `paramsChanged`. */
  docEvents?: EventTarget;
  /** Marks buffers of the request to be moved, not copied, to the worker (Comlink.transfer in the page). */
  transfer?: <T>(value: T, buffers: Transferable[]) => T;
  /** Replaces the open document (the quick version of the notebook, through the notebook's undoable actions). */
  applyDoc?: (doc: Notebook) => void;
}

/** Where a finished cell's samples are in samples.jsonl (written by workers/run-host.ts into outputs.json). */
function sampleLinesOf(x: unknown): { from: number; count: number } | null {
  if (typeof x !== "object" || x === null || !("sampleLines" in x)) return null;
  const r = x.sampleLines;
  if (typeof r !== "object" || r === null || !("from" in r) || !("count" in r)) return null;
  return typeof r.from === "number" && typeof r.count === "number" ? { from: r.from, count: r.count } : null;
}

/**
 * What a training cell (GRPO, warm-up) keeps after its run stopped or failed, in the user's words: the checkpoint
 * `step` of the run folder (0: none). Null for other cells. A Stop lands between decoding steps, so it often comes
 * before the first step or round has finished: then nothing of the cell is kept, and the cell says so rather than
 * promise a checkpoint.
 */
export function trainingKept(cell: Cell | undefined, step: number): string | null {
  const unit = cell?.type === "grpo" ? "step" : cell?.type === "warmup" ? "round" : null;
  if (!cell || !unit) return null;
  const total = cell.type === "grpo" ? cell.params.steps : cell.type === "warmup" ? cell.params.rounds : 0;
  if (step <= 0) {
    return `No ${unit} of this cell had finished, so it has no checkpoint: running it again starts at ${unit} 1 of ${total}.`;
  }
  if (step >= total) return `All ${total} ${unit}s of this cell are checkpointed: running it again restores them.`;
  return `Its checkpoint is kept at ${unit} ${step} of ${total}: running it again continues from ${unit} ${step + 1}.`;
}

/** What to do when the dataset cell's uploaded files are missing (none, or a database the questions name). */
export const UPLOAD_REMEDY =
  "Upload the missing file in the dataset cell (the message above names it: the questions file, or each database as its .sqlite file), then run the cell again.";

/** The run failed because files it reads were not uploaded (the page's or the worker's words). */
function isUploadMissing(message: string): boolean {
  return message.includes(NO_UPLOAD_MESSAGE) || /\bnot uploaded\b/.test(message);
}

/** The device-lost remedy where this cell kept no checkpoint (REMEDIES' promises one to resume from). */
const DEVICE_LOST_NOTHING_KEPT =
  'The GPU device was lost (driver reset, another tab took the memory, or the system slept). Press "Run again": finished cells and their checkpoints are kept, this cell starts over.';

/** The uploaded files' part of a run folder's id (runIdOf's "-u…"), or null for a run without uploads. */
function filesPart(runId: string): string | null {
  return /-u[0-9a-f]+$/.exec(runId)?.[0] ?? null;
}

const empty = (): CellRunState => ({
  status: "idle",
  progress: null,
  history: [],
  error: null,
  report: null,
  accuracy: null,
  metrics: [],
  samples: [],
  resumedFrom: null,
  model: null,
});

/** Holds the run state of the open notebook and tells the page when it changes. */
export class RunController extends EventTarget {
  private states = new Map<string, CellRunState>();
  private before = new Map<string, CellRunState>();
  /** What each cell's shown state was made with: its parameters, and the run folder's uploaded-files part. */
  private madeWith = new Map<string, { params: string; files: string | null }>();
  /** The run in progress: its folder, mode and the cell it was asked for. */
  active: {
    runId: string;
    mode: RunMode;
    cellId: string | null;
    current: string | null;
    plan: { id: string; type: string }[];
  } | null = null;
  /** A line above the cells (resuming, storage without OPFS). */
  banner: string | null = null;
  /** An interrupted run of this notebook the user may resume (a shared link never auto-runs). */
  pending: { mode: RunMode; cellId: string | null; step: number | null } | null = null;
  /** Log lines of the current run (last 200), each with the seconds since the run started. */
  log: string[] = [];
  private t0 = 0;
  /** Stop was asked and the run has not ended yet (it ends at its next decoding step). */
  stopping = false;
  /** How the last run of this page ended, for the status bar: "finished in N min", or stopped/failed. */
  last: { ok: boolean; stopped: boolean; ms: number; cells: number } | null = null;
  /** The device's matmul speed (GFLOP/s) from the GPU cell's check, or measured before the first Run all. */
  speed: number | null = null;
  /** Measuring the device before Run all. */
  measuring = false;
  /** The running plan's expected times (from `speed`), and when each cell finished (seconds it took). */
  estimate: RunEstimate | null = null;
  private took = new Map<string, number>();
  private cellT0 = 0;
  /** Run all on a device where it is long: the quick version offered first. */
  proposal: RunProposal | null = null;

  /** What the model-file cache holds (null: unknown yet, or no OPFS). */
  modelCache: CacheUsage | null = null;

  constructor(
    private readonly api: RunApi,
    private readonly getDoc: () => Notebook,
    private readonly wrap: EventsWrapper,
    private readonly baseUrl: string,
    private readonly o: RunControllerOptions = {},
  ) {
    super();
    o.uploadEvents?.addEventListener("change", () => this.uploadsChanged());
    o.docEvents?.addEventListener("change", () => this.paramsChanged());
  }

  /** Notes that the states of cells `ids` were made from `doc` in run folder `runId` (see paramsChanged). */
  private remember(ids: Iterable<string>, doc: Notebook, runId: string): void {
    const files = filesPart(runId);
    for (const id of ids) {
      const cell = doc.cells.find((c) => c.id === id);
      if (cell) this.madeWith.set(id, { params: JSON.stringify(cell.params), files });
    }
  }

  /** Whether cell `id` belongs to the run in progress (its state is that run's, whatever the document says now). */
  private inRun(id: string): boolean {
    return this.active?.plan.some((c) => c.id === id) ?? false;
  }

  /** Cell `id` says not run yet: what it showed was made with other data. */
  private forget(id: string): boolean {
    if (!this.states.has(id) && !this.madeWith.has(id)) return false;
    this.states.delete(id);
    this.madeWith.delete(id);
    return true;
  }

  /**
   * The document changed: a dataset cell whose parameters are no longer those its state was made with
   * (another source, other URLs or split) read other data, so it says not run yet instead of "done" or an
   * error about the data it had (issue 48 item 9: a switch to "upload" kept the demo's "done").
   */
  paramsChanged(): void {
    let any = false;
    for (const cell of this.getDoc().cells) {
      const made = this.madeWith.get(cell.id);
      if (cell.type !== "dataset" || !made || this.inRun(cell.id)) continue;
      if (made.params !== JSON.stringify(cell.params)) any = this.forget(cell.id) || any;
    }
    if (any) this.changed();
  }

  /**
   * The uploaded files changed: the upload cell's state made with other files (an error naming a database that
   * was not uploaded, a run's "done") says not run yet (issue 48 item 9). The same files again keep it.
   */
  uploadsChanged(): void {
    const doc = this.getDoc();
    const cell = uploadCell(doc);
    const made = cell ? this.madeWith.get(cell.id) : undefined;
    if (!cell || !made || this.inRun(cell.id) || made.files === filesPart(this.runId(doc))) return;
    if (this.forget(cell.id)) this.changed();
  }

  /** This notebook's run folder (with uploaded files, a folder per set of files). */
  private runId(doc = this.getDoc()): string {
    const u = uploadCell(doc) ? this.o.uploads?.() ?? null : null;
    return runIdOf(doc, u ? uploadKey(u) : null);
  }

  /**
   * The uploaded files a plan needs, copied once and marked for transfer (the page's store keeps
   * its own bytes for browsing), or the error its dataset cell shows; null when it needs none.
   */
  private uploadsFor(
    plan: Notebook,
  ): { uploads: UploadedDataset; buffers: ArrayBuffer[] } | { cellId: string; error: string } | null {
    const cell = uploadCell(plan);
    if (!cell) return null;
    const u = this.o.uploads?.() ?? null;
    if (!u) return { cellId: cell.id, error: `cell "${cell.id}" (dataset): ${NO_UPLOAD_MESSAGE}` };
    const named = new Set(parseQuestions(u.questions).items.map((i) => i.task.db_id));
    const missing = [...named].filter((id) => !u.databases.has(id)).sort();
    if (missing.length) {
      return {
        cellId: cell.id,
        error: `cell "${cell.id}" (dataset): the uploaded questions use database${missing.length > 1 ? "s" : ""} ${
          missing.join(", ")
        }, not uploaded: ${NO_UPLOAD_MESSAGE}`,
      };
    }
    const databases = new Map([...named].map((id) => [id, u.databases.get(id)!.slice()] as const));
    return { uploads: { questions: u.questions, databases }, buffers: [...databases.values()].map((b) => b.buffer) };
  }

  /** A cell's state (idle when it never ran). */
  state(cellId: string): CellRunState {
    return this.states.get(cellId) ?? empty();
  }

  private patch(cellId: string, p: Partial<CellRunState>): void {
    this.states.set(cellId, { ...this.state(cellId), ...p });
  }

  private changed(): void {
    this.dispatchEvent(new Event("change"));
  }

  /** Measures the device once (the GPU cell's matmul check) where the page can; null where it cannot. */
  async measureSpeed(): Promise<number | null> {
    if (this.speed !== null || !this.api.benchmarkMatmul) return this.speed;
    this.measuring = true;
    this.changed();
    try {
      this.speed = (await this.api.benchmarkMatmul(512)).gflops;
    } catch {
      this.speed = null;
    } finally {
      this.measuring = false;
    }
    return this.speed;
  }

  /** The expected times of `doc`'s runnable cells on this device (null until its speed is known). */
  plan(doc = this.getDoc(), mode: RunMode = "all", cellId: string | null = null): RunEstimate | null {
    if (this.speed === null) return null;
    try {
      return estimateRun(planRun(doc, mode, cellId ?? undefined), { gflops: this.speed });
    } catch {
      return null;
    }
  }

  /**
   * Run all, planned first: the device is measured (once), and where the notebook would take longer
   * than LONG_RUN_SECONDS the quick version is proposed (`proposal`) instead of starting; the user
   * then picks runQuick or runFull.
   */
  async runAll(): Promise<RunOutcome | null> {
    if (this.active || this.measuring) return null;
    await this.measureSpeed();
    const full = this.plan();
    if (full && full.seconds > LONG_RUN_SECONDS) {
      const q = quickPreset(this.getDoc());
      const quick = this.plan(q.doc);
      if (quick && q.givesUp.length && quick.seconds < full.seconds / 2) {
        this.proposal = { full, quick, givesUp: q.givesUp };
        this.changed();
        return null;
      }
    }
    return this.run("all");
  }

  /** The notebook as it was before its quick version replaced it (backToFull reopens it). */
  fullDoc: Notebook | null = null;

  /** Switches the open notebook to its quick version and runs it all; `fullDoc` keeps the full one. */
  runQuick(): Promise<RunOutcome | null> {
    this.proposal = null;
    if (this.o.applyDoc) {
      this.fullDoc = this.getDoc();
      this.o.applyDoc(quickPreset(this.fullDoc).doc);
    }
    return this.run("all");
  }

  /** Puts the full notebook back (its own run folder: its outputs, if any, come back with it). */
  backToFull(): void {
    if (this.active || !this.fullDoc || !this.o.applyDoc) return;
    const doc = this.fullDoc;
    this.fullDoc = null;
    this.o.applyDoc(doc);
    void this.reopen(false);
  }

  /** Runs the whole notebook as it is, though it is long. */
  runFull(): Promise<RunOutcome | null> {
    this.proposal = null;
    return this.run("all");
  }

  /** Closes the proposal without running. */
  dismissProposal(): void {
    this.proposal = null;
    this.changed();
  }

  /** Milliseconds since the run in progress started (the clock of ProgressEntry), or null. */
  runMs(): number | null {
    return this.active ? Date.now() - this.t0 : null;
  }

  /** The whole run's seconds left (planned cells scaled by how the finished ones compared), or null without a plan. */
  runSecondsLeft(): number | null {
    const a = this.active, e = this.estimate;
    if (!a || !e) return null;
    const cur = a.current ? this.state(a.current) : null;
    const running = a.current && cur?.status === "running"
      ? { id: a.current, etaSeconds: cur.progress?.etaSeconds ?? null, fraction: cur.progress?.fraction ?? 0 }
      : null;
    return remainingSeconds(e, this.took, running);
  }

  /** A cell's expected seconds in the running plan (or the notebook's Run all plan), or null. */
  expectedSeconds(cellId: string): number | null {
    const e = this.estimate ?? (this.active ? null : this.plan());
    return e?.cells.find((c) => c.id === cellId)?.seconds ?? null;
  }

  /** Runs `mode` (all cells, one cell with what it needs, or from a cell on). */
  run(mode: RunMode, cellId: string | null = null, opts: RunRequest["opts"] = undefined): Promise<RunOutcome | null> {
    return this.start(mode, cellId, opts, false);
  }

  /** Starts a run; `resuming` keeps the metrics and samples already shown, so the charts continue. */
  private async start(
    mode: RunMode,
    cellId: string | null,
    opts: RunRequest["opts"],
    resuming: boolean,
  ): Promise<RunOutcome | null> {
    if (this.active) return null;
    const doc = this.getDoc();
    let plan: Notebook;
    try {
      plan = planRun(doc, mode, cellId ?? undefined);
    } catch (e) {
      if (cellId) {
        this.fail(cellId, e instanceof Error ? e.message : String(e), null);
        this.remember([cellId], doc, this.runId(doc));
      }
      this.changed();
      return null;
    }
    const up = this.uploadsFor(plan);
    if (up && "error" in up) {
      this.fail(up.cellId, up.error, null);
      this.remember([up.cellId], doc, this.runId(doc));
      this.changed();
      return null;
    }
    const runId = this.runId(doc);
    this.active = { runId, mode, cellId, current: null, plan: plan.cells.map((c) => ({ id: c.id, type: c.type })) };
    this.pending = null;
    this.stopping = false;
    this.last = null;
    this.proposal = null;
    this.log = [];
    this.t0 = Date.now();
    this.cellT0 = this.t0;
    this.took = new Map();
    this.estimate = this.speed === null ? null : estimateRun(plan, { gflops: this.speed });
    const asked = mode === "cell" && cellId ? [cellId] : plan.cells.map((c) => c.id);
    // What the cells showed before: a cell the worker reuses from an earlier run of this folder gets it back.
    this.before = new Map(asked.map((id) => [id, this.state(id)]));
    // Every cell of the plan may report (a cell run alone reports the setup cells it needs as done).
    this.remember(plan.cells.map((c) => c.id), doc, runId);
    for (const id of asked) {
      const old = this.state(id);
      this.patch(id, {
        ...empty(),
        status: "waiting",
        ...(resuming ? { metrics: old.metrics, samples: old.samples } : {}),
      });
    }
    this.changed();
    const events: RunEvents = {
      progress: (p) => this.onProgress(p),
      metrics: (r) => this.onMetrics(r),
      samples: (s) => this.onSamples(s),
      log: (m) => this.onLog(m),
      cellDone: (c) => this.onCellDone(c),
    };
    let outcome: RunOutcome;
    try {
      let req: RunRequest = {
        runId,
        doc,
        mode,
        cellId: cellId ?? undefined,
        opts,
        baseUrl: this.baseUrl,
        uploads: up?.uploads,
      };
      if (up && this.o.transfer) req = this.o.transfer(req, up.buffers);
      outcome = await this.api.startRun(req, this.wrap(events));
    } catch (e) {
      outcome = { ok: false, error: e instanceof Error ? e.message : String(e), cellId: null, stopped: false };
    }
    const failed = outcome.ok ? null : outcome.cellId ?? this.active.current ?? cellId ?? plan.cells[0]?.id ?? null;
    // A stopped or failed training cell says what its run folder kept (read before the page shows the run ended).
    const kept = failed ? await this.checkpointOf(runId, failed, doc) : null;
    const cells = this.active.plan.length;
    this.active = null;
    this.stopping = false;
    this.before = new Map();
    this.last = { ok: outcome.ok, stopped: !outcome.ok && outcome.stopped, ms: Date.now() - this.t0, cells };
    if (resuming) this.banner = outcome.ok ? "The interrupted run resumed from its checkpoint and finished." : null;
    if (outcome.ok) this.applySummary(outcome.summary);
    else if (failed) this.fail(failed, outcome.error, { mode, cellId }, kept);
    for (const [id, s] of this.states) {
      if (s.status === "waiting" || s.status === "running") this.patch(id, { status: "idle", progress: null });
    }
    // The document may have changed while the run went on: a dataset cell edited meanwhile is not done.
    this.paramsChanged();
    this.changed();
    void this.refreshModelCache();
    return outcome;
  }

  /** Reads what the model-file cache holds (shown in the model cell). */
  async refreshModelCache(): Promise<CacheUsage | null> {
    if (!this.api.modelCache) return null;
    this.modelCache = await this.api.modelCache().catch(() => null);
    this.changed();
    return this.modelCache;
  }

  /** Deletes the cached model files (not while a run may be reading them); returns what was removed. */
  async clearModelCache(): Promise<CacheUsage | null> {
    if (this.active || !this.api.clearModelCache) return null;
    const removed = await this.api.clearModelCache();
    await this.refreshModelCache();
    return removed;
  }

  /** This notebook's run folder's checkpoints, training cell id -> newest step (empty without a folder). */
  async checkpoints(): Promise<Record<string, number>> {
    const id = this.runId();
    return (await this.api.listRuns()).find((r) => r.runId === id)?.checkpoints ?? {};
  }

  /**
   * A file of this notebook's run folder (an export cell's adapter, a warm-up dataset), for a
   * download; an error says why there is none.
   */
  async runFile(name: string): Promise<Uint8Array> {
    if (!this.api.readRunBytes) throw new Error("this page cannot read run files");
    const bytes = await this.api.readRunBytes(this.runId(), name);
    if (!bytes) throw new Error(`${name} is not in this notebook's run folder (run the cell again to write it)`);
    return bytes;
  }

  /**
   * Asks the worker to stop the run in progress: it ends at its next decoding step (a training step or
   * a model's load phase ends first); checkpoints and every finished cell's output stay. `stopping`
   * says so until it has ended.
   */
  async stop(): Promise<void> {
    if (!this.active || this.stopping) return;
    this.stopping = true;
    this.changed();
    await this.api.stopRun("stopped by the user");
  }

  /** Discards this notebook's run folder (checkpoints, metrics, samples) and the cells' outputs. */
  async startFresh(): Promise<void> {
    if (this.active) return;
    await this.api.removeRun(this.runId());
    this.states.clear();
    this.madeWith.clear();
    this.pending = null;
    this.banner = null;
    this.changed();
  }

  /**
   * On page load: shows the outputs of this notebook's last finished run, and resumes a run a
   * reload interrupted — automatically unless the notebook came from a shared link (then it waits
   * for a click). Returns the resumed run (wrapped: its promise ends with the run), if one was started.
   */
  async restore(fromLink: boolean): Promise<{ resumed: Promise<RunOutcome | null> } | null> {
    const storage = await this.api.storage();
    if (storage.kind === "memory") this.banner = storage.note ?? "Runs are kept in memory only.";
    void this.refreshModelCache();
    const runId = this.runId();
    const runs = await this.api.listRuns();
    const info = runs.find((r) => r.runId === runId);
    if (!info && !this.active && uploadCell(this.getDoc()) && !this.o.uploads?.()) return this.restoreUploadRun(runs);
    // A run started while this looked (a click right after the page loaded) is this page's own:
    // its folder says "running" but nothing was interrupted, and its cells show its progress.
    if (!info || this.active) {
      this.changed();
      return null;
    }
    await this.loadFiles(info);
    if (this.active) {
      this.changed();
      return null;
    }
    if (info.status !== "running") {
      // A run that was stopped or failed says so in its cell again, with what to do.
      const at = info.error ? /^cell "([^"]+)"/.exec(info.error)?.[1] : undefined;
      if (at && (info.status === "stopped" || info.status === "failed") && this.state(at).status === "idle") {
        const kept = this.keptIn(info, this.getDoc().cells.find((c) => c.id === at));
        this.fail(at, info.error!, { mode: info.mode, cellId: info.cellId }, kept);
      }
      this.changed();
      return null;
    }
    const step = this.resumeStep(info);
    this.pending = { mode: info.mode, cellId: info.cellId, step };
    if (fromLink) {
      this.banner = `This notebook has an interrupted run${
        step ? ` (step ${step} checkpointed)` : ""
      }. It does not resume by itself because the notebook came from a shared link.`;
      this.changed();
      return null;
    }
    this.banner = `The page was reloaded during a run: resuming it${
      step ? ` from step ${step}` : ""
    } (same seed, same next batch).`;
    this.changed();
    return { resumed: this.resume() };
  }

  /**
   * A notebook on uploaded files after a reload: the files went with the tab, so its newest run
   * folder (any set of files) only shows its outputs; uploading the same files and running again
   * uses that folder (finished training restores, interrupted training continues).
   */
  private async restoreUploadRun(runs: RunInfo[]): Promise<null> {
    const prefix = `${runIdOf(this.getDoc())}-u`;
    const last = runs.find((r) => r.runId.startsWith(prefix));
    if (last) {
      await this.loadFiles(last);
      if (this.active) return null;
      const step = this.resumeStep(last);
      this.banner = last.status === "running"
        ? `This notebook's run on uploaded files was interrupted${
          step ? ` (step ${step} checkpointed)` : ""
        }. Upload the same files in the dataset cell and run the cell again to continue it.`
        : "These outputs come from a run on uploaded files; upload the same files in the dataset cell to build on them (other files start a fresh run).";
    }
    this.changed();
    return null;
  }

  /** Another document was opened: forgets the cells' outputs and restores that notebook's runs (never auto-running a link's). */
  async reopen(fromLink: boolean): Promise<void> {
    if (this.active) return;
    this.states.clear();
    this.madeWith.clear();
    this.pending = null;
    this.banner = null;
    await this.restore(fromLink);
  }

  /** Continues the interrupted (or stopped, or device-lost) run from its checkpoints. */
  resume(): Promise<RunOutcome | null> {
    const p = this.pending;
    if (!p) return Promise.resolve(null);
    return this.start(p.mode, p.cellId, undefined, true);
  }

  /** The newest checkpoint step of the run's training cells. */
  private resumeStep(info: RunInfo): number | null {
    const steps = Object.values(info.checkpoints ?? {});
    return steps.length ? Math.max(...steps) : null;
  }

  /** Reads a run folder's summary, metrics and samples back into the cells. */
  private async loadFiles(info: RunInfo): Promise<void> {
    const [outputs, metrics, samples] = await Promise.all([
      this.api.readRunFile(info.runId, "outputs.json"),
      this.api.readRunFile(info.runId, "metrics.jsonl"),
      this.api.readRunFile(info.runId, "samples.jsonl"),
    ]);
    // A run started meanwhile owns the cells' states.
    if (!this.active) this.remember(this.getDoc().cells.map((c) => c.id), this.getDoc(), info.runId);
    if (outputs) {
      try {
        // Every cell's output from its last finished run in this folder (the worker merges them).
        const cells = Object.values(JSON.parse(outputs) as Record<string, RunSummary["cells"][number]>);
        this.applySummary({ title: "", cells, accuracy: {}, files: [] });
        // Cells that drew samples outside training (evaluate, select, self-consistency): their lines of samples.jsonl.
        const lines = samples ? samples.split("\n") : [];
        for (const c of cells) {
          const at = sampleLinesOf(c);
          if (!at) continue;
          const text = lines.slice(at.from, at.from + at.count).map((l) => l + "\n").join("");
          this.patch(c.id, { samples: decodeSamples(text).records });
        }
      } catch {
        // Damaged: the cells show nothing until they run again.
      }
    }
    // Training records and samples go to the training cell that checkpointed (the one a resume continues): those
    // of its phase that name it, or, in a file written before records named their cell, every one of its phase.
    const trained = Object.keys(info.checkpoints ?? {});
    const training = this.getDoc().cells.filter((c) =>
      trained.includes(c.id) && (c.type === "grpo" || c.type === "warmup")
    );
    if (training.length === 0) return;
    // Decoded once for all of them.
    const allRecs = metrics ? decodeMetrics(metrics).records : [];
    const allSamples = samples ? decodeSamples(samples).records : [];
    for (const cell of training) {
      const mine = (r: { phase: string; cell?: string }) =>
        r.phase === cell.type && (r.cell === undefined || r.cell === cell.id);
      const recs = withSteps([], allRecs.filter(mine));
      const smp = allSamples.filter(mine);
      this.patch(cell.id, { metrics: recs, samples: smp });
    }
  }

  private applySummary(summary: RunSummary): void {
    for (const c of summary.cells) this.applyCell(c);
  }

  private applyCell(c: CellSummary): void {
    this.patch(c.id, {
      status: "done",
      progress: null,
      error: null,
      report: c.report ?? null,
      accuracy: c.accuracy ?? null,
      model: c.model ?? this.state(c.id).model,
      resumedFrom: c.report?.kind === "grpo" ? c.report.resumedFrom : this.state(c.id).resumedFrom,
    });
  }

  /**
   * A cell finished: it says done at once (setup cells that report no progress too), with its report;
   * one the worker reused from an earlier run of this folder keeps the samples and charts it showed.
   */
  private onCellDone(c: CellSummary): void {
    const old = this.before.get(c.id);
    const now = Date.now();
    // A reused cell took no time: it says nothing of this device (NaN: done, not measured).
    this.took.set(c.id, c.reused ? NaN : (now - this.cellT0) / 1000);
    this.cellT0 = now;
    this.applyCell(c);
    if (c.reused && old) this.patch(c.id, { samples: old.samples, metrics: old.metrics, history: old.history });
    this.changed();
  }

  /**
   * Cell `cellId` failed or was stopped with `message`; `kept` (trainingKept) says what a training cell's run folder
   * kept, in place of the general promise of checkpoints.
   */
  private fail(
    cellId: string,
    message: string,
    again: { mode: RunMode; cellId: string | null } | null,
    kept: { step: number; text: string } | null = null,
  ): void {
    const kind = classifyRunError(message);
    const resume = again && (kind === "device-lost" || kind === "cancelled" || kind === "sql-worker") ? again : null;
    if (resume) this.pending = { ...resume, step: kept && kept.step > 0 ? kept.step : null };
    // Nothing to resume from (no checkpoint of this cell): the button runs it again and says so.
    const resumeLabel = kept && kept.step > 0 ? "Resume" : "Run again";
    const remedy = isUploadMissing(message)
      ? UPLOAD_REMEDY
      : kind === "device-lost" && resume && resumeLabel === "Run again"
      ? `${DEVICE_LOST_NOTHING_KEPT}${kept ? ` ${kept.text}` : ""}`
      : !kept || !resume
      ? REMEDIES[kind]
      : kind === "cancelled"
      ? `The run was stopped. ${kept.text}`
      : `${REMEDIES[kind]} ${kept.text}`;
    this.patch(cellId, {
      status: kind === "cancelled" ? "stopped" : "failed",
      progress: null,
      error: { kind, message, remedy, resume, resumeLabel },
    });
  }

  /** A training cell's checkpoint step in run folder `runId` (0: none) and what that keeps; null for other cells. */
  private async checkpointOf(
    runId: string,
    cellId: string,
    doc: Notebook,
  ): Promise<{ step: number; text: string } | null> {
    const cell = doc.cells.find((c) => c.id === cellId);
    if (cell?.type !== "grpo" && cell?.type !== "warmup") return null;
    try {
      const info = (await this.api.listRuns()).find((r) => r.runId === runId);
      return this.keptIn(info, cell);
    } catch {
      return null;
    }
  }

  /** What run folder `info` keeps of training cell `cell` (null for other cells, or without the folder). */
  private keptIn(info: RunInfo | undefined, cell: Cell | undefined): { step: number; text: string } | null {
    if (!info || !cell) return null;
    const step = info.checkpoints?.[cell.id] ?? 0;
    const text = trainingKept(cell, step);
    return text ? { step, text } : null;
  }

  private setCurrent(cellId: string): void {
    const a = this.active;
    if (!a || a.current === cellId) return;
    if (a.current && this.state(a.current).status === "running") {
      this.patch(a.current, { status: "done", progress: null });
    }
    a.current = cellId;
    this.patch(cellId, { status: "running" });
  }

  private onProgress(p: Progress): void {
    this.setCurrent(p.cellId);
    const history = withProgress(this.state(p.cellId).history, p.message, Date.now() - this.t0);
    this.patch(p.cellId, p.model ? { progress: p, history, model: p.model } : { progress: p, history });
    this.changed();
  }

  /**
   * The cell a record belongs to: training records (GRPO reports progress only after a step's
   * records) go to the current cell of that type, else the next one in the plan; others to the
   * current cell.
   */
  private ownerOf(phase: string): string | null {
    const a = this.active;
    if (!a) return null;
    if (phase !== "grpo" && phase !== "warmup") return a.current;
    const at = a.plan.findIndex((c) => c.id === a.current);
    if (at >= 0 && a.plan[at].type === phase) return a.current;
    const next = a.plan.slice(at + 1).find((c) => c.type === phase);
    if (next) this.setCurrent(next.id);
    return next?.id ?? a.current;
  }

  /** The cell a record names (records name their cell since 2026-12-04), made current; else `ownerOf`'s guess. */
  private cellOf(r: { phase: string; cell?: string }): string | null {
    const a = this.active;
    if (a && r.cell !== undefined && a.plan.some((c) => c.id === r.cell)) {
      this.setCurrent(r.cell);
      return r.cell;
    }
    return this.ownerOf(r.phase);
  }

  private onMetrics(r: MetricsRecord): void {
    const id = this.cellOf(r);
    if (!id) return;
    this.patch(id, { metrics: withSteps(this.state(id).metrics, [r]) });
    this.changed();
  }

  private onSamples(records: SampleRecord[]): void {
    const id = records[0] ? this.cellOf(records[0]) : null;
    if (!id) return;
    this.patch(id, { samples: [...this.state(id).samples, ...records] });
    this.changed();
  }

  private onLog(msg: string): void {
    this.log = [...this.log.slice(-199), `${((Date.now() - this.t0) / 1000).toFixed(1)} s  ${msg}`];
    const m = /^grpo "([^"]+)": resumed from step (\d+)/.exec(msg);
    if (m) {
      // The steps after the checkpoint run again: their records shown so far go (their new ones follow).
      const from = Number(m[2]), st = this.state(m[1]);
      const kept = <T extends { phase: string; step: number }>(xs: readonly T[]) =>
        xs.filter((x) => x.phase !== "grpo" || x.step <= from);
      this.patch(m[1], { resumedFrom: from, metrics: kept(st.metrics), samples: kept(st.samples) });
    }
    this.changed();
  }
}
