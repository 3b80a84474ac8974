// The GRPO cell writes step N's checkpoint while step N + 1 runs (grpo.ts). Pinned here on a tiny
// random model (lavapipe): the checkpoint holds step N's state even when step N + 1's update lands
// before its tensors are written, and a Stop right after a step ends the cell with that step's
// checkpoint complete, not half written.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import type { MetricsRecord } from "../../core/metrics.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { loadCheckpoint } from "../checkpoint.ts";
import { DirStore } from "../store.deno.ts";
import type { FileStore } from "../store.ts";
import type { RunEnv } from "./context.ts";
import { denoEnv } from "./env.deno.ts";
import {
  tinyLengthSpec,
  tinyPromptCorpus,
  tinySetupCells,
  writeTinyDataset,
  writeVaryingLengthModel,
} from "./fixtures.deno.ts";
import { runNotebook } from "./runner.ts";

const TEMPLATE = "reasoning-answer@1";
const NOTEBOOK = {
  version: 1,
  title: "overlapped checkpoint",
  cells: [
    ...tinySetupCells(TEMPLATE, { spec: tinyLengthSpec(2) }),
    {
      id: "grpo",
      type: "grpo",
      // dropEqualGroups off: every step trains, so step 2 changes what step 1's checkpoint must not show.
      params: { G: 2, steps: 3, batchQuestions: 2, maxNewTokens: 4, lr: 0.05, evalEvery: 0, dropEqualGroups: false },
    },
  ],
};
const CK1 = "checkpoints/grpo/ckpt-00000001";

const base = await Deno.makeTempDir({ prefix: "rlvr-grpo-ck-" });
await writeTinyDataset(`${base}/data`);
await writeVaryingLengthModel(`${base}/model`, { seed: 3, corpus: await tinyPromptCorpus(`${base}/data`, [TEMPLATE]) });
const parsed = parseNotebook(NOTEBOOK);
if (!parsed.ok) throw new Error(`notebook: ${JSON.stringify(parsed.errors)}`);
const doc = parsed.doc;

/** `store` whose checkpoint tensor writes first wait for `gate(name)`. */
function gated(store: FileStore, gate: (name: string) => Promise<void>): FileStore {
  return {
    kind: store.kind,
    async write(name, data) {
      if (name.endsWith("/tensors.safetensors")) await gate(name);
      await store.write(name, data);
    },
    read: (name) => store.read(name),
    append: (name, text) => store.append(name, text),
    list: (prefix) => store.list(prefix),
    remove: (name) => store.remove(name),
  };
}

function envWith(out: string, gate: (name: string) => Promise<void>): RunEnv {
  const env = denoEnv({ out, base, onLog: () => {} });
  return { ...env, store: gated(env.store, gate) };
}

const isGrpo = (r: MetricsRecord, step: number) => r.phase === "grpo" && r.step === step;
const bytes = (dir: string, f: string) => Deno.readFile(`${dir}/${CK1}/${f}`);

let reference: Promise<string> | null = null;
/** The reference (run once, when first asked for): a run of one step, its checkpoint written with nothing after it. */
function oneStep(): Promise<string> {
  return reference ??= (async () => {
    const out = `${base}/one`;
    await runNotebook(doc, envWith(out, () => Promise.resolve()), { opts: { maxSteps: 1, seed: 1 }, onLog: () => {} });
    return out;
  })();
}

Deno.test({
  name: "grpo checkpoint: step 1's checkpoint is step 1's state though step 2 trains before its tensors are written",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const out = `${base}/two`;
    let step2Trained: () => void = () => {};
    const trained = new Promise<void>((r) => (step2Trained = r));
    let held = false;
    const env = envWith(out, async (name) => {
      if (!name.includes("ckpt-00000001/")) return;
      held = true;
      await trained;
    });
    await runNotebook(doc, env, {
      opts: { maxSteps: 2, seed: 1 },
      onLog: () => {},
      onMetrics: (r) => {
        if (isGrpo(r, 2)) step2Trained();
      },
    });
    assert(held, "step 1's tensors were written after step 2's update");
    const one = await oneStep();
    assertEquals(await bytes(out, "tensors.safetensors"), await bytes(one, "tensors.safetensors"));
    assertEquals(await bytes(out, "state.json"), await bytes(one, "state.json"));
    const ck = await loadCheckpoint(new DirStore(out), "checkpoints/grpo");
    assertEquals(ck?.step, 2);
  },
});

Deno.test({
  name: "grpo checkpoint: a Stop right after step 1 ends the cell with step 1's checkpoint complete",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const out = `${base}/stopped`;
    const stop = new AbortController();
    // The write is still under way when the Stop comes (at step 1's metrics, before its save starts).
    const env = envWith(out, () => new Promise((r) => setTimeout(r, 300)));
    await assertRejects(
      () =>
        runNotebook(doc, env, {
          opts: { seed: 1 },
          signal: stop.signal,
          onLog: () => {},
          onMetrics: (r) => {
            if (isGrpo(r, 1)) stop.abort(new Error("stopped by the test"));
          },
        }),
      /run cancelled/,
    );
    const ck = await loadCheckpoint(new DirStore(out), "checkpoints/grpo");
    assertEquals(ck?.step, 1, "the cell ended with step 1's checkpoint in force");
    const one = await oneStep();
    assertEquals(await bytes(out, "tensors.safetensors"), await bytes(one, "tensors.safetensors"));
    assertEquals(await bytes(out, "state.json"), await bytes(one, "state.json"));
  },
});
