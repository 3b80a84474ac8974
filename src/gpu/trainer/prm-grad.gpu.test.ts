import { assert, assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { Arch } from "../../model/config.ts";
import { LORA_TARGETS, randomAdapter } from "../../model/lora.ts";
import { dequantizeQ4, quantizeQ4 } from "../../model/quant.ts";
import type { Weights } from "../../model/tensor.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { destroyAdapter, destroyModel, readAdapterGrads, uploadAdapter, uploadModel } from "../model/state.ts";
import { referencePrmLogits, referencePrmLoss } from "../../../tests/gpu-ref/prm.ref.ts";
import { destroyPrmHead, type PrmExample, prmGradients, prmScores, readPrmHead, uploadPrmHead } from "./prm-step.ts";

const gpu = await requestGpu();
const PROJECTION = /^model\.layers\.\d+\.(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight$/;

function q4Weights(w: Weights): Weights {
  const out = new Map(w);
  for (const [name, t] of w) if (PROJECTION.test(name)) out.set(name, dequantizeQ4(quantizeQ4(t)));
  return out;
}

/** Three chains of different lengths with 1-3 scored steps each: hard labels, one soft label, uneven weights. */
function examples(V: number, rng: Rng): PrmExample[] {
  const seq = (n: number) => Array.from({ length: n }, () => rng.int(V));
  return [
    { ids: seq(10), rows: [4, 7, 9], labels: [1, 1, 0] },
    { ids: seq(6), rows: [5], labels: [1], weights: [2] },
    { ids: seq(13), rows: [3, 12], labels: [0.5, 0], weights: [0.5, 1] },
  ];
}

for (
  const [arch, q4] of [["qwen2", false], ["llama", false], ["qwen3", false], [
    "qwen2",
    true,
  ]] as const satisfies readonly (readonly [Arch, boolean])[]
) {
  Deno.test(`prmGradients ${arch}${q4 ? " on q4 base weights" : ""}: LoRA tensors and the head against central finite differences of the float64 reference`, async () => {
    const tiny = makeTinyModel(arch, { seed: 31 });
    const cfg = tiny.config;
    const H = cfg.hiddenSize;
    const refW = q4 ? q4Weights(tiny.weights) : tiny.weights;
    const rng = new Rng(7);
    const ex = examples(cfg.vocabSize, rng);
    const adapter = randomAdapter(cfg, { r: 3, alpha: 6, targets: LORA_TARGETS, seed: 4, bScale: 0.3 });
    const wb = rng.uniformArray(H + 1, -0.5, 0.5);
    const model = uploadModel(gpu.device, cfg, tiny.weights, { maxVocabRows: 128, q4 });
    const lora = uploadAdapter(gpu.device, cfg, adapter);
    const head = uploadPrmHead(gpu.device, wb);
    const r = await prmGradients(model, lora, head, ex);
    const l0 = referencePrmLoss(cfg, refW, ex, adapter, wb);
    assert(Math.abs(r.loss - l0) < 1e-5 * Math.max(1, Math.abs(l0)), `loss ${r.loss} vs reference ${l0}`);
    const z0 = referencePrmLogits(cfg, refW, ex, adapter, wb);
    const ez = assertClose(r.logits.flat(), z0.flat(), { atol: 1e-4, rtol: 1e-4, name: "logits" });
    // Scores without gradients, in micro-batches of one: the same forward.
    const scores = await prmScores(model, lora, head, ex, { microBatch: 1 });
    assertClose(scores.flat(), r.logits.flat().map((z) => 1 / (1 + Math.exp(-z))), {
      atol: 1e-6,
      rtol: 1e-5,
      name: "prmScores",
    });
    const grads = await readAdapterGrads(gpu.device, lora);
    grads.set("head", { shape: [H + 1], data: await readPrmHead(gpu.device, head, "dwb") });
    let gmax = 0, worst = 0, checked = 0;
    for (const g of grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
    for (const [name, g] of grads) {
      const t = name === "head" ? { data: wb } : adapter.tensors.get(name);
      assert(t !== undefined, `gradient ${name} names an adapter tensor`);
      let big = 0;
      for (let i = 1; i < g.data.length; i++) if (Math.abs(g.data[i]) > Math.abs(g.data[big])) big = i;
      // The head: its largest entry, two random ones and the bias; each LoRA tensor: its largest and two random.
      const picks = name === "head"
        ? [big, rng.int(H), rng.int(H), H]
        : [big, rng.int(g.data.length), rng.int(g.data.length)];
      for (const i of picks) {
        const x0 = t.data[i];
        const h = 1e-3 * Math.max(1, Math.abs(x0));
        t.data[i] = x0 + h;
        const hp = t.data[i] - x0;
        const lp = referencePrmLoss(cfg, refW, ex, adapter, wb);
        t.data[i] = x0 - h;
        const hm = x0 - t.data[i];
        const lm = referencePrmLoss(cfg, refW, ex, adapter, wb);
        t.data[i] = x0;
        const fd = (lp - lm) / (hp + hm);
        const err = Math.abs(g.data[i] - fd);
        worst = Math.max(worst, err / (gmax + 1e-12));
        checked++;
        assert(
          err <= 1e-3 * gmax + 2e-3 * Math.abs(fd),
          `${name}[${i}]: gpu ${g.data[i]} vs finite difference ${fd} (|err| ${err.toExponential(2)}, max |grad| ${
            gmax.toExponential(2)
          })`,
        );
      }
    }
    console.log(
      `${arch}${q4 ? " q4" : ""}: loss ${r.loss.toFixed(6)} (ref ${l0.toFixed(6)}), logits max |err| ${
        ez.maxAbs.toExponential(2)
      }; ${checked} entries of ${grads.size} tensors (28 LoRA + head); max |gpu - fd| / max|grad| = ${
        worst.toExponential(2)
      }, max |grad| ${gmax.toExponential(2)}`,
    );
    destroyPrmHead(head);
    destroyAdapter(lora);
    destroyModel(model);
  });
}

Deno.test("prmGradients: micro-batches of one and recomputed activations give the whole-batch gradients", async () => {
  const tiny = makeTinyModel("qwen3", { seed: 5 });
  const cfg = tiny.config;
  const rng = new Rng(3);
  const ex = examples(cfg.vocabSize, rng);
  const adapter = randomAdapter(cfg, { r: 4, alpha: 4, targets: LORA_TARGETS, seed: 6, bScale: 0.2 });
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  const head = uploadPrmHead(gpu.device, rng.uniformArray(cfg.hiddenSize + 1, -0.5, 0.5));
  const read = async () => {
    const g = await readAdapterGrads(gpu.device, lora);
    return [...[...g.values()].flatMap((t) => Array.from(t.data)), ...(await readPrmHead(gpu.device, head, "dwb"))];
  };
  const whole = await prmGradients(model, lora, head, ex);
  const gWhole = await read();
  const sliced = await prmGradients(model, lora, head, ex, { microBatch: 1 });
  const gSliced = await read();
  const recomputed = await prmGradients(model, lora, head, ex, { recompute: true });
  const gRecomputed = await read();
  assert(Math.abs(whole.loss - sliced.loss) < 1e-6, `loss ${whole.loss} vs ${sliced.loss} in micro-batches`);
  const scale = Math.max(...gWhole.map(Math.abs));
  const e = assertClose(gSliced, gWhole, { atol: 1e-5 * scale, rtol: 1e-4, name: "micro-batched gradients" });
  assert(gRecomputed.every((x, i) => x === gWhole[i]), "recomputation changes the gradients");
  assert(gWhole.filter((x) => x !== 0).length > 1000, "gradients are not trivially zero");
  console.log(
    `micro-batches of 1: max |diff| ${e.maxAbs.toExponential(2)} of max |grad| ${
      scale.toExponential(2)
    }; recomputation bitwise equal; loss ${recomputed.loss}`,
  );
  destroyPrmHead(head);
  destroyAdapter(lora);
  destroyModel(model);
});
