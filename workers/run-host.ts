// Hosts notebook runs inside the GPU worker: the recipe runners (runNotebook) with the browser
// environment (webEnv), run folders in a FileStore (OPFS in the page, memory where OPFS is
// missing), a run.json status per folder (so a reload can find the run it interrupted), sample
// records streamed as the runners append them, and one AbortController per run. A lost GPU device
// stops the run; its checkpoints stay, so it resumes on request. Model files of "hub" and "url"
// model cells are kept in the model cache (OPFS), and uploaded datasets arrive with the request.
import type { ByteCache } from "../src/model/source.web.ts";
import { decodeSamples } from "../src/runtime/records.ts";
import { type CellSummary, runNotebook } from "../src/runtime/recipe/runner.ts";
import { webEnv } from "../src/runtime/recipe/env.web.ts";
import { type FileStore, subStore, tapAppends } from "../src/runtime/store.ts";
import { planRun, type RunInfo } from "../src/runtime/run-plan.ts";
import type { RunEvents, RunOutcome, RunRequest } from "./gpu.api.ts";

/** What the host needs from the worker. */
export interface RunHostOptions {
  /** The store holding every run folder (under `runs/`). */
  store: FileStore;
  /** The worker's one GPUDevice (the trainer's). */
  gpuDevice: () => Promise<GPUDevice>;
  /** sql.js's wasm URL in the built page. */
  sqlWasmUrl?: string;
  /** Where downloaded model files are kept between runs (OPFS in the page). */
  modelCache?: ByteCache;
  now?: () => Date;
}

const dec = new TextDecoder();
const RUNS = "runs";

/** Lines of samples.jsonl a cell wrote in its last run: `count` lines from line `from` (0-based). */
export interface SampleLines {
  from: number;
  count: number;
}

/** Training phases: their records are found by phase and checkpoint, not by line ranges. */
const TRAINING_PHASES = new Set(["grpo", "warmup"]);

const countLines = (text: string) => {
  let n = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) n++;
  return n;
};

function isRunInfo(x: unknown): x is RunInfo {
  if (typeof x !== "object" || x === null) return false;
  const r: Record<string, unknown> = { ...x };
  return typeof r.runId === "string" && typeof r.status === "string" && typeof r.startedAt === "string";
}

/** Starts, stops and lists runs; one at a time. */
export class RunHost {
  private active: { runId: string; abort: AbortController } | null = null;
  constructor(private readonly o: RunHostOptions) {}

  private folder(runId: string): FileStore {
    if (!/^[\w.-]+$/.test(runId)) throw new Error(`bad run id "${runId}"`);
    return subStore(this.o.store, `${RUNS}/${runId}`);
  }

  private now(): string {
    return (this.o.now?.() ?? new Date()).toISOString();
  }

  private async readInfo(store: FileStore): Promise<RunInfo | null> {
    const raw = await store.read("run.json");
    if (!raw) return null;
    try {
      const j: unknown = JSON.parse(dec.decode(raw));
      return isRunInfo(j) ? j : null;
    } catch {
      return null;
    }
  }

  /** Runs `req` to its end; progress, metrics, samples and log lines go to `events`. */
  async start(req: RunRequest, events: RunEvents): Promise<RunOutcome> {
    if (this.active) throw new Error(`a run is already in progress (${this.active.runId}); stop it first`);
    const abort = new AbortController();
    this.active = { runId: req.runId, abort };
    const folder = this.folder(req.runId);
    const info: RunInfo = {
      runId: req.runId,
      title: req.doc.title,
      status: "running",
      mode: req.mode,
      cellId: req.cellId ?? null,
      startedAt: this.now(),
      updatedAt: this.now(),
    };
    const setStatus = async (patch: Partial<RunInfo>) => {
      Object.assign(info, patch, { updatedAt: this.now() });
      await folder.write("run.json", JSON.stringify(info, null, 1));
    };
    // Through comlink each event is a message on its own port: keep their replies, so the outcome
    // (on the worker's port) is sent only after every event reached the page.
    const inFlight = new Set<Promise<unknown>>();
    const send = (result: unknown) => {
      if (result instanceof Promise) {
        const p = result.catch(() => undefined).finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
    };
    const flush = () => Promise.all([...inFlight]);
    let lostWatch = false;
    const gpuDevice = async () => {
      const device = await this.o.gpuDevice();
      if (!lostWatch) {
        lostWatch = true;
        device.lost.then((l) => abort.abort(new Error(`GPU device lost (${l.reason}): ${l.message || "no message"}`)));
      }
      return device;
    };
    try {
      const plan = planRun(req.doc, req.mode, req.cellId);
      await setStatus({});
      // Which lines of samples.jsonl each cell wrote (evaluate, select, self-consistency: their
      // progress comes before their samples), so a reload can show them again (outputs.json).
      const existing = await folder.read("samples.jsonl");
      let lines = existing ? countLines(dec.decode(existing)) : 0;
      let current: string | null = null;
      const sampleLines = new Map<string, SampleLines>();
      const store = tapAppends(folder, (name, text) => {
        if (name !== "samples.jsonl") return;
        const d = decodeSamples(text);
        const n = countLines(text);
        const phase = d.records[0]?.phase;
        if (current && phase && !TRAINING_PHASES.has(phase)) {
          const r = sampleLines.get(current);
          // A cell's lines are contiguous unless another cell appended between them: keep the first block.
          if (!r) sampleLines.set(current, { from: lines, count: n });
          else if (r.from + r.count === lines) r.count += n;
        }
        lines += n;
        if (d.records.length) send(events.samples(d.records));
      });
      const web = webEnv({
        baseUrl: req.baseUrl,
        store,
        wasmUrl: this.o.sqlWasmUrl,
        gpuDevice,
        modelCache: this.o.modelCache,
        uploads: req.uploads,
      });
      // Model loading (download, ONNX graph, session) is the long silent part of a run's start.
      const env = {
        ...web,
        loadModel: (...[which, lo]: Parameters<typeof web.loadModel>) => {
          send(
            events.log(
              `loading model ${
                typeof which === "string"
                  ? which
                  : which.source === "demo"
                  ? "demo"
                  : (which.repo ?? which.url ?? which.source)
              }…`,
            ),
          );
          return web.loadModel(which, lo);
        },
      };
      const summary = await runNotebook(plan, env, {
        signal: abort.signal,
        opts: req.opts,
        // An evaluation or self-consistency cell that finished in an earlier run of this folder (a run
        // stopped or reloaded after it) is not done again: same notebook up to it, same options.
        reuseFinished: true,
        onProgress: (p) => {
          current = p.cellId;
          send(events.progress(p));
        },
        onMetrics: (r) => send(events.metrics(r)),
        onLog: (m) => send(events.log(m)),
        onCellDone: async (c) => {
          await this.keepOutput(folder, c, sampleLines.get(c.id));
          send(events.cellDone?.(c));
        },
      });
      await setStatus({ status: "done" });
      await flush();
      return { ok: true, summary };
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      const stopped = abort.signal.aborted;
      await setStatus({ status: stopped ? "stopped" : "failed", error }).catch(() => undefined);
      await flush();
      return { ok: false, error, cellId: /^cell "([^"]+)"/.exec(error)?.[1] ?? null, stopped };
    } finally {
      this.active = null;
    }
  }

  /**
   * Merges a finished cell's summary into `outputs.json` (cell id -> its latest summary) as soon as the
   * cell ends, so a Stop, a failure or a reload later in the run keeps it (summary.json holds only a
   * finished run's cells). A cell that wrote samples (not training: those are found by phase) gets
   * `sampleLines`; a reused one keeps the lines of the run that made it.
   */
  private async keepOutput(folder: FileStore, c: CellSummary, lines: SampleLines | undefined): Promise<void> {
    let outputs: Record<string, unknown> = {};
    const raw = await folder.read("outputs.json");
    if (raw) {
      try {
        const j: unknown = JSON.parse(dec.decode(raw));
        if (typeof j === "object" && j !== null && !Array.isArray(j)) outputs = { ...j };
      } catch {
        // Damaged: start over from this cell.
      }
    }
    const prev = outputs[c.id];
    const kept = lines ??
      (c.reused && typeof prev === "object" && prev !== null && "sampleLines" in prev ? prev.sampleLines : undefined);
    outputs[c.id] = kept ? { ...c, sampleLines: kept } : c;
    await folder.write("outputs.json", JSON.stringify(outputs));
  }

  /** Aborts the run in progress; the runners stop at their next check (between steps; while a model loads, between files and phases). */
  stop(reason = "stopped by the user"): boolean {
    if (!this.active) return false;
    this.active.abort.abort(new Error(reason));
    return true;
  }

  /** Run folders with a run.json, newest first, with each training cell's newest checkpoint step. */
  async list(): Promise<RunInfo[]> {
    const out: RunInfo[] = [];
    for (const id of await this.o.store.list(RUNS)) {
      const folder = this.folder(id);
      const info = await this.readInfo(folder);
      if (!info) continue;
      const checkpoints: Record<string, number> = {};
      for (const cell of await folder.list("checkpoints")) {
        const raw = await folder.read(`checkpoints/${cell}/latest.json`);
        if (!raw) continue;
        try {
          const m: unknown = JSON.parse(dec.decode(raw));
          if (typeof m === "object" && m !== null && "step" in m && typeof m.step === "number") {
            checkpoints[cell] = m.step;
          }
        } catch {
          // A damaged manifest: the runner reports it when it resumes.
        }
      }
      // A folder marked running while no run is in progress here was interrupted (a reload).
      out.push({ ...info, checkpoints });
    }
    return out.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
  }

  /** The bytes of one file of a run folder, or null. */
  async readBytes(runId: string, name: string): Promise<Uint8Array | null> {
    return await this.folder(runId).read(name);
  }

  /** The text of one file of a run folder, or null. */
  async read(runId: string, name: string): Promise<string | null> {
    const raw = await this.readBytes(runId, name);
    return raw ? dec.decode(raw) : null;
  }

  /** Deletes a run folder (not the one running). */
  async remove(runId: string): Promise<void> {
    if (this.active?.runId === runId) throw new Error("stop the run before removing its files");
    await this.o.store.remove(`${RUNS}/${runId}`);
  }
}
