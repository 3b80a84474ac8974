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
  await store.write(
    `${base}/tensors.safetensors`,
    weightsToSafetensors(ck.tensors, "F32", { format: "rlvr-checkpoint" }),
  );
  await store.write(
    `${base}/state.json`,
    JSON.stringify({ step: ck.step, cursor: ck.cursor, rng: ck.rng, state: ck.state }),
  );
  const manifest: Manifest = { step: ck.step, folder, savedAt: new Date().toISOString() };
  await store.write(prefix ? `${prefix}/latest.json` : "latest.json", JSON.stringify(manifest));
  // Folders past this one are left from a newer checkpoint that did not read (loadCheckpoint fell
  // back from it): latest.json no longer names them, so they go.
  const all = (await store.list(prefix)).filter((n) => /^ckpt-\d+$/.test(n)).sort();
  const stale = all.filter((n) => n > folder);
  const kept = all.filter((n) => n <= folder);
  for (const old of [...stale, ...kept.slice(0, Math.max(0, kept.length - keep))]) {
    if (old !== folder) await store.remove(prefix ? `${prefix}/${old}` : old);
  }
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** The manifest in `latest.json`, or an error naming the file. */
function parseManifest(raw: Uint8Array, name: string): Manifest {
  let j: unknown;
  try {
    j = JSON.parse(dec.decode(raw));
  } catch (e) {
    throw new Error(
      `${name} is not valid JSON (${
        e instanceof SyntaxError ? "unreadable" : String(e)
      }); it should name the newest checkpoint folder: remove it to start this stage afresh`,
    );
  }
  if (!isRecord(j) || typeof j.folder !== "string" || !/^ckpt-\d+$/.test(j.folder) || typeof j.step !== "number") {
    throw new Error(
      `${name} is not a checkpoint manifest ({step, folder: "ckpt-<step>"}): remove it to start this stage afresh`,
    );
  }
  return { step: j.step, folder: j.folder, savedAt: typeof j.savedAt === "string" ? j.savedAt : "" };
}

/** The checkpoint in folder `base`, or an error saying which of its files is missing or unreadable. */
async function readFolder(store: FileStore, base: string): Promise<Checkpoint> {
  const [tensorBytes, stateBytes] = await Promise.all([
    store.read(`${base}/tensors.safetensors`),
    store.read(`${base}/state.json`),
  ]);
  if (!tensorBytes || !stateBytes) {
    throw new Error(
      `checkpoint ${base} is incomplete (its ${!tensorBytes ? "tensors.safetensors" : "state.json"} is missing)`,
    );
  }
  let s: unknown;
  try {
    s = JSON.parse(dec.decode(stateBytes));
  } catch {
    throw new Error(`${base}/state.json is not valid JSON (truncated?)`);
  }
  if (
    !isRecord(s) || typeof s.step !== "number" || typeof s.cursor !== "number" || !isRecord(s.rng) || !isRecord(s.state)
  ) {
    throw new Error(`${base}/state.json lacks step, cursor, rng or state`);
  }
  const tensors = safetensorsToWeights(parseSafetensors(tensorBytes, `${base}/tensors.safetensors`));
  return { step: s.step, cursor: s.cursor, rng: s.rng as Record<string, number[]>, state: s.state, tensors };
}

/**
 * The newest complete checkpoint under `prefix`, or null when there is none. When the one
 * `latest.json` names is unreadable (a truncated file, a disk error), the newest older checkpoint
 * that reads is used instead and `onNote` says so; a `latest.json` that is not a manifest is an
 * error naming it.
 */
export async function loadCheckpoint(
  store: FileStore,
  prefix: string,
  onNote: (msg: string) => void = (m) => console.warn(m),
): Promise<Checkpoint | null> {
  const latestName = prefix ? `${prefix}/latest.json` : "latest.json";
  const raw = await store.read(latestName);
  if (!raw) return null;
  const m = parseManifest(raw, latestName);
  const at = (folder: string) => (prefix ? `${prefix}/${folder}` : folder);
  try {
    return await readFolder(store, at(m.folder));
  } catch (newest) {
    const why = newest instanceof Error ? newest.message : String(newest);
    const older = (await store.list(prefix)).filter((n) => /^ckpt-\d+$/.test(n) && n < m.folder).sort().reverse();
    for (const folder of older) {
      try {
        const ck = await readFolder(store, at(folder));
        onNote(`${why}; resuming from the previous checkpoint ${at(folder)} (step ${ck.step}) instead`);
        return ck;
      } catch {
        // an older one may still read
      }
    }
    throw newest;
  }
}
