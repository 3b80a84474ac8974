// Which cells a run in the page executes, where its files live, and what its errors mean. Pure
// logic shared by the page (run-controller.ts) and the GPU worker (workers/run-host.ts).
//
// A run's folder is named after the notebook's run-relevant content (cell types and parameters,
// not the title, markdown or collapsed flags): running the same notebook again reuses it, so
// finished training cells restore from their checkpoints and an interrupted one continues; a
// changed parameter gives a fresh folder (a checkpoint made with other parameters would be refused).
import type { Cell, Notebook } from "../core/notebook.ts";
import type { UploadedDataset } from "./recipe/env.web.ts";

/** Which cells a run covers: all of them, one cell (with what it needs), or from a cell to the end. */
export type RunMode = "all" | "cell" | "from";

/** Cell types a run executes (markdown and the GPU check are not part of a run). */
export const RUNNABLE_TYPES: readonly Cell["type"][] = [
  "dataset",
  "model",
  "prompt",
  "reward",
  "evaluate",
  "select",
  "warmup",
  "grpo",
  "selfconsistency",
  "prmdata",
  "prmtrain",
  "export",
  "ask",
];
/** Cells that set up the context the later cells read. */
const SETUP_TYPES: readonly Cell["type"][] = ["dataset", "model", "prompt", "reward", "select"];
/** Cells whose result (the adapter, PRM data, a PRM) later cells build on; they restore from their checkpoints and state files. */
const TRAINING_TYPES: readonly Cell["type"][] = ["warmup", "grpo", "prmdata", "prmtrain"];

/** True for cells the page can run. */
export function isRunnable(cell: Cell): boolean {
  return RUNNABLE_TYPES.includes(cell.type);
}

/**
 * The document a run executes. "all": every cell. "cell": the setup cells and training cells
 * before `cellId` (training restores from this folder's checkpoints, or runs when it never did),
 * then the cell. "from": the same prefix, then every cell from `cellId` on. Before an ask cell the
 * prefix is the setup cells only (ask.ts reads the trained stage from the checkpoints).
 */
export function planRun(doc: Notebook, mode: RunMode, cellId?: string): Notebook {
  const runnable = (c: Cell) => isRunnable(c);
  if (mode === "all") return { ...doc, cells: doc.cells.filter(runnable) };
  const at = doc.cells.findIndex((c) => c.id === cellId);
  if (at < 0) throw new Error(`no cell "${cellId}" in the notebook`);
  if (!runnable(doc.cells[at])) throw new Error(`cell "${cellId}" (${doc.cells[at].type}) does not run`);
  // An ask cell reads the stage it answers with from the checkpoints itself: asking never trains.
  const asking = doc.cells[at].type === "ask";
  const before = doc.cells.slice(0, at).filter((c) =>
    SETUP_TYPES.includes(c.type) || (!asking && TRAINING_TYPES.includes(c.type))
  );
  const rest = mode === "cell" ? [doc.cells[at]] : doc.cells.slice(at).filter(runnable);
  return { ...doc, cells: [...before, ...rest] };
}

/** FNV-1a over a string, as 8 hex digits. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/**
 * The run folder's id for a notebook: a hash of its runnable cells' ids, types and parameters,
 * and, when it reads uploaded files, of those files (`uploadKey`): other files, other folder.
 */
export function runIdOf(doc: Notebook, uploads: string | null = null): string {
  // Ask cells train and write nothing a later run reads: a new question keeps the run's folder (and its checkpoints).
  const key = doc.cells.filter((c) => isRunnable(c) && c.type !== "ask").map((c) => [c.id, c.type, c.params]);
  const id = `nb-${fnv(JSON.stringify(key))}`;
  return uploads && usesUploads(doc) ? `${id}-u${fnv(uploads)}` : id;
}

/** What a run says when its dataset cell has source "upload" and the page has no files for it. */
export const NO_UPLOAD_MESSAGE = "upload a questions file and its databases in the dataset cell first";

/** The first dataset cell with source "upload", if any. */
export function uploadCell(doc: Notebook): Cell | null {
  return doc.cells.find((c) => c.type === "dataset" && c.params.source === "upload") ?? null;
}

/** True when the notebook reads uploaded files. */
export function usesUploads(doc: Notebook): boolean {
  return uploadCell(doc) !== null;
}

/**
 * A fingerprint of uploaded files: the questions text, and each database's id, size and its
 * first and last 64 KiB (hashing gigabytes of databases on every run would be slow).
 */
export function uploadKey(u: UploadedDataset): string {
  const parts = [fnv(u.questions), String(u.questions.length)];
  const edge = 1 << 16;
  for (const [id, b] of [...u.databases].sort(([a], [b]) => a.localeCompare(b))) {
    const ends = b.byteLength <= 2 * edge ? [b] : [b.subarray(0, edge), b.subarray(b.byteLength - edge)];
    let h = 0x811c9dc5;
    for (const part of ends) for (let i = 0; i < part.length; i++) h = Math.imul(h ^ part[i], 0x01000193) >>> 0;
    parts.push(`${id}:${b.byteLength}:${h.toString(16)}`);
  }
  return parts.join("|");
}

/** What the worker keeps in a run folder's `run.json`. "running" after a reload means the tab died mid-run. */
export interface RunInfo {
  runId: string;
  title: string;
  status: "running" | "done" | "failed" | "stopped";
  mode: RunMode;
  cellId: string | null;
  startedAt: string;
  updatedAt: string;
  error?: string;
  /** The newest GRPO/warm-up checkpoint step per cell, read when listed. */
  checkpoints?: Record<string, number>;
}

/** Kinds of run failure the page explains with a remedy. */
export const RUN_ERROR_KINDS = [
  "no-webgpu",
  "device-lost",
  "demo-model-missing",
  "unreachable",
  "model",
  "sql-worker",
  "data",
  "checkpoint",
  "cancelled",
  "other",
] as const;
export type RunErrorKind = (typeof RUN_ERROR_KINDS)[number];

/** What the user can do about each kind of failure. */
export const REMEDIES: Record<RunErrorKind, string> = {
  "no-webgpu":
    "This browser gives the page no WebGPU adapter. Use Chrome or Edge 113+ with hardware acceleration on (on Linux: --enable-unsafe-webgpu --enable-features=Vulkan); the GPU cell at the top says what is missing.",
  "device-lost":
    'The GPU device was lost (driver reset, another tab took the memory, or the system slept). The run\'s checkpoints are kept: press "Resume" to continue from the last one.',
  "demo-model-missing":
    'The demo model\'s files are not in this build yet. Set the model cell\'s source to "url" (a folder with config.json, tokenizer.json and *.safetensors) or "hub" (owner/name).',
  "unreachable":
    "Nothing is wrong with the model or its settings: the download could not start. Check the connection (or the host named above) and run the cell again.",
  "model":
    "The model could not be loaded. Check the model cell's source and that the folder holds config.json, tokenizer.json and model.safetensors (CORS allowed when on another site); a smaller dtype (q4) needs less GPU memory.",
  "sql-worker":
    "A SQL worker stopped (out of memory, or a database it could not open). Run the cell again; if it repeats, check the dataset's database files.",
  "data":
    "The dataset could not be read. Check the dataset cell's source and URLs (questions file, database folder) and that the split exists.",
  "checkpoint":
    "This run's folder holds a checkpoint made with other parameters or a damaged one. Press \"Start fresh\" to discard the run's files and begin again.",
  "cancelled": "The run was stopped. Checkpoints made so far are kept: run the cell again to continue.",
  "other": "Unexpected error: the message above names the cell and the cause. The run's checkpoints are kept.",
};

/** The kind of a run failure, from its message (the worker passes errors as text). */
export function classifyRunError(message: string): RunErrorKind {
  const m = message.toLowerCase();
  if (m.includes("run cancelled") || m.includes("run stopped")) {
    return m.includes("device lost") ? "device-lost" : "cancelled";
  }
  if (
    m.includes("device lost") || m.includes("device was lost") || m.includes("gpudevice was lost") ||
    m.includes("device is lost")
  ) return "device-lost";
  if (m.includes("navigator.gpu is missing") || m.includes("no gpu adapter") || m.includes("webgpu is not available")) {
    return "no-webgpu";
  }
  if (m.includes("demo model is not in this build")) return "demo-model-missing";
  if (m.includes("was unreachable: the request for")) return "unreachable";
  if (m.includes("sql worker") || m.includes("sqlpool")) return "sql-worker";
  if (m.includes("checkpoint")) return "checkpoint";
  if (/\(model\)|model cell|config\.json|safetensors|tokenizer|onnx|session/.test(m)) return "model";
  if (/\(dataset\)|dataset cell|questions|no split|split ".*" is empty|\.jsonl/.test(m)) return "data";
  return "other";
}
