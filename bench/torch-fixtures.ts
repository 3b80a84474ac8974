// Writes the fixtures of the PyTorch cross-check (bench/torch/check.py) with the project's own code:
// for each architecture (qwen2, llama, qwen3) a tiny random Hugging Face folder, a random PEFT LoRA
// adapter on all seven targets (non-zero B, so the adapter changes the outputs), an ids file for
// `rlvr logprobs` and a batch file for `rlvr lora-grad`.
// Usage: deno run -A bench/torch-fixtures.ts [OUT_DIR=.devwork/h200/fixtures]
// Layout: OUT/{arch}/model/, OUT/{arch}/adapter/, OUT/{arch}/ids.json, OUT/{arch}/batch.json, OUT/manifest.json
import { Rng } from "../src/core/rng.ts";
import type { Arch } from "../src/model/config.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { writePeftFolder } from "../src/model/peft.deno.ts";
import { writeHfFolder } from "../src/model/tiny.deno.ts";
import { makeTinyModel } from "../src/model/tiny.ts";

const out = Deno.args[0] ?? ".devwork/h200/fixtures";
const ARCHS: readonly Arch[] = ["qwen2", "llama", "qwen3"];
// Sequence lengths and prompt lengths: odd sizes, a one-token completion, a long-ish row.
const LENGTHS = [[17, 6], [9, 8], [24, 11], [5, 1]] as const;
const ADVANTAGES = [1, -1, 0.5, -0.25] as const;
const manifest: Record<string, unknown> = { lengths: LENGTHS, advantages: ADVANTAGES, archs: {} };

for (const [k, arch] of ARCHS.entries()) {
  const dir = `${out}/${arch}`;
  const m = makeTinyModel(arch, { seed: 101 + k });
  await writeHfFolder(`${dir}/model`, m);
  const r = 4, alpha = 8;
  const adapter = randomAdapter(m.config, { r, alpha, targets: LORA_TARGETS, seed: 201 + k, bScale: 0.1 });
  await writePeftFolder(`${dir}/adapter`, adapter);
  const rng = new Rng(301 + k);
  const ids = LENGTHS.map(([len]) => Array.from({ length: len }, () => rng.int(m.config.vocabSize)));
  await Deno.writeTextFile(`${dir}/ids.json`, JSON.stringify(ids));
  const batch = ids.map((s, i) => ({ ids: s, prompt_len: LENGTHS[i][1], advantage: ADVANTAGES[i] }));
  await Deno.writeTextFile(`${dir}/batch.json`, JSON.stringify(batch));
  (manifest.archs as Record<string, unknown>)[arch] = {
    layers: m.config.numLayers,
    hidden: m.config.hiddenSize,
    heads: m.config.numHeads,
    kvHeads: m.config.numKvHeads,
    headDim: m.config.headDim,
    vocab: m.config.vocabSize,
    tied: m.config.tieWordEmbeddings,
    r,
    alpha,
    targets: LORA_TARGETS,
    loraTensors: adapter.tensors.size,
  };
  console.error(
    `${arch}: ${dir} (${m.config.numLayers} layers, hidden ${m.config.hiddenSize}, LoRA r=${r} on ${LORA_TARGETS.length} targets, ${ids.length} sequences)`,
  );
}
await Deno.writeTextFile(`${out}/manifest.json`, JSON.stringify(manifest, null, 2));
console.log(JSON.stringify({ ok: true, out, archs: ARCHS }));
