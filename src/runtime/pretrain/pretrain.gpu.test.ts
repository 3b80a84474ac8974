import { assert, assertEquals } from "../../../tests/assert.ts";
import { requestGpu } from "../../gpu/device.ts";
import { logprobsWebgpu } from "../../gpu/trainer/logprobs.ts";
import { BpeEncoder } from "../../model/bpe/encode.ts";
import { addedId, bpeTokenizerFiles, DEMO_CHAT_TEMPLATE } from "../../model/bpe/files.ts";
import { loadHfModel } from "../../model/hf.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { DirSource } from "../../model/source.deno.ts";
import { buildDocuments, DEFAULT_CORPUS_OPTIONS, packDocuments } from "./corpus.ts";
import { loadCorpusSources } from "./corpus.deno.ts";
import { BatchSampler, runPretrain } from "./loop.ts";
import { demoConfig, demoFolderFiles, initWeights, parameterCount } from "./model.ts";
import { createPretrainer, destroyPretrainer, evalLoss, pretrainStep, readState, readWeights } from "./step.ts";
import { trainDemoTokenizer } from "./tokenizer.ts";

const gpu = await requestGpu();
const demoDir = new URL("../../../public/demo", import.meta.url).pathname;
const docs = buildDocuments(await loadCorpusSources({ demoDir }), {
  ...DEFAULT_CORPUS_OPTIONS,
  chatTemplate: DEMO_CHAT_TEMPLATE,
});
const bpe = trainDemoTokenizer(docs, 384);
const enc = new BpeEncoder(bpe);
const SEQ = 40;
const packed = packDocuments(docs.slice(0, 24), (t) => enc.encode(t), addedId(bpe, "<|endoftext|>"), SEQ);

Deno.test("BatchSampler: every row once per epoch, seeded", () => {
  const a = new BatchSampler(10, 4, 3), b = new BatchSampler(10, 4, 3);
  const first = [...a.next(), ...a.next(), ...a.next()];
  assertEquals([...b.next(), ...b.next(), ...b.next()], first);
  assertEquals([...new Set(first.slice(0, 10))].sort((x, y) => x - y), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assertEquals(a.epoch, 1);
  const c = new BatchSampler(10, 4, 3);
  c.restore(JSON.parse(JSON.stringify(b.state())));
  for (let i = 0; i < 6; i++) assertEquals(c.next(), b.next(), `batch ${i} after restoring`);
});

for (const arch of ["qwen2", "llama"] as const) {
  Deno.test(`pretrain ${arch}: overfits one fixed batch, the reported loss is the float64 reference's, and the written HF folder loads and matches the GPU forward`, async () => {
    const cfg = demoConfig({
      arch,
      vocabSize: bpe.vocab.length,
      hidden: 32,
      layers: 2,
      heads: 4,
      kvHeads: 2,
      intermediate: 48,
      seqLen: SEQ,
      tieWordEmbeddings: arch === "qwen2",
      ropeTheta: 10000,
    }, [addedId(bpe, "<|im_end|>"), addedId(bpe, "<|endoftext|>")]);
    const w0 = initWeights(cfg, 7);
    const rows = packed.rows.slice(0, 3);
    const tr = createPretrainer(gpu.device, cfg, w0, {
      lr: { base: 1e-2, warmupSteps: 2, totalSteps: 30, decay: "cosine", minRatio: 0.1 },
      microBatch: 2,
      seqLen: SEQ,
      weightDecay: 0.01,
    });
    // The loss before any update against the float64 reference on the initial weights.
    const ref0 = referenceLogprobs(cfg, w0, rows.map((r) => Array.from(r)));
    const refLoss = -ref0.flat().reduce((a, b) => a + b, 0) / ref0.flat().length;
    const { logs, stopped } = await runPretrain(tr, rows, {
      steps: 30,
      batch: 3,
      sampler: new BatchSampler(rows.length, 3, 1),
      checkpointEvery: 0,
    });
    assertEquals([stopped, logs.length, tr.step], ["done", 30, 30]);
    assert(Math.abs(logs[0].loss - refLoss) < 1e-4 * refLoss, `step 0 loss ${logs[0].loss} vs reference ${refLoss}`);
    const late = await runPretrain(tr, rows, {
      steps: 40,
      batch: 3,
      sampler: new BatchSampler(rows.length, 3, 1),
      checkpointEvery: 0,
      deadline: performance.now(),
    });
    assertEquals([late.stopped, late.logs.length, tr.step], ["deadline", 0, 30]);
    const final = await evalLoss(tr, rows);
    console.log(
      `${arch}: ${parameterCount(cfg)} parameters, loss ${logs[0].loss.toFixed(3)} (ln V = ${
        Math.log(cfg.vocabSize).toFixed(3)
      }) -> ${logs.at(-1)?.loss.toFixed(3)} after 30 steps, eval ${final.toFixed(3)}; grad norm ${
        logs[0].gradNorm.toFixed(2)
      } -> ${logs.at(-1)?.gradNorm.toFixed(2)}`,
    );
    assert(logs.every((l) => !l.skipped && Number.isFinite(l.loss) && l.tokensPerSec > 0), "every step applied");
    assert(final < 0.35 * logs[0].loss, `loss ${logs[0].loss} -> ${final}: overfitting one batch must cut it by far`);
    // Write the folder, load it as any Hub model, compare the reference on the loaded weights with the GPU forward.
    const trained = await readWeights(tr);
    const dir = await Deno.makeTempDir({ prefix: `pretrain-${arch}-` });
    for (const [name, bytes] of demoFolderFiles(cfg, trained, bpeTokenizerFiles(bpe), { dtype: "F32" })) {
      await Deno.writeFile(`${dir}/${name}`, bytes);
    }
    const hf = await loadHfModel(new DirSource(dir));
    assertEquals(hf.config, cfg);
    const cj = hf.configJson;
    assertEquals([cj.model_type, cj.architectures], [arch, [
      arch === "qwen2" ? "Qwen2ForCausalLM" : "LlamaForCausalLM",
    ]]);
    for (const [name, t] of trained) assertEquals(hf.weights.get(name)?.data, t.data, name);
    const sample = docs[30].text.slice(0, 200);
    assertEquals(hf.tokenizer.encode(sample), enc.encode(sample), "the folder's tokenizer encodes as our encoder");
    assert(hf.chatTemplate?.includes("<|im_start|>") === true, "ChatML template in tokenizer_config.json");
    const ids = [Array.from(rows[0]), hf.tokenizer.encode(sample).slice(0, 23)];
    const ref = referenceLogprobs(hf.config, hf.weights, ids);
    const got = await logprobsWebgpu(tr.model, ids);
    let worst = 0;
    ref.forEach((r, i) => r.forEach((x, t) => (worst = Math.max(worst, Math.abs(x - got[i][t])))));
    console.log(`${arch}: loaded folder, float64 reference vs GPU logprobs max |error| ${worst.toExponential(2)}`);
    assert(worst < 2e-3, `max |reference - gpu| ${worst}`);
    destroyPretrainer(tr);
    await Deno.remove(dir, { recursive: true });
  });
}

Deno.test("pretrain step: micro-batches of 1 and of 3 rows give the same gradients, and the update is AdamW's first step with decay on matrices only", async () => {
  const cfg = demoConfig({
    arch: "qwen2",
    vocabSize: bpe.vocab.length,
    hidden: 32,
    layers: 1,
    heads: 4,
    kvHeads: 2,
    intermediate: 48,
    seqLen: SEQ,
    tieWordEmbeddings: true,
    ropeTheta: 10000,
  }, [addedId(bpe, "<|im_end|>")]);
  const w0 = initWeights(cfg, 9);
  const rows = packed.rows.slice(3, 6);
  const lr = 1e-3, wd = 0.5;
  const run = async (microBatch: number) => {
    const tr = createPretrainer(gpu.device, cfg, w0, {
      lr: { base: lr, warmupSteps: 0, totalSteps: 10, decay: "constant" },
      weightDecay: wd,
      maxGradNorm: 0,
      microBatch,
      seqLen: SEQ,
    });
    const r = await pretrainStep(tr, rows);
    const out = { r, grads: await readState(tr, "grad"), after: await readWeights(tr) };
    destroyPretrainer(tr);
    return out;
  };
  const one = await run(1), three = await run(3);
  assert(Math.abs(one.r.loss - three.r.loss) < 1e-5 * one.r.loss, `loss ${one.r.loss} vs ${three.r.loss}`);
  let gmax = 0, worst = 0;
  for (const g of three.grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
  for (const [name, g] of three.grads) {
    const o = one.grads.get(name);
    assert(o !== undefined, name);
    for (let i = 0; i < g.data.length; i++) worst = Math.max(worst, Math.abs(g.data[i] - o.data[i]));
  }
  assert(worst <= 1e-5 * gmax, `micro-batch 1 vs 3: max |dgrad| ${worst}, max |grad| ${gmax}`);
  // AdamW step 1 (no clipping): m = (1-b1) g, v = (1-b2) g^2, update = lr g / (|g| + eps) + lr wd w on matrices.
  let checked = 0;
  for (const [name, g] of three.grads) {
    const w = w0.get(name), a = three.after.get(name);
    assert(w !== undefined && a !== undefined, name);
    const decay = !name.endsWith("norm.weight") && !name.endsWith(".bias");
    for (let i = 0; i < g.data.length; i += 7) {
      const expected = w.data[i] - lr * (g.data[i] / (Math.abs(g.data[i]) + 1e-8) + (decay ? wd * w.data[i] : 0));
      assert(
        Math.abs(a.data[i] - expected) <= 1e-6 + 1e-4 * lr,
        `${name}[${i}]: ${a.data[i]} vs AdamW ${expected} (grad ${g.data[i]})`,
      );
      checked++;
    }
  }
  console.log(
    `micro-batches 1 vs 3: max |dgrad| ${worst.toExponential(2)} (max |grad| ${
      gmax.toExponential(2)
    }); ${checked} updated entries match AdamW's first step`,
  );
});
