// Runs in the page (bundled by tests/browser/trainer.test.ts with `deno bundle`): the WebGPU
// trainer on Chromium's WebGPU (Dawn/Tint, SwiftShader on a CPU machine) against the float64
// reference — forward logprobs and LoRA gradients by finite differences, three architectures —
// and one GRPO step. Results land in globalThis.__trainer.
import { Rng } from "../../src/core/rng.ts";
import type { Arch } from "../../src/model/config.ts";
import { LORA_TARGETS, randomAdapter } from "../../src/model/lora.ts";
import { referenceLogprobs } from "../../src/model/reference.ts";
import { makeTinyModel } from "../../src/model/tiny.ts";
import { requestGpu } from "../../src/gpu/device.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../../src/gpu/model/state.ts";
import { loraGradients, type PgSequence } from "../../src/gpu/trainer/grad.ts";
import { grpoStep, grpoTrainer } from "../../src/gpu/trainer/grpo-step.ts";
import { logprobsWebgpu } from "../../src/gpu/trainer/logprobs.ts";

/** What the page reports per architecture. */
export interface TrainerPageResult {
  arch: Arch;
  logpMaxErr: number;
  fdMaxRelErr: number;
  fdChecked: number;
  stepSkipped: boolean;
}

async function check(arch: Arch): Promise<TrainerPageResult> {
  const { device } = await requestGpu();
  const tiny = makeTinyModel(arch, { seed: 3 });
  const cfg = tiny.config;
  const rng = new Rng(9);
  const seqs: PgSequence[] = [[8, 3, 1.2], [5, 2, -0.8]].map(([n, p, a]) => ({
    ids: Array.from({ length: n }, () => rng.int(cfg.vocabSize)),
    promptLen: p,
    advantage: a,
  }));
  const adapter = randomAdapter(cfg, { r: 2, alpha: 4, targets: LORA_TARGETS, seed: 4, bScale: 0.2 });
  const model = uploadModel(device, cfg, tiny.weights, { maxVocabRows: 64 });
  const got = await logprobsWebgpu(model, seqs.map((s) => s.ids), adapter);
  const want = referenceLogprobs(cfg, tiny.weights, seqs.map((s) => s.ids), adapter);
  let logpMaxErr = 0;
  got.forEach((row, i) => row.forEach((x, t) => (logpMaxErr = Math.max(logpMaxErr, Math.abs(x - want[i][t])))));
  const lora = uploadAdapter(device, cfg, adapter);
  const { grads } = await loraGradients(model, lora, seqs);
  const loss = () => {
    const lp = referenceLogprobs(cfg, tiny.weights, seqs.map((s) => s.ids), adapter);
    let num = 0, tok = 0;
    seqs.forEach((s, i) => {
      for (let t = s.promptLen; t < s.ids.length; t++) num += s.advantage * lp[i][t - 1];
      tok += s.ids.length - s.promptLen;
    });
    return -num / tok;
  };
  let gmax = 0, fdMaxRelErr = 0, fdChecked = 0;
  for (const g of grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
  for (const [name, g] of grads) {
    const t = adapter.tensors.get(name);
    if (!t) throw new Error(`no adapter tensor ${name}`);
    let i = 0;
    for (let j = 1; j < g.data.length; j++) if (Math.abs(g.data[j]) > Math.abs(g.data[i])) i = j;
    const x0 = t.data[i];
    t.data[i] = x0 + 1e-3;
    const hp = t.data[i] - x0, lp = loss();
    t.data[i] = x0 - 1e-3;
    const hm = x0 - t.data[i], lm = loss();
    t.data[i] = x0;
    fdMaxRelErr = Math.max(fdMaxRelErr, Math.abs(g.data[i] - (lp - lm) / (hp + hm)) / gmax);
    fdChecked++;
  }
  const rep = await grpoStep(
    grpoTrainer(model, lora, { lr: { base: 1e-3, warmupSteps: 0, totalSteps: 1, decay: "constant" } }),
    seqs,
  );
  destroyAdapter(lora);
  destroyModel(model);
  return { arch, logpMaxErr, fdMaxRelErr, fdChecked, stepSkipped: rep.skipped };
}

const g = globalThis as { __trainer?: { results?: TrainerPageResult[]; error?: string } };
(async () => {
  try {
    const results: TrainerPageResult[] = [];
    for (const arch of ["qwen2", "llama", "qwen3"] as const) results.push(await check(arch));
    g.__trainer = { results };
  } catch (e) {
    g.__trainer = { error: e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e) };
  }
})();
