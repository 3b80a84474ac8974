// Files written by transformers 5.17 and PEFT 0.21 themselves (src/model/crosscheck/
// export_from_transformers.py), with the float64 log-probabilities transformers computed for them:
// our readers and reference must reproduce those numbers.
import { assertClose, assertEquals } from "../../tests/assert.ts";
import { parseConfig, validateWeights } from "./config.ts";
import { readPeftAdapter } from "./peft.ts";
import { referenceLogprobs } from "./reference.ts";
import { parseSafetensors, safetensorsToWeights } from "./safetensors.ts";
import { DirSource } from "./source.deno.ts";

const dir = new URL("./testdata/transformers/", import.meta.url).pathname;
const expected = JSON.parse(await Deno.readTextFile(`${dir}/expected.json`));

async function load(name: string) {
  const cfg = parseConfig(JSON.parse(await Deno.readTextFile(`${dir}/${name}/config.json`)));
  const file = parseSafetensors(await Deno.readFile(`${dir}/${name}/model.safetensors`), name);
  const w = safetensorsToWeights(file);
  validateWeights(cfg, w);
  return { cfg, w, file };
}

Deno.test("transformers files: a Qwen3 checkpoint saved by transformers 5 (rope_parameters) gives its float64 log-probabilities", async () => {
  const { cfg, w, file } = await load("qwen3");
  assertEquals([cfg.arch, cfg.headDim, cfg.ropeTheta, cfg.tieWordEmbeddings, file.metadata.format], [
    "qwen3",
    12,
    10000,
    true,
    "pt",
  ]);
  const [lp] = referenceLogprobs(cfg, w, [expected.ids]);
  const { maxAbs } = assertClose(lp, expected.qwen3, { atol: 1e-10, rtol: 0, name: "qwen3 logprobs" });
  console.log(`qwen3: max |delta logprob| vs transformers ${maxAbs.toExponential(2)}`);
});

Deno.test("transformers files: a LoRA adapter saved by PEFT 0.21 reproduces PEFT's log-probabilities", async () => {
  const { cfg, w } = await load("qwen3");
  const adapter = await readPeftAdapter(new DirSource(`${dir}/qwen3-lora`), cfg);
  assertEquals([adapter.r, adapter.alpha, adapter.targets.length, adapter.tensors.size], [
    4,
    8,
    7,
    2 * 7 * cfg.numLayers,
  ]);
  const [lp] = referenceLogprobs(cfg, w, [expected.ids], adapter);
  const { maxAbs } = assertClose(lp, expected.qwen3_lora, { atol: 1e-10, rtol: 0, name: "qwen3 + LoRA logprobs" });
  console.log(`qwen3 + LoRA: max |delta logprob| vs PEFT ${maxAbs.toExponential(2)}`);
});

Deno.test("transformers files: an untied bf16 Qwen2 checkpoint (q/k/v biases, rope_theta 1e6) gives its float64 log-probabilities", async () => {
  const { cfg, w, file } = await load("qwen2-bf16");
  assertEquals([cfg.arch, cfg.ropeTheta, cfg.tieWordEmbeddings, file.tensors.get("lm_head.weight")?.dtype], [
    "qwen2",
    1e6,
    false,
    "BF16",
  ]);
  const [lp] = referenceLogprobs(cfg, w, [expected.ids]);
  const { maxAbs } = assertClose(lp, expected.qwen2_bf16, { atol: 1e-10, rtol: 0, name: "qwen2 bf16 logprobs" });
  console.log(`qwen2 bf16: max |delta logprob| vs transformers ${maxAbs.toExponential(2)}`);
});
