// A process reward model as files: a PEFT folder whose adapter_model.safetensors holds the LoRA
// tensors and the scalar head as PEFT saves a `modules_to_save` score layer
// (base_model.model.score.weight (1, H), base_model.model.score.bias (1)), task_type TOKEN_CLS —
// what `AutoModelForTokenClassification.from_pretrained(base, num_labels=1)` + `PeftModel` load —
// plus prm_config.json saying how scores are read (sigmoid of the logit at each step's last token).
import type { ModelConfig } from "./config.ts";
import type { LoraAdapter } from "./lora.ts";
import { parsePeftAdapter, PEFT_CONFIG, PEFT_WEIGHTS, peftConfigJson } from "./peft.ts";
import { parseSafetensors, safetensorsToWeights, weightsToSafetensors } from "./safetensors.ts";
import { type ModelSource, readJson } from "./source.ts";
import type { Weights } from "./tensor.ts";

export const PRM_CONFIG = "prm_config.json";
export const SCORE_WEIGHT = "base_model.model.score.weight";
export const SCORE_BIAS = "base_model.model.score.bias";

/** What a PRM folder says besides its tensors. */
export interface PrmInfo {
  /** The prompt template its inputs were built with (prompts.ts id). */
  template: string;
  /** "process": a label per step; "outcome": one label per chain at its last step (an outcome reward model). */
  labels: "process" | "outcome";
  baseModel: string | null;
}

/** A PRM's parameters: the adapter and the head (C + 1 values: w, then the bias). */
export interface PrmWeights {
  adapter: LoraAdapter;
  head: Float32Array;
  info: PrmInfo;
}

/** The three files of a PRM folder. */
export function prmFiles(p: PrmWeights): Map<string, Uint8Array> {
  const C = p.head.length - 1;
  const tensors: Weights = new Map(p.adapter.tensors);
  tensors.set(SCORE_WEIGHT, { shape: [1, C], data: p.head.slice(0, C) });
  tensors.set(SCORE_BIAS, { shape: [1], data: p.head.slice(C) });
  const config = { ...peftConfigJson(p.adapter, p.info.baseModel), task_type: "TOKEN_CLS", modules_to_save: ["score"] };
  const info = {
    format: "rlvr-prm",
    version: 1,
    template: p.info.template,
    labels: p.info.labels,
    base_model: p.info.baseModel,
    num_labels: 1,
    score: "sigmoid(score(h_t)) with h_t the last hidden state (after the final norm) at the last token of each step",
    steps: "the steps of a Chain of CTEs (src/core/cocte.ts stepEndOffsets): each CTE, then the final statement",
    input: "the prompt rendered with the model's chat template, then the answer's text encoded without special tokens",
  };
  const enc = new TextEncoder();
  return new Map([
    [PEFT_CONFIG, enc.encode(JSON.stringify(config, null, 2))],
    [PEFT_WEIGHTS, weightsToSafetensors(tensors, "F32", { format: "pt" })],
    [PRM_CONFIG, enc.encode(JSON.stringify(info, null, 2))],
  ]);
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Reads a PRM folder written by prmFiles (or by PEFT with the same layout); validates against `cfg` when given. */
export async function readPrmFolder(src: ModelSource, cfg?: ModelConfig): Promise<PrmWeights> {
  const where = src.describe();
  const config = await readJson(src, PEFT_CONFIG);
  const info = await readJson(src, PRM_CONFIG);
  if (!isRecord(config) || !isRecord(info)) {
    throw new Error(`${where}: ${PEFT_CONFIG} and ${PRM_CONFIG} must be JSON objects`);
  }
  const mts = config.modules_to_save;
  if (!(Array.isArray(mts) && mts.length === 1 && mts[0] === "score")) {
    throw new Error(
      `${where}: ${PEFT_CONFIG} modules_to_save must be ["score"] (a PRM folder), got ${JSON.stringify(mts)}`,
    );
  }
  if (info.format !== "rlvr-prm") throw new Error(`${where}: ${PRM_CONFIG} is not an rlvr-prm description`);
  const labels = info.labels === "outcome" ? "outcome" : info.labels === "process" ? "process" : null;
  if (labels === null || typeof info.template !== "string") {
    throw new Error(`${where}: ${PRM_CONFIG} needs labels ("process" or "outcome") and template`);
  }
  const all = safetensorsToWeights(parseSafetensors(await src.read(PEFT_WEIGHTS), PEFT_WEIGHTS));
  const w = all.get(SCORE_WEIGHT), b = all.get(SCORE_BIAS);
  if (!w || !b || w.shape.length !== 2 || w.shape[0] !== 1 || b.data.length !== 1) {
    throw new Error(`${where}: ${PEFT_WEIGHTS} needs ${SCORE_WEIGHT} (1, H) and ${SCORE_BIAS} (1)`);
  }
  if (cfg && w.shape[1] !== cfg.hiddenSize) {
    throw new Error(`${where}: the score head has ${w.shape[1]} inputs, the model's hidden size is ${cfg.hiddenSize}`);
  }
  all.delete(SCORE_WEIGHT);
  all.delete(SCORE_BIAS);
  const { modules_to_save: _m, task_type: _t, ...plain } = config;
  let adapter: LoraAdapter;
  try {
    adapter = parsePeftAdapter(plain, weightsToSafetensors(all, "F32"), cfg);
  } catch (e) {
    throw new Error(`${where}: ${e instanceof Error ? e.message : String(e)}`);
  }
  const head = new Float32Array(w.shape[1] + 1);
  head.set(w.data);
  head[w.shape[1]] = b.data[0];
  return {
    adapter,
    head,
    info: { template: info.template, labels, baseModel: typeof info.base_model === "string" ? info.base_model : null },
  };
}
