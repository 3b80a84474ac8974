import { assertEquals, assertRejects } from "../../tests/assert.ts";
import { loraKey, randomAdapter } from "./lora.ts";
import { parsePeftAdapter, PEFT_CONFIG, peftConfigJson, peftFiles, readPeftAdapter } from "./peft.ts";
import { writePeftFolder } from "./peft.deno.ts";
import { weightsToSafetensors } from "./safetensors.ts";
import { DirSource } from "./source.deno.ts";
import { MemorySource } from "./source.ts";
import { makeTinyModel } from "./tiny.ts";

const m = makeTinyModel("qwen3", { seed: 31 });

Deno.test("peft: write -> read round trip through memory and through a directory", async () => {
  const a = randomAdapter(m.config, {
    r: 4,
    alpha: 16,
    targets: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    seed: 32,
  });
  const back = await readPeftAdapter(new MemorySource(peftFiles(a, { baseModel: "Qwen/Qwen3-0.6B" })), m.config);
  assertEquals([back.r, back.alpha, back.targets], [4, 16, a.targets]);
  assertEquals([...back.tensors.keys()].sort(), [...a.tensors.keys()].sort());
  for (const [k, t] of a.tensors) assertEquals(back.tensors.get(k), t, k);
  const dir = await Deno.makeTempDir();
  try {
    await writePeftFolder(dir, a, { baseModel: "Qwen/Qwen3-0.6B" });
    const cfg = JSON.parse(await Deno.readTextFile(`${dir}/${PEFT_CONFIG}`));
    assertEquals([cfg.peft_type, cfg.task_type, cfg.r, cfg.lora_alpha, cfg.base_model_name_or_path], [
      "LORA",
      "CAUSAL_LM",
      4,
      16,
      "Qwen/Qwen3-0.6B",
    ]);
    const fromDisk = await readPeftAdapter(new DirSource(dir), m.config);
    assertEquals(fromDisk.tensors.get(loraKey(1, "down_proj", "B")), a.tensors.get(loraKey(1, "down_proj", "B")));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("peft: shape mismatches and unsupported options fail naming the tensor or option", async () => {
  const a = randomAdapter(m.config, { r: 2, alpha: 4, targets: ["q_proj", "v_proj"], seed: 33 });
  const key = loraKey(0, "v_proj", "A");
  const bad = new Map(a.tensors);
  bad.set(key, { shape: [2, m.config.hiddenSize + 1], data: new Float32Array(2 * (m.config.hiddenSize + 1)) });
  await assertRejects(
    () => parsePeftAdapter(peftConfigJson(a), weightsToSafetensors(bad), m.config),
    new RegExp(
      `${key.replaceAll(".", "\\.")} has shape \\[2, ${
        m.config.hiddenSize + 1
      }\\], model expects \\[2, ${m.config.hiddenSize}\\]`,
    ),
  );
  const missing = new Map(a.tensors);
  missing.delete(loraKey(1, "q_proj", "B"));
  await assertRejects(
    () => parsePeftAdapter(peftConfigJson(a), weightsToSafetensors(missing), m.config),
    /missing tensor .*layers\.1\.self_attn\.q_proj\.lora_B/,
  );
  const w = weightsToSafetensors(a.tensors);
  await assertRejects(() => parsePeftAdapter({ ...peftConfigJson(a), use_dora: true }, w), /use_dora/);
  await assertRejects(
    () => parsePeftAdapter({ ...peftConfigJson(a), target_modules: ["q_proj", "lm_head"] }, w),
    /"lm_head" is not supported/,
  );
  await assertRejects(
    () => parsePeftAdapter({ ...peftConfigJson(a), target_modules: ["q_proj"] }, w),
    /v_proj, absent from target_modules/,
  );
  await assertRejects(
    () => readPeftAdapter(new MemorySource(new Map([[PEFT_CONFIG, new Uint8Array()]]), "x")),
    /adapter_config\.json in memory folder x is not valid JSON/,
  );
  await assertRejects(
    () => readPeftAdapter(new MemorySource(new Map(), "y")),
    /adapter_config\.json not found in memory folder y/,
  );
  const all = parsePeftAdapter({ ...peftConfigJson(a), target_modules: "all-linear" }, w);
  assertEquals(all.targets.length, 7);
});
