// Pretraining checkpoints on disk: the model as a Hugging Face folder (F32), AdamW's moments
// (optimizer.safetensors, under the weights' names), and trainer_state.json (applied steps, the
// batch sampler's position); plus the packed corpus cached as one binary file.
import { bpeModelFromTokenizerJson } from "../../model/bpe/files.ts";
import type { BpeModel } from "../../model/bpe/train.ts";
import { type ModelConfig, parseConfig } from "../../model/config.ts";
import {
  encodeTensor,
  parseSafetensors,
  type RawTensor,
  safetensorsToWeights,
  writeSafetensors,
} from "../../model/safetensors.ts";
import type { Weights } from "../../model/tensor.ts";
import type { SamplerState } from "./loop.ts";
import { demoFolderFiles } from "./model.ts";
import { type Pretrainer, readState } from "./step.ts";

/** What trainer_state.json holds. */
export interface TrainerState {
  step: number;
  sampler: SamplerState;
  seed: number;
  corpusHash: string;
  valLoss: number | null;
}

/** Writes the model, the optimiser moments and the trainer state into `dir`. */
export async function writeCheckpoint(
  dir: string,
  tr: Pretrainer,
  tokenizer: { tokenizerJson: Record<string, unknown>; tokenizerConfig: Record<string, unknown> },
  state: TrainerState,
): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  for (
    const [name, bytes] of demoFolderFiles(tr.model.cfg, await readState(tr, "param"), tokenizer, { dtype: "F32" })
  ) await Deno.writeFile(`${dir}/${name}`, bytes);
  const moments = new Map<string, RawTensor>();
  for (const [name, t] of await readState(tr, "m")) moments.set(`exp_avg.${name}`, encodeTensor(t));
  for (const [name, t] of await readState(tr, "v")) moments.set(`exp_avg_sq.${name}`, encodeTensor(t));
  await Deno.writeFile(`${dir}/optimizer.safetensors`, writeSafetensors(moments, { step: String(state.step) }));
  await Deno.writeTextFile(`${dir}/trainer_state.json`, JSON.stringify(state) + "\n");
}

/** A checkpoint read back. */
export interface Checkpoint extends InitModel {
  tokenizerConfig: unknown;
  m: Weights;
  v: Weights;
  state: TrainerState;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function isTrainerState(x: unknown): x is TrainerState {
  return isRecord(x) && typeof x.step === "number" && typeof x.seed === "number" && typeof x.corpusHash === "string" &&
    isRecord(x.sampler) && Array.isArray(x.sampler.order) && Array.isArray(x.sampler.rng) &&
    typeof x.sampler.at === "number" && typeof x.sampler.epoch === "number";
}

/** A Hugging Face folder written by `rlvr pretrain` (its config, weights in any float dtype, tokenizer): where --init starts. */
export interface InitModel {
  cfg: ModelConfig;
  weights: Weights;
  bpe: BpeModel;
}

/** Reads a finished model folder (model.safetensors, config.json, tokenizer.json) to continue training from its weights. */
export async function readInitModel(dir: string): Promise<InitModel> {
  const json = async (f: string): Promise<unknown> => JSON.parse(await Deno.readTextFile(`${dir}/${f}`));
  const weights = safetensorsToWeights(
    parseSafetensors(await Deno.readFile(`${dir}/model.safetensors`), "model.safetensors"),
  );
  return {
    cfg: parseConfig(await json("config.json")),
    weights,
    bpe: bpeModelFromTokenizerJson(await json("tokenizer.json")),
  };
}

/** Reads a checkpoint written by writeCheckpoint. */
export async function readCheckpoint(dir: string): Promise<Checkpoint> {
  const json = async (f: string): Promise<unknown> => JSON.parse(await Deno.readTextFile(`${dir}/${f}`));
  const state = await json("trainer_state.json");
  if (!isTrainerState(state)) throw new Error(`${dir}/trainer_state.json: not a pretraining checkpoint state`);
  const { cfg, weights, bpe } = await readInitModel(dir);
  const m: Weights = new Map(), v: Weights = new Map();
  for (
    const [name, t] of safetensorsToWeights(
      parseSafetensors(await Deno.readFile(`${dir}/optimizer.safetensors`), "optimizer.safetensors"),
    )
  ) {
    if (name.startsWith("exp_avg_sq.")) v.set(name.slice("exp_avg_sq.".length), t);
    else if (name.startsWith("exp_avg.")) m.set(name.slice("exp_avg.".length), t);
  }
  return { cfg, weights, bpe, tokenizerConfig: await json("tokenizer_config.json"), m, v, state };
}

/** Writes packed rows as little-endian u32: row count, each row's length, then the tokens. */
export async function writeCorpusCache(path: string, rows: readonly Uint32Array[]): Promise<void> {
  const total = rows.reduce((s, r) => s + r.length, 0);
  const out = new Uint32Array(1 + rows.length + total);
  out[0] = rows.length;
  let at = 1 + rows.length;
  rows.forEach((r, i) => {
    out[1 + i] = r.length;
    out.set(r, at);
    at += r.length;
  });
  await Deno.writeFile(path, new Uint8Array(out.buffer));
}

/** Reads rows written by writeCorpusCache. */
export async function readCorpusCache(path: string): Promise<Uint32Array[]> {
  const bytes = await Deno.readFile(path);
  const u = new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const n = u[0];
  const rows: Uint32Array[] = [];
  let at = 1 + n;
  for (let i = 0; i < n; i++) {
    rows.push(u.slice(at, at + u[1 + i]));
    at += u[1 + i];
  }
  if (at !== u.length) throw new Error(`${path}: corpus cache is ${u.length} words, its header says ${at}`);
  return rows;
}
