import { assert } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { Arch, ModelConfig } from "../../model/config.ts";
import { expectedShapes } from "../../model/config.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import type { Weights } from "../../model/tensor.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { destroyFullParams, fullParams } from "../model/full.ts";
import { randomAdapter } from "../../model/lora.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../model/state.ts";
import { fullGradients, type PgSequence } from "./grad.ts";

const gpu = await requestGpu();

function refLoss(cfg: ModelConfig, w: Weights, seqs: PgSequence[]): number {
  const lp = referenceLogprobs(cfg, w, seqs.map((s) => s.ids));
  let num = 0, tokens = 0;
  seqs.forEach((s, i) => {
    for (let t = s.promptLen; t < s.ids.length; t++) num += s.advantage * lp[i][t - 1];
    tokens += s.ids.length - s.promptLen;
  });
  return -num / tokens;
}

for (const arch of ["qwen2", "llama", "qwen3"] as const satisfies readonly Arch[]) {
  Deno.test(`fullGradients ${arch}: every base weight (embeddings, norms, projections, Qwen2 biases, lm head) against central finite differences`, async () => {
    const tiny = makeTinyModel(arch, { seed: 31, layers: 1, vocabSize: 150 });
    const cfg = tiny.config;
    const rng = new Rng(6);
    const seqs: PgSequence[] = [
      { ids: Array.from({ length: 8 }, () => rng.int(cfg.vocabSize)), promptLen: 3, advantage: 1.1 },
      { ids: Array.from({ length: 5 }, () => rng.int(cfg.vocabSize)), promptLen: 2, advantage: -0.6 },
    ];
    const model = uploadModel(gpu.device, cfg, tiny.weights, { maxVocabRows: 64 });
    const full = fullParams(model);
    const { grads } = await fullGradients(model, full, seqs);
    assert(
      grads.size === expectedShapes(cfg).size,
      `one gradient per weight (${grads.size} vs ${expectedShapes(cfg).size})`,
    );
    let gmax = 0, worst = 0, checked = 0;
    for (const g of grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
    for (const [name, g] of grads) {
      const t = tiny.weights.get(name);
      assert(t !== undefined && t.data.length === g.data.length, `${name} matches its weight`);
      let big = 0;
      for (let i = 1; i < g.data.length; i++) if (Math.abs(g.data[i]) > Math.abs(g.data[big])) big = i;
      // Embedding rows of the batch's own tokens carry gradient; pick one of those besides the largest.
      const picks = name === "model.embed_tokens.weight"
        ? [big, seqs[0].ids[1] * cfg.hiddenSize + 3]
        : [big, rng.int(g.data.length)];
      for (const i of picks) {
        const x0 = t.data[i];
        const h = 1e-3 * Math.max(1, Math.abs(x0));
        t.data[i] = x0 + h;
        const hp = t.data[i] - x0, lp = refLoss(cfg, tiny.weights, seqs);
        t.data[i] = x0 - h;
        const hm = x0 - t.data[i], lm = refLoss(cfg, tiny.weights, seqs);
        t.data[i] = x0;
        const fd = (lp - lm) / (hp + hm);
        const err = Math.abs(g.data[i] - fd);
        worst = Math.max(worst, err / gmax);
        checked++;
        assert(err <= 1e-3 * gmax + 2e-3 * Math.abs(fd), `${name}[${i}]: gpu ${g.data[i]} vs finite difference ${fd}`);
      }
    }
    console.log(
      `${arch} full: ${checked} entries of ${grads.size} weights; max |gpu - fd| / max|grad| = ${
        worst.toExponential(2)
      }, max |grad| ${gmax.toExponential(2)}`,
    );
    destroyFullParams(full);
    destroyModel(model);
  });
}

Deno.test("fullGradients with activation recomputation and a LoRA adapter alongside equal the stored-activation gradients exactly", async () => {
  const tiny = makeTinyModel("qwen3", { seed: 8, layers: 2, vocabSize: 100 });
  const cfg = tiny.config;
  const rng = new Rng(2);
  const seqs: PgSequence[] = [7, 10].map((n, i) => ({
    ids: Array.from({ length: n }, () => rng.int(cfg.vocabSize)),
    promptLen: 2 + i,
    advantage: 0.5 - i,
  }));
  const model = uploadModel(gpu.device, cfg, tiny.weights, { maxVocabRows: 64 });
  const lora = uploadAdapter(
    gpu.device,
    cfg,
    randomAdapter(cfg, { r: 2, alpha: 4, targets: ["v_proj", "up_proj"], seed: 1, bScale: 0.2 }),
  );
  const full = fullParams(model);
  const a = await fullGradients(model, full, seqs, { lora });
  const b = await fullGradients(model, full, seqs, { lora, recompute: true });
  let nonzero = 0;
  for (const [name, g] of a.grads) {
    const h = b.grads.get(name);
    assert(h !== undefined, name);
    g.data.forEach((x, i) => {
      assert(x === h.data[i], `${name}[${i}]: ${x} vs ${h.data[i]}`);
      if (x !== 0) nonzero++;
    });
  }
  assert(nonzero > 10000, `non-trivial gradients (${nonzero} non-zero)`);
  destroyAdapter(lora);
  destroyFullParams(full);
  destroyModel(model);
});
