import { assert } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { LORA_TARGETS, zeroAdapter } from "../../model/lora.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../model/state.ts";
import { destroyPrmHead, type PrmExample, prmScores, prmStep, prmTrainer, uploadPrmHead } from "./prm-step.ts";

const gpu = await requestGpu();

Deno.test("prmStep learns: a tiny Qwen2 with a fresh adapter and head separates good steps from bad ones (held-out accuracy and BCE)", async () => {
  const tiny = makeTinyModel("qwen2", { seed: 3 });
  const cfg = tiny.config;
  const V = cfg.vocabSize;
  // Chains over 24 tokens; a step is "good" when it ends on one of the first 12, and labels stop at
  // the first bad step, as PRM data does. Held-out chains are new sequences of the same tokens.
  const rng = new Rng(12);
  const alphabet = Array.from({ length: 24 }, (_, i) => (i * 11 + 5) % V);
  const make = (): PrmExample => {
    const ids = Array.from({ length: 12 }, () => alphabet[rng.int(alphabet.length)]);
    const rows = [3, 6, 9, 11];
    const labels: number[] = [];
    for (const t of rows) {
      const y = alphabet.indexOf(ids[t]) < 12 ? 1 : 0;
      labels.push(y);
      if (y === 0) break;
    }
    return { ids, rows: rows.slice(0, labels.length), labels };
  };
  const train = Array.from({ length: 64 }, make);
  const test = Array.from({ length: 32 }, make);
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const lora = uploadAdapter(gpu.device, cfg, zeroAdapter(cfg, { r: 8, alpha: 16, targets: LORA_TARGETS, seed: 1 }));
  const head = uploadPrmHead(
    gpu.device,
    Float32Array.from({ length: cfg.hiddenSize + 1 }, (_, i) => (i < cfg.hiddenSize ? 0.02 * rng.normal() : 0)),
  );
  const tr = prmTrainer(model, lora, head, { lr: { base: 5e-3, warmupSteps: 0, totalSteps: 60, decay: "constant" } });
  const evaluate = async () => {
    const s = await prmScores(model, lora, head, test);
    let right = 0, n = 0, bce = 0;
    test.forEach((e, i) =>
      e.rows.forEach((_, j) => {
        const p = s[i][j], y = e.labels![j];
        right += (p > 0.5 ? 1 : 0) === y ? 1 : 0;
        bce -= y * Math.log(p) + (1 - y) * Math.log(1 - p);
        n++;
      })
    );
    return { acc: right / n, bce: bce / n };
  };
  const before = await evaluate();
  let last = 0;
  for (let epoch = 0; epoch < 6; epoch++) {
    for (let i = 0; i < train.length; i += 16) {
      const r = await prmStep(tr, train.slice(i, i + 16), { microBatch: 8 });
      assert(!r.skipped, "no step is skipped");
      last = r.loss;
    }
  }
  const after = await evaluate();
  console.log(
    `held-out step accuracy ${before.acc.toFixed(3)} -> ${after.acc.toFixed(3)}, BCE ${before.bce.toFixed(3)} -> ${
      after.bce.toFixed(3)
    }; last training batch loss ${last.toFixed(3)}; ${tr.step} steps`,
  );
  assert(after.acc >= 0.85, `held-out accuracy ${after.acc}`);
  assert(after.bce < 0.5 * before.bce, `held-out BCE ${before.bce} -> ${after.bce}`);
  destroyPrmHead(head);
  destroyAdapter(lora);
  destroyModel(model);
});
