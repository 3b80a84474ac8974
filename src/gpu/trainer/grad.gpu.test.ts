import { assert } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import type { Arch } from "../../model/config.ts";
import { LORA_TARGETS, type LoraAdapter, randomAdapter } from "../../model/lora.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import type { ModelConfig } from "../../model/config.ts";
import type { Weights } from "../../model/tensor.ts";
import { dequantizeQ4, quantizeQ4 } from "../../model/quant.ts";
import { fromF16, toF16 } from "../../model/half.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { requestGpu } from "../device.ts";
import { destroyAdapter, destroyModel, uploadAdapter, uploadModel } from "../model/state.ts";
import { loraGradients, type PgSequence } from "./grad.ts";
import { setPerfSwitches } from "../switches.ts";
import { watchPassLabels } from "../../../tests/pass-labels.ts";

const gpu = await requestGpu();

/** The lora-grad loss in float64 through the reference model. */
function refLoss(cfg: ModelConfig, w: Weights, seqs: PgSequence[], a: LoraAdapter): number {
  const lp = referenceLogprobs(cfg, w, seqs.map((s) => s.ids), a);
  let num = 0, tokens = 0;
  seqs.forEach((s, i) => {
    for (let t = s.promptLen; t < s.ids.length; t++) num += s.advantage * lp[i][t - 1];
    tokens += s.ids.length - s.promptLen;
  });
  return -num / tokens;
}

const PROJECTION = /^model\.layers\.\d+\.(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight$/;

/** Dequantised copies of the layer projections: what a q4 upload computes with. */
function q4Weights(w: Weights): Weights {
  const out = new Map(w);
  for (const [name, t] of w) if (PROJECTION.test(name)) out.set(name, dequantizeQ4(quantizeQ4(t)));
  return out;
}

/** The layer projections rounded to f16: what an f16 upload computes with (on a device with shader-f16). */
function f16Weights(w: Weights): Weights {
  const out = new Map(w);
  for (const [name, t] of w) if (PROJECTION.test(name)) out.set(name, { shape: t.shape, data: fromF16(toF16(t.data)) });
  return out;
}

// "q4deq": q4 base weights under the switch q4deq=2 (each q4 product dequantises W and runs the f32 kernels).
type Base = "f32" | "q4" | "q4deq" | "f16";
for (
  const [arch, base] of [
    ["qwen2", "f32"],
    ["llama", "f32"],
    ["qwen3", "f32"],
    ["qwen2", "q4"],
    ["llama", "q4"],
    ["qwen3", "q4deq"],
    ["qwen2", "f16"],
    ["qwen3", "f16"],
  ] as const satisfies readonly (readonly [Arch, Base])[]
) {
  const q4 = base === "q4" || base === "q4deq";
  Deno.test(`loraGradients ${arch}${base !== "f32" ? ` on ${base === "q4deq" ? "q4 base weights dequantised for the f32 kernels (switch q4deq=2)" : `${base} base weights`}` : ""}: every LoRA tensor against central finite differences of the float64 reference`, async () => {
    const tiny = makeTinyModel(arch, { seed: 21 });
    const cfg = tiny.config;
    const f16 = base === "f16" && gpu.f16;
    const refW = q4 ? q4Weights(tiny.weights) : f16 ? f16Weights(tiny.weights) : tiny.weights;
    const rng = new Rng(5);
    const seqs: PgSequence[] = [
      { ids: Array.from({ length: 9 }, () => rng.int(cfg.vocabSize)), promptLen: 4, advantage: 1.3 },
      { ids: Array.from({ length: 6 }, () => rng.int(cfg.vocabSize)), promptLen: 2, advantage: -0.7 },
      { ids: Array.from({ length: 11 }, () => rng.int(cfg.vocabSize)), promptLen: 7, advantage: 0.4 },
    ];
    const adapter = randomAdapter(cfg, { r: 3, alpha: 6, targets: LORA_TARGETS, seed: 9, bScale: 0.3 });
    const model = uploadModel(gpu.device, cfg, tiny.weights, { maxVocabRows: 128, q4, f16: base === "f16" });
    assert(model.half.size === (f16 ? 7 * cfg.numLayers : 0), `f16 projections held: ${model.half.size}`);
    const lora = uploadAdapter(gpu.device, cfg, adapter);
    // q4deq: a pass per dispatch (passes=split) so that the watched pass labels name every kernel that ran.
    const prev = base === "q4deq" ? setPerfSwitches({ q4deq: 2, passes: "split" }) : undefined;
    const watch = base === "q4deq" ? watchPassLabels(gpu.device) : undefined;
    let got: Awaited<ReturnType<typeof loraGradients>>;
    try {
      got = await loraGradients(model, lora, seqs);
    } finally {
      watch?.stop();
      if (prev) setPerfSwitches(prev);
    }
    if (watch) {
      const deq = watch.labels.filter((l) => l.startsWith("q4-dequant")).length;
      assert(
        deq > 0 && !watch.labels.some((l) => l.startsWith("q4matmul")),
        `q4deq=2: every q4 product dequantised (${deq} dequant passes): ${[...new Set(watch.labels)].join(", ")}`,
      );
    }
    const { grads, loss } = got;
    const l0 = refLoss(cfg, refW, seqs, adapter);
    assert(Math.abs(loss - l0) < 1e-4 * Math.max(1, Math.abs(l0)), `loss ${loss} vs reference ${l0}`);
    // Central differences on 3 entries of each of the 2 * 7 * layers tensors (the largest-gradient
    // entry and two random ones); h is applied in float32, so the step actually taken is used.
    let worst = 0, checked = 0, gmax = 0;
    for (const g of grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
    for (const [name, g] of grads) {
      const t = adapter.tensors.get(name);
      assert(t !== undefined, `gradient ${name} names an adapter tensor`);
      let big = 0;
      for (let i = 1; i < g.data.length; i++) if (Math.abs(g.data[i]) > Math.abs(g.data[big])) big = i;
      for (const i of [big, rng.int(g.data.length), rng.int(g.data.length)]) {
        const x0 = t.data[i];
        const h = 1e-3 * Math.max(1, Math.abs(x0));
        t.data[i] = x0 + h;
        const hp = t.data[i] - x0;
        const lp = refLoss(cfg, refW, seqs, adapter);
        t.data[i] = x0 - h;
        const hm = x0 - t.data[i];
        const lm = refLoss(cfg, refW, seqs, adapter);
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
      `${arch} ${base}${
        base === "f16" && !f16 ? " (no shader-f16: f32 path)" : ""
      }: ${checked} entries of ${grads.size} tensors; max |gpu - fd| / max|grad| = ${
        worst.toExponential(2)
      }, max |grad| ${gmax.toExponential(2)}`,
    );
    destroyAdapter(lora);
    destroyModel(model);
  });
}

Deno.test("loraGradients with activation recomputation equals the stored-activation backward exactly", async () => {
  const tiny = makeTinyModel("qwen3", { seed: 2 });
  const cfg = tiny.config;
  const rng = new Rng(1);
  const seqs: PgSequence[] = [9, 5, 12].map((n, i) => ({
    ids: Array.from({ length: n }, () => rng.int(cfg.vocabSize)),
    promptLen: 2 + i,
    advantage: i - 0.8,
  }));
  const adapter = randomAdapter(cfg, { r: 4, alpha: 4, targets: LORA_TARGETS, seed: 3, bScale: 0.2 });
  const model = uploadModel(gpu.device, cfg, tiny.weights);
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  const stored = await loraGradients(model, lora, seqs);
  const recomputed = await loraGradients(model, lora, seqs, { recompute: true });
  assert(stored.loss === recomputed.loss, `loss ${stored.loss} vs ${recomputed.loss}`);
  let nonzero = 0;
  for (const [name, g] of stored.grads) {
    const r = recomputed.grads.get(name);
    assert(r !== undefined, name);
    g.data.forEach((x, i) => {
      assert(x === r.data[i], `${name}[${i}]: ${x} vs ${r.data[i]}`);
      if (x !== 0) nonzero++;
    });
  }
  assert(nonzero > 1000, `gradients are not trivially zero (${nonzero} non-zero)`);
  destroyAdapter(lora);
  destroyModel(model);
});

Deno.test("loraGradients on a model uploaded with transposedBase (the forward reads W^T stored (in, out)) equals the plain upload exactly, stored and recomputed, on a model wide enough for the 128-tile kernels", async () => {
  // 160 tokens x 128 hidden x 256 intermediate, two layers: every projection on the 128-tile kernels,
  // the LoRA tail inside them (its B (out, r) read transposed while the base product's B is not).
  const tiny = makeTinyModel("qwen2", {
    seed: 5,
    hidden: 128,
    intermediate: 256,
    heads: 4,
    kvHeads: 2,
    layers: 2,
    vocabSize: 150,
  });
  const cfg = tiny.config;
  const rng = new Rng(14);
  const seqs: PgSequence[] = [70, 50, 40].map((n, i) => ({
    ids: Array.from({ length: n }, () => rng.int(cfg.vocabSize)),
    promptLen: 3 + i,
    advantage: 0.7 - i,
  }));
  const adapter = randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 6, bScale: 0.3 });
  const plain = uploadModel(gpu.device, cfg, tiny.weights);
  const tr = uploadModel(gpu.device, cfg, tiny.weights, { transposedBase: true });
  const lora = uploadAdapter(gpu.device, cfg, adapter);
  try {
    assert(
      plain.transposed.size === 0 && tr.transposed.size === 7 * cfg.numLayers,
      `transposed copies: ${tr.transposed.size}`,
    );
    for (const recompute of [false, true]) {
      const a = await loraGradients(plain, lora, seqs, { recompute });
      const b = await loraGradients(tr, lora, seqs, { recompute });
      assert(a.loss === b.loss, `recompute ${recompute}: loss ${a.loss} vs ${b.loss}`);
      for (const [name, g] of a.grads) {
        const r = b.grads.get(name);
        assert(r !== undefined, name);
        g.data.forEach((x, i) => assert(x === r.data[i], `recompute ${recompute} ${name}[${i}]: ${x} vs ${r.data[i]}`));
      }
    }
    const l0 = refLoss(cfg, tiny.weights, seqs, adapter);
    const got = (await loraGradients(tr, lora, seqs)).loss;
    assert(Math.abs(got - l0) < 1e-4 * Math.max(1, Math.abs(l0)), `loss ${got} vs float64 ${l0}`);
  } finally {
    destroyAdapter(lora);
    destroyModel(plain);
    destroyModel(tr);
  }
});

for (const base of ["f32", "q4"] as const) {
  Deno.test(`loraGradients${base === "q4" ? " on q4 base weights" : ""} with the LoRA product as the base product's tail: the float64 loss, recomputed bitwise stored, on a model wide enough for the tile kernels`, async () => {
    const { tailFused } = await import("../kernels/matmul.ts");
    // 160 tokens x 128 hidden x 256 intermediate puts every projection and its dx on tile96h; qwen2 has q/k/v biases.
    // q4: the 128-tile q4 kernels want 96 tiles, so 770 tokens and an intermediate of 2,048 put gate / up and down's
    // dx on them (the narrower projections stay on tile64 and keep the separate product).
    const q4 = base === "q4";
    const tiny = makeTinyModel(
      "qwen2",
      q4
        ? { seed: 7, hidden: 128, intermediate: 2048, heads: 4, kvHeads: 2, layers: 1, vocabSize: 150 }
        : { seed: 7, hidden: 128, intermediate: 256, heads: 4, kvHeads: 2, layers: 2, vocabSize: 150 },
    );
    const cfg = tiny.config;
    const rng = new Rng(8);
    const seqs: PgSequence[] = (q4 ? [200, 195, 190, 185] : [70, 50, 40]).map((n, i) => ({
      ids: Array.from({ length: n }, () => rng.int(cfg.vocabSize)),
      promptLen: 3 + i,
      advantage: 0.7 - i,
    }));
    const tokens = seqs.reduce((x, q) => x + q.ids.length, 0);
    const adapter = randomAdapter(cfg, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 6, bScale: 0.3 });
    const model = uploadModel(gpu.device, cfg, tiny.weights, { q4: base === "q4" });
    const lora = uploadAdapter(gpu.device, cfg, adapter);
    try {
      const t = { a: {} as GPUBuffer, b: {} as GPUBuffer, r: 4, scale: 2 };
      const { q4TailFuses } = await import("../kernels/q4matmul.ts");
      assert(
        q4
          ? q4TailFuses(tokens, 2048) && !q4TailFuses(tokens, 128)
          : tailFused({ M: 160, N: 128, K: 128, transB: true, tail: t }) &&
            tailFused({ M: 160, N: 128, K: 256, tail: t }),
        "the q projection and the down dx fuse",
      );
      const fused = await loraGradients(model, lora, seqs);
      const recomputed = await loraGradients(model, lora, seqs, { recompute: true });
      const l0 = refLoss(cfg, base === "q4" ? q4Weights(tiny.weights) : tiny.weights, seqs, adapter);
      for (const [what, r] of [["fused", fused], ["fused, recomputed", recomputed]] as const) {
        assert(Math.abs(r.loss - l0) < 1e-4 * Math.max(1, Math.abs(l0)), `${what}: loss ${r.loss} vs float64 ${l0}`);
      }
      for (const [name, g] of fused.grads) {
        const rc = recomputed.grads.get(name);
        assert(rc !== undefined, name);
        // Recomputation replays the same products: bitwise the stored step's.
        g.data.forEach((x, i) => assert(x === rc.data[i], `${name}[${i}]: recomputed differs`));
      }
    } finally {
      destroyAdapter(lora);
      destroyModel(model);
    }
  });
}
