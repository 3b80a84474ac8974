// `rlvr train-tokenizer` and `rlvr pretrain` end to end as subprocesses (demo data only, a tiny
// model, a handful of steps on lavapipe): the folder loads like a Hub model, in the float64
// reference and in the ONNX policy, and the two agree.
import { assert, assertClose, assertEquals } from "../../../tests/assert.ts";
import { loadHfModel } from "../../model/hf.ts";
import { OrtPolicy } from "../../model/policy.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { DirSource } from "../../model/source.deno.ts";

async function rlvr(args: string[]): Promise<Record<string, unknown>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
    cwd: new URL("../../../", import.meta.url).pathname,
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert(out.code === 0, `rlvr ${args[0]} exited ${out.code}: ${stderr}`);
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  return JSON.parse(lines[lines.length - 1]);
}

Deno.test("rlvr train-tokenizer + pretrain: tiny model from scratch, JSONL log, checkpoint, HF folder loaded by loadHfModel and the ONNX policy; resuming a checkpoint gives the straight run's weights bitwise; --init starts a new run from the folder", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pretrain-cli-" });
  const tok = await rlvr(["train-tokenizer", "--out", `${dir}/tok`, "--vocab", "512"]);
  assertEquals([tok.ok, tok.vocab, tok.merges], [true, 512, 512 - 256 - 7]);
  const r = await rlvr([
    "pretrain",
    "--out",
    `${dir}/model`,
    "--tokenizer",
    `${dir}/tok`,
    "--arch",
    "llama",
    "--hidden",
    "32",
    "--layers",
    "1",
    "--heads",
    "4",
    "--kv-heads",
    "2",
    "--intermediate",
    "48",
    "--seq-len",
    "64",
    "--batch",
    "4",
    "--micro-batch",
    "2",
    "--steps",
    "4",
    "--warmup",
    "1",
    "--lr",
    "3e-3",
    "--checkpoint-every",
    "2",
    "--eval-rows",
    "4",
    "--dtype",
    "f32",
  ]);
  assertEquals([r.ok, r.steps, r.arch, r.vocabSize], [true, 4, "llama", 512]);
  for (
    const f of [
      "config.json",
      "model.safetensors",
      "tokenizer.json",
      "tokenizer_config.json",
      "generation_config.json",
      "train_log.jsonl",
      "corpus.json",
      "corpus.bin",
    ]
  ) {
    await Deno.stat(`${dir}/model/${f}`);
  }
  for (const f of ["model.safetensors", "optimizer.safetensors", "trainer_state.json", "tokenizer.json"]) {
    await Deno.stat(`${dir}/model/checkpoint-2/${f}`);
  }
  const log = (await Deno.readTextFile(`${dir}/model/train_log.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(log.map((l) => l.event), ["start", "step", "step", "checkpoint", "step", "step", "end"]);
  const steps = log.filter((l) => l.event === "step");
  assert(
    steps.every((l) => l.tokens > 0 && l.tokensPerSec > 0 && Number.isFinite(l.loss) && Number.isFinite(l.gradNorm)),
    "loss, tokens and tokens/s per step",
  );
  assert(
    Math.abs(steps[0].loss - Math.log(512)) < 0.3,
    `initial loss ${steps[0].loss} near ln V (initializer_range 0.02)`,
  );
  const hf = await loadHfModel(new DirSource(`${dir}/model`));
  assertEquals([hf.configJson.model_type, hf.config.vocabSize, hf.config.numLayers, hf.tokenizer.vocabSize], [
    "llama",
    512,
    1,
    512,
  ]);
  const ids = [
    hf.tokenizer.encode(
      "<|im_start|>user\nHow many customers are there?<|im_end|>\n<|im_start|>assistant\n```sql\nSELECT count(*) FROM customers\n```<|im_end|>",
    ),
  ];
  const policy = await OrtPolicy.create(hf.config, hf.weights, { dtype: "f32", maxPositions: 64 });
  try {
    const got = await policy.logprobs(ids);
    const e = assertClose(got.flat(), referenceLogprobs(hf.config, hf.weights, ids).flat(), {
      atol: 2e-3,
      rtol: 0,
      name: "ONNX policy vs reference",
    });
    console.log(
      `pretrained folder: ${ids[0].length} tokens, ONNX policy vs float64 reference max |err| ${
        e.maxAbs.toExponential(2)
      }; losses ${steps.map((l) => l.loss.toFixed(3)).join(" ")}`,
    );
  } finally {
    await policy.release();
  }
  // Resuming from checkpoint-2 (weights, AdamW moments, sampler position) and running to step 4
  // must give bitwise the weights of the straight run.
  const resumed = await rlvr([
    "pretrain",
    "--out",
    `${dir}/resumed`,
    "--resume",
    `${dir}/model/checkpoint-2`,
    "--steps",
    "4",
    "--batch",
    "4",
    "--micro-batch",
    "2",
    "--lr",
    "3e-3",
    "--warmup",
    "1",
    "--checkpoint-every",
    "0",
    "--eval-rows",
    "4",
    "--dtype",
    "f32",
  ]);
  assertEquals([resumed.ok, resumed.steps, resumed.corpusHash], [true, 4, r.corpusHash]);
  const again = await loadHfModel(new DirSource(`${dir}/resumed`));
  for (const [name, t] of hf.weights) assertEquals(again.weights.get(name)?.data, t.data, `${name} after resume`);
  const rlog = (await Deno.readTextFile(`${dir}/resumed/train_log.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(
    rlog.filter((l) => l.event === "step").map((l) => l.loss),
    steps.slice(2).map((l) => l.loss),
    "the resumed steps' losses",
  );
  // --init: a new run from the finished folder (its config, tokenizer and weights; fresh AdamW, step 0).
  // With lr 0 one step leaves the weights bitwise as loaded; its loss is the trained model's, not ln V.
  const init = await rlvr([
    "pretrain",
    "--out",
    `${dir}/init`,
    "--init",
    `${dir}/model`,
    "--steps",
    "1",
    "--batch",
    "4",
    "--micro-batch",
    "4",
    "--lr",
    "0",
    "--warmup",
    "0",
    "--checkpoint-every",
    "0",
    "--eval-rows",
    "4",
    "--dtype",
    "f32",
  ]);
  assertEquals([init.ok, init.steps, init.arch, init.corpusHash], [true, 1, "llama", r.corpusHash]);
  const inited = await loadHfModel(new DirSource(`${dir}/init`));
  for (const [name, t] of hf.weights) {
    assertEquals(inited.weights.get(name)?.data, t.data, `${name} after --init and a step at lr 0`);
  }
  const ilog = (await Deno.readTextFile(`${dir}/init/train_log.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals([ilog[0].event, ilog[0].init, ilog[0].step], ["start", `${dir}/model`, 0]);
  const initLoss = ilog.find((l) => l.event === "step").loss;
  assert(
    initLoss < steps[0].loss - 0.05,
    `--init starts from the trained weights: loss ${initLoss} vs a fresh model's ${steps[0].loss}`,
  );
  const both = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../main.ts", import.meta.url).pathname,
      "pretrain",
      "--out",
      `${dir}/x`,
      "--init",
      `${dir}/model`,
      "--resume",
      `${dir}/model/checkpoint-2`,
    ],
    stdout: "piped",
    stderr: "piped",
    cwd: new URL("../../../", import.meta.url).pathname,
  }).output();
  assert(
    both.code !== 0 && new TextDecoder().decode(both.stderr).includes("--resume and --init"),
    "--init with --resume is refused",
  );
  await Deno.remove(dir, { recursive: true });
});
