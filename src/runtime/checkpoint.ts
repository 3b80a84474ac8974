// Checkpoints of a training run: tensors (LoRA adapter, optimizer moments), RNG states, the step
// and the data cursor, so a reload or a crash resumes exactly where the run was. Each checkpoint
// is a folder `ckpt-<step>/`; `latest.json` is written last and names the newest complete one,
// so a crash while saving leaves the previous checkpoint in force.
import { parseSafetensors, safetensorsToWeights, weightsToSafetensors } from "../model/safetensors.ts";
import type { Weights } from "../model/tensor.ts";
import type { FileStore } from "./store.ts";

/** Everything a run needs to continue as if nothing happened. */
export interface Checkpoint {
  step: number;
  /** Position in the run's data order (e.g. index into the shuffled question list). */
  cursor: number;
  /** Named RNG states (`Rng.state()` words). */
  rng: Record<string, number[]>;
  /** Tensors under stable names: adapter `lora.*`, optimizer `adam.m.*` / `adam.v.*`. */
  tensors: Weights;
  /** Anything else small and JSON-serialisable the stage runner keeps (scheduler state, config hash). */
  state: Record<string, unknown>;
}

interface Manifest {
  step: number;
  folder: string;
  savedAt: string;
}

const dec = new TextDecoder();

/** Saves `ck` under `prefix` in `store`, then points `latest.json` at it and prunes to `keep`. */
export async function saveCheckpoint(store: FileStore, prefix: string, ck: Checkpoint, keep = 2): Promise<void> {
  const folder = `ckpt-${String(ck.step).padStart(8, "0")}`;
  const base = prefix ? `${prefix}/${folder}` : folder;
  await store.write(`${base}/tensors.safetensors`, weightsToSafetensors(ck.tensors, "F32", { format: "rlvr-checkpoint" }));
  await store.write(`${base}/state.json`, JSON.stringify({ step: ck.step, cursor: ck.cursor, rng: ck.rng, state: ck.state }));
  const manifest: Manifest = { step: ck.step, folder, savedAt: new Date().toISOString() };
  await store.write(prefix ? `${prefix}/latest.json` : "latest.json", JSON.stringify(manifest));
  const all = (await store.list(prefix)).filter((n) => /^ckpt-\d+$/.test(n)).sort();
  for (const old of all.slice(0, Math.max(0, all.length - keep))) {
    if (old !== folder) await store.remove(prefix ? `${prefix}/${old}` : old);
  }
}

/** The newest complete checkpoint under `prefix`, or null when there is none. */
export async function loadCheckpoint(store: FileStore, prefix: string): Promise<Checkpoint | null> {
  const raw = await store.read(prefix ? `${prefix}/latest.json` : "latest.json");
  if (!raw) return null;
  const m = JSON.parse(dec.decode(raw)) as Manifest;
  const base = prefix ? `${prefix}/${m.folder}` : m.folder;
  const [tensorBytes, stateBytes] = await Promise.all([store.read(`${base}/tensors.safetensors`), store.read(`${base}/state.json`)]);
  if (!tensorBytes || !stateBytes) throw new Error(`checkpoint ${base} is incomplete (latest.json names it but its files are missing)`);
  const s = JSON.parse(dec.decode(stateBytes)) as Omit<Checkpoint, "tensors">;
  return {
    step: s.step,
    cursor: s.cursor,
    rng: s.rng,
    state: s.state,
    tensors: safetensorsToWeights(parseSafetensors(tensorBytes, `${base}/tensors.safetensors`)),
  };
}
