import { assert, assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { Arch } from "../../model/config.ts";
import { LORA_TARGETS, randomAdapter } from "../../model/lora.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { destroyModel, uploadModel } from "../model/state.ts";
import { logprobsWebgpu } from "./logprobs.ts";

const gpu = await requestGpu();

function randomSeqs(rng: Rng, V: number, lens: number[]): number[][] {
  return lens.map((n) => Array.from({ length: n }, () => rng.int(V)));
}

for (const arch of ["qwen2", "llama", "qwen3"] as const satisfies readonly Arch[]) {
  Deno.test(`logprobsWebgpu ${arch}: matches the float64 reference, with and without a LoRA adapter on all seven targets`, async () => {
    const tiny = makeTinyModel(arch, { seed: 7, ...(arch === "llama" ? { attentionBias: true } : {}) });
    const cfg = tiny.config;
    const rng = new Rng(11);
    const seqs = randomSeqs(rng, cfg.vocabSize, [9, 4, 13]);
    // maxVocabRows splits the 280-row vocabulary into 3 chunks, exercising the streaming log-softmax.
    const model = uploadModel(gpu.device, cfg, tiny.weights, { maxVocabRows: 100 });
    const adapter = randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 3, bScale: 0.2 });
    let worst = 0;
    for (const a of [undefined, adapter]) {
      const got = await logprobsWebgpu(model, seqs, a);
      const want = referenceLogprobs(cfg, tiny.weights, seqs, a);
      assert(got.length === want.length, "one row per sequence");
      got.forEach((g, i) => {
        const { maxAbs } = assertClose(g, want[i], { atol: 2e-3, rtol: 0, name: `${arch} seq ${i} ${a ? "lora" : "base"}` });
        worst = Math.max(worst, maxAbs);
      });
    }
    if (adapter) {
      // The adapter must change the result, or the comparison would not test the LoRA path.
      const base = referenceLogprobs(cfg, tiny.weights, seqs);
      const adapted = referenceLogprobs(cfg, tiny.weights, seqs, adapter);
      const diff = Math.max(...base.flatMap((r, i) => r.map((x, t) => Math.abs(x - adapted[i][t]))));
      assert(diff > 1e-2, `adapter changes logprobs visibly (max diff ${diff})`);
    }
    console.log(`${arch}: max |logp gpu - ref| = ${worst.toExponential(2)}`);
    destroyModel(model);
  });
}
