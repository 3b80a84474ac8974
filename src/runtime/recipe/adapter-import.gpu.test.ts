// A model cell's `adapter` (issue #6): a PEFT folder written elsewhere (here: writePeftFolder of a
// seeded adapter with non-zero B, on three of the seven targets) is what the policy samples with
// and the trainer starts from; the run's own adapter/ export, imported again, round-trips; a GRPO
// checkpoint restores over the imported adapter on resume; a rank, target or shape mismatch is
// refused before the graph build, with what to change. Tiny random model on lavapipe.
import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { requestGpu } from "../../gpu/device.ts";
import { loadHfModel } from "../../model/hf.ts";
import { LORA_TARGETS, type LoraAdapter, loraKey, randomAdapter } from "../../model/lora.ts";
import { parsePeftAdapter, readPeftAdapter } from "../../model/peft.ts";
import { writePeftFolder } from "../../model/peft.deno.ts";
import { OrtPolicy } from "../../model/policy.ts";
import { DirSource } from "../../model/source.deno.ts";
import { denoEnv } from "./env.deno.ts";
import {
  tinyDatasetCell,
  tinyLengthSpec,
  tinyPromptCorpus,
  writeTinyDataset,
  writeVaryingLengthModel,
} from "./fixtures.deno.ts";
import { ModelRuntime, startFrom } from "./model-runtime.ts";
import { runNotebook } from "./runner.ts";

const TEMPLATE = "reasoning-answer@1";
// The length component splits completions of 3 tokens or fewer from those of 4 (maxNewTokens): a
// random tiny model writes both, so groups have a reward difference and the step trains whichever
// sampler (and so whichever random draws) the runtime uses.
const SPEC = tinyLengthSpec(3);
const IMPORTED_TARGETS = ["q_proj", "v_proj", "down_proj"] as const;

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assertEquals(a.length, b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

function maxDiffRows(a: number[][], b: number[][]): number {
  assertEquals(a.length, b.length);
  return Math.max(...a.map((row, i) => maxAbsDiff(row, b[i])));
}

/** Every imported target's tensors equal `src`'s bit for bit; every other target's B is zero. */
function assertStartsFrom(got: LoraAdapter, src: LoraAdapter, layers: number): void {
  assertEquals([got.r, got.alpha], [src.r, src.alpha]);
  for (let l = 0; l < layers; l++) {
    for (const t of LORA_TARGETS) {
      if ((src.targets as readonly string[]).includes(t)) {
        for (const w of ["A", "B"] as const) {
          const k = loraKey(l, t, w);
          assertEquals(maxAbsDiff(got.tensors.get(k)!.data, src.tensors.get(k)!.data), 0, k);
        }
      } else {
        const b = got.tensors.get(loraKey(l, t, "B"));
        assert(b && b.data.every((x) => x === 0), `${loraKey(l, t, "B")} should start at zero`);
      }
    }
  }
}

async function fixture(): Promise<{ dir: string; src: LoraAdapter; hf: Awaited<ReturnType<typeof loadHfModel>> }> {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-adapter-" });
  await writeTinyDataset(`${dir}/data`);
  await writeVaryingLengthModel(`${dir}/model`, { seed: 3, corpus: await tinyPromptCorpus(`${dir}/data`, [TEMPLATE]) });
  const hf = await loadHfModel(new DirSource(`${dir}/model`));
  // As trained elsewhere: non-zero B (so the adapted model differs from the base), r 4, alpha 8.
  const src = randomAdapter(hf.config, { r: 4, alpha: 8, targets: IMPORTED_TARGETS, seed: 11, bScale: 0.05 });
  await writePeftFolder(`${dir}/trained-elsewhere`, src, { baseModel: "tiny" });
  return { dir, src, hf };
}

Deno.test({
  name:
    "adapter import: the policy samples with the imported adapter (log-probs of a policy given it directly), the trainer starts from it; mismatches are refused",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { dir, src, hf } = await fixture();
    const gpu = await requestGpu();
    const device = () => Promise.resolve(gpu.device);
    const from = `${dir}/trained-elsewhere`;
    const imported = await readPeftAdapter(new DirSource(from));
    const opts = { dtype: "f32" as const, loraRank: 4, loraAlpha: 8, seed: 0 };
    const rt = await ModelRuntime.create({ ...hf, name: "tiny" }, device, {
      ...opts,
      imported: { adapter: imported, from },
    });
    const fresh = await ModelRuntime.create({ ...hf, name: "tiny" }, device, opts);
    const direct = await OrtPolicy.create(hf.config, hf.weights, {
      dtype: "f32",
      loraTargets: src.targets,
      loraScale: src.alpha / src.r,
    });
    try {
      assertEquals(rt.imported, { from, targets: [...IMPORTED_TARGETS] });
      assertEquals(fresh.imported, null);
      assertEquals(rt.adapter.targets, [...LORA_TARGETS]);
      assertStartsFrom(rt.adapter, src, hf.config.numLayers);
      direct.setAdapter(src, "direct");
      const seqs = [[1, 5, 9, 14, 2, 7, 30], [3, 3, 8, 21, 40]];
      const got = await rt.policy.logprobs(seqs);
      const want = await direct.logprobs(seqs);
      const base = await fresh.policy.logprobs(seqs);
      const same = maxDiffRows(got, want), moved = maxDiffRows(base, want);
      assert(same < 1e-5, `imported vs direct log-probs differ by ${same}`);
      assert(moved > 1e-3, `the source adapter should change log-probs (base vs direct differ by only ${moved})`);
      // The trainer's GPU copy is the imported adapter (read back by currentAdapter), and the policy,
      // now reading the trainer's own buffers on the shared device, computes the same log-probs.
      await rt.freshTrainer({});
      await rt.syncPolicy();
      assertStartsFrom(await rt.currentAdapter(), src, hf.config.numLayers);
      assert(maxDiffRows(await rt.policy.logprobs(seqs), want) < 1e-5);

      // Refusals, before any graph is built.
      await assertRejects(
        () =>
          ModelRuntime.create({ ...hf, name: "tiny" }, device, {
            ...opts,
            loraRank: 8,
            imported: { adapter: imported, from },
          }),
        new RegExp(
          `adapter ${from} has r = 4 and lora_alpha = 8, the model cell loraRank 8 and loraAlpha 8: set the model cell's loraRank to 4 and loraAlpha to 8`,
        ),
      );
      await assertRejects(
        () =>
          ModelRuntime.create({ ...hf, name: "tiny" }, device, {
            ...opts,
            loraAlpha: 16,
            imported: { adapter: imported, from },
          }),
        /has r = 4 and lora_alpha = 8, the model cell loraRank 4 and loraAlpha 16: set the model cell's loraRank to 4 and loraAlpha to 8/,
      );
      await assertRejects(
        () =>
          ModelRuntime.create({ ...hf, name: "tiny" }, device, {
            ...opts,
            targets: ["q_proj", "k_proj"],
            imported: { adapter: imported, from },
          }),
        /targets v_proj, down_proj, which this model runtime has no LoRA inputs for \(it has q_proj, k_proj\)/,
      );
      const wider = { ...hf.config, intermediateSize: hf.config.intermediateSize * 2 };
      const misfit = randomAdapter(wider, { r: 4, alpha: 8, targets: ["down_proj"], seed: 1 });
      const freshAdapter = rt.adapter;
      let err: unknown = null;
      try {
        startFrom(hf.config, freshAdapter, misfit, "x");
      } catch (e) {
        err = e;
      }
      assert(
        err instanceof Error &&
          /adapter x does not fit this model: LoRA adapter: tensor .*down_proj\.lora_A\.weight has shape \[4, \d+\], model expects \[4, \d+\]/
            .test(err.message),
        String(err),
      );
      const deeper = randomAdapter({ ...hf.config, numLayers: hf.config.numLayers + 1 }, {
        r: 4,
        alpha: 8,
        targets: ["q_proj"],
        seed: 1,
      });
      err = null;
      try {
        startFrom(hf.config, freshAdapter, deeper, "y");
      } catch (e) {
        err = e;
      }
      assert(
        err instanceof Error &&
          /adapter y does not fit this model: .*2 tensor\(s\) have no place in this model, e\.g\. .*layers\.\d+\.self_attn\.q_proj/
            .test(
              err.message,
            ),
        String(err),
      );
    } finally {
      await rt.release();
      await fresh.release();
      await direct.release();
    }
  },
});

const cells = (adapter: string | undefined, loraRank = 4, grpo = true) => [
  tinyDatasetCell({ devFraction: 0.25 }),
  {
    id: "model",
    type: "model",
    params: { source: "url", url: "model", dtype: "f32", loraRank, loraAlpha: 8, ...(adapter ? { adapter } : {}) },
  },
  { id: "prompt", type: "prompt", params: { template: TEMPLATE, maxPromptTokens: 1024 } },
  { id: "reward", type: "reward", params: { spec: SPEC } },
  ...(grpo
    ? [{
      id: "grpo",
      type: "grpo",
      params: { G: 8, steps: 4, batchQuestions: 2, maxNewTokens: 4, lr: 0.01, evalEvery: 0, evalN: 2 },
    }]
    : []),
];

function notebook(c: unknown[]) {
  const r = parseNotebook({ version: 1, title: "import", cells: c });
  assert(r.ok, JSON.stringify(!r.ok && r.errors));
  return r.doc;
}

const adapterAt = async (d: string) =>
  parsePeftAdapter(
    JSON.parse(await Deno.readTextFile(`${d}/adapter_config.json`)),
    await Deno.readFile(`${d}/adapter_model.safetensors`),
  );

Deno.test({
  name:
    "adapter import: a model cell's adapter (path relative to the notebook) is the run's start; GRPO trains from it; resume restores the checkpoint over it; a run's adapter/ imports back",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const { dir, src, hf } = await fixture();
    const L = hf.config.numLayers;
    // No training: the run's final adapter/ is the imported one, and the summary says where it came from.
    const a = await runNotebook(
      notebook(cells("trained-elsewhere", 4, false)),
      denoEnv({ out: `${dir}/a`, base: dir }),
    );
    const m = a.cells.find((c) => c.id === "model")?.model;
    assertEquals(m?.lora.imported, { from: `${dir}/trained-elsewhere`, targets: [...IMPORTED_TARGETS] });
    const exported = await adapterAt(`${dir}/a/adapter`);
    assertStartsFrom(exported, src, L);

    // One GRPO step from the imported adapter: it moves (Adam: at most about lr per element) from src, not from B = 0.
    const out = `${dir}/b`;
    const b = await runNotebook(notebook(cells("trained-elsewhere")), denoEnv({ out, base: dir }), {
      opts: { maxSteps: 1 },
    });
    assertEquals(b.cells.find((c) => c.id === "grpo")?.report?.kind, "grpo");
    const trained = await adapterAt(`${out}/adapter`);
    let moved = 0;
    for (let l = 0; l < L; l++) {
      for (const t of IMPORTED_TARGETS) {
        const k = loraKey(l, t, "B");
        const d = maxAbsDiff(trained.tensors.get(k)!.data, src.tensors.get(k)!.data);
        assert(d <= 0.0125, `${k} moved ${d} from the imported adapter in one step of lr 0.01`);
        moved = Math.max(moved, d);
      }
    }
    assert(moved > 0, "one GRPO step should change the imported adapter");

    // Resume into the same folder: the checkpoint (step 1 of max 1) is restored over the imported adapter.
    await runNotebook(notebook(cells("trained-elsewhere")), denoEnv({ out, base: dir }), { opts: { maxSteps: 1 } });
    const resumed = await adapterAt(`${out}/adapter`);
    for (const [k, t] of trained.tensors) assertEquals(maxAbsDiff(resumed.tensors.get(k)!.data, t.data), 0, k);
    // A checkpoint made from another starting adapter is refused.
    await assertRejects(
      () => runNotebook(notebook(cells("a/adapter")), denoEnv({ out, base: dir }), { opts: { maxSteps: 1 } }),
      /cell "grpo" \(grpo\): checkpoint under checkpoints\/grpo was made with other parameters/,
    );

    // The adapter/ a run wrote imports back as it is (all seven targets, bit for bit).
    const c = await runNotebook(notebook(cells("b/adapter", 4, false)), denoEnv({ out: `${dir}/c`, base: dir }));
    assertEquals(c.cells.find((x) => x.id === "model")?.model?.lora.imported?.targets, [...LORA_TARGETS]);
    const again = await adapterAt(`${dir}/c/adapter`);
    for (const [k, t] of trained.tensors) assertEquals(maxAbsDiff(again.tensors.get(k)!.data, t.data), 0, k);

    // A rank mismatch fails the model cell with what to change.
    await assertRejects(
      () => runNotebook(notebook(cells("trained-elsewhere", 8, false)), denoEnv({ out: `${dir}/d`, base: dir })),
      /^cell "model" \(model\): adapter .*trained-elsewhere has r = 4 and lora_alpha = 8, the model cell loraRank 8 and loraAlpha 8: set the model cell's loraRank to 4 and loraAlpha to 8/,
    );
    // A missing folder names the file and where it was looked for.
    await assertRejects(
      () => runNotebook(notebook(cells("nowhere", 4, false)), denoEnv({ out: `${dir}/e`, base: dir })),
      /^cell "model" \(model\): model file adapter_config\.json not found in directory .*nowhere/,
    );
    await Deno.remove(dir, { recursive: true });
  },
});
