// What a model cell loaded, as data (the page's model cell shows it; `rlvr run` logs it): the
// model's name and source, its shape, the weight dtype the policy runs, the LoRA adapter, where
// the policy and trainer run, the context length, the load time and bytes downloaded vs cached.
import type { ModelConfig } from "../../model/config.ts";
import type { TransferStats } from "../../model/source.ts";
import type { Weights } from "../../model/tensor.ts";
import { numel } from "../../model/tensor.ts";

/** The phases of a model cell's load after its files are read, in order. */
export const LOAD_PHASES = ["device", "attention-check", "graph", "session", "shaders"] as const;
export type LoadPhase = (typeof LOAD_PHASES)[number];

/** The model cell's progress line while a phase runs. */
export const LOAD_PHASE_TEXT: Record<LoadPhase, string> = {
  device: "opening the GPU device…",
  "attention-check": "checking the GPU's attention kernel against plain attention…",
  graph: "building the ONNX graph (LoRA inputs, quantisation)…",
  session: "creating the inference session (uploading weights to the GPU)…",
  shaders: "compiling the GPU programs (a first short decoding; minutes on a software GPU)…",
};

/** One model cell's load, as it ran. */
export interface ModelSummary {
  name: string;
  /** Where the files came from ("Hugging Face Hub owner/name@main", a URL, a directory). */
  source: string;
  arch: ModelConfig["arch"];
  layers: number;
  hidden: number;
  /** Elements of every weight tensor of the checkpoint (tied embeddings counted once). */
  parameters: number;
  vocab: number;
  /** The policy's weight storage as built (f32, f16 or q4). */
  dtype: string;
  /** What the policy's graph stores and computes in (f32 compute where the device has no shader-f16); absent in older summaries. */
  precision?: string;
  /** `imported`: the adapter the cell started from (a model cell's `adapter`) and the targets it had; absent: a fresh one (B = 0). */
  lora: { rank: number; alpha: number; targets: string[]; imported?: { from: string; targets: string[] } };
  /** Where the ONNX policy runs ("webgpu", or "wasm" after a fallback). */
  policyProvider: string;
  /** How the trainer stores the frozen projections (q4, f16 or f32); null when not known. */
  trainerProjections: "q4" | "f16" | "f32" | null;
  /** Longest prompt + completion the policy accepts, and the checkpoint's max_position_embeddings. */
  contextLength: number;
  maxPositionEmbeddings: number;
  loadMs: number;
  /** Milliseconds per load phase ("download" is reading the files); absent in older summaries. */
  phaseMs?: Partial<Record<LoadPhase | "download", number>>;
  /** Bytes downloaded and taken from the model-file cache (OPFS); null when the source does not download (a folder). */
  transferred: TransferStats | null;
}

/** The facts of a summary that come from the checkpoint itself. */
export function checkpointFacts(
  config: ModelConfig,
  weights: Weights,
): Pick<ModelSummary, "arch" | "layers" | "hidden" | "parameters" | "vocab" | "maxPositionEmbeddings"> {
  let parameters = 0;
  for (const t of weights.values()) parameters += numel(t.shape);
  return {
    arch: config.arch,
    layers: config.numLayers,
    hidden: config.hiddenSize,
    parameters,
    vocab: config.vocabSize,
    maxPositionEmbeddings: config.maxPositionEmbeddings,
  };
}

/** "494.0M", "1.54B", "37.1k", "812". */
export function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/** "1.2 MB", "340 KB", "12 B". */
export function formatBytes(n: number): string {
  if (n >= 1 << 30) return `${(n / (1 << 30)).toFixed(2)} GB`;
  if (n >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} B`;
}

/** The summary as label/value rows, in the order the model cell shows them. */
export function summaryRows(s: ModelSummary): [string, string][] {
  const rows: [string, string][] = [
    ["model", `${s.name} (${s.source})`],
    ["architecture", `${s.arch}, ${s.layers} layers, hidden ${s.hidden}`],
    ["parameters", formatCount(s.parameters)],
    ["vocabulary", formatCount(s.vocab)],
    ["weights as run", s.precision ? `${s.dtype}: ${s.precision}` : s.dtype],
    ["LoRA", `rank ${s.lora.rank}, alpha ${s.lora.alpha} on ${s.lora.targets.join(", ")}`],
    ["adapter", adapterText(s.lora)],
    ["policy runs on", s.policyProvider],
    ["trainer projections", s.trainerProjections ?? "not known"],
    ["context length", `${s.contextLength} tokens (max positions ${s.maxPositionEmbeddings})`],
    ["load time", `${(s.loadMs / 1000).toFixed(1)} s${phaseText(s.phaseMs)}`],
  ];
  const t = s.transferred;
  if (t) {
    rows.push([
      "files",
      t.viaCache
        ? `${formatBytes(t.downloadedBytes)} downloaded, ${
          formatBytes(t.cachedBytes)
        } from the browser's model-file cache`
        : `${
          formatBytes(t.downloadedBytes)
        } fetched over HTTP (this source has no model-file cache; the browser's HTTP cache may have served some)`,
    ]);
  }
  return rows;
}

/** " (files 1.2 s, graph 3.0 s, …)", the phases that took a tenth of a second or more. */
function phaseText(ms: ModelSummary["phaseMs"]): string {
  if (!ms) return "";
  const names: Record<LoadPhase | "download", string> = {
    download: "files",
    device: "device",
    "attention-check": "attention check",
    graph: "graph",
    session: "session",
    shaders: "shader compilation",
  };
  const parts = (["download", ...LOAD_PHASES] as const).filter((k) => (ms[k] ?? 0) >= 100).map((k) =>
    `${names[k]} ${((ms[k] ?? 0) / 1000).toFixed(1)} s`
  );
  return parts.length ? ` (${parts.join(", ")})` : "";
}

/** Where the adapter started: imported (from where, on which targets) or fresh. */
function adapterText(l: ModelSummary["lora"]): string {
  if (!l.imported) return "fresh (B = 0: the policy starts as the base model)";
  const rest = l.targets.filter((t) => !l.imported?.targets.includes(t));
  return `imported from ${l.imported.from}${
    rest.length ? ` (on ${l.imported.targets.join(", ")}; ${rest.join(", ")} start fresh, B = 0)` : ""
  }`;
}

/** One log line: `rlvr run`'s "model X: qwen2, 8 layers, policy on webgpu" with the richer facts after it. */
export function summaryLine(s: ModelSummary): string {
  const t = s.transferred;
  const moved = t
    ? (t.viaCache
      ? `, ${formatBytes(t.downloadedBytes)} downloaded / ${formatBytes(t.cachedBytes)} cached`
      : `, ${formatBytes(t.downloadedBytes)} fetched`)
    : "";
  return `model ${s.name}: ${s.arch}, ${s.layers} layers, policy on ${s.policyProvider}` +
    ` (hidden ${s.hidden}, ${formatCount(s.parameters)} parameters, vocab ${s.vocab}, weights as run ${s.dtype}${
      s.precision ? `: ${s.precision}` : ""
    },` +
    ` LoRA r=${s.lora.rank} alpha=${s.lora.alpha} on ${s.lora.targets.length} targets${
      s.lora.imported ? ` imported from ${s.lora.imported.from}` : ""
    }, trainer ${s.trainerProjections ?? "?"} projections,` +
    ` context ${s.contextLength}, loaded in ${(s.loadMs / 1000).toFixed(1)} s${moved})`;
}
