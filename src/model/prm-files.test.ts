import { assert, assertEquals, assertRejects } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "./lora.ts";
import { PEFT_CONFIG, PEFT_WEIGHTS } from "./peft.ts";
import { PRM_CONFIG, prmFiles, readPrmFolder, SCORE_BIAS, SCORE_WEIGHT } from "./prm-files.ts";
import { parseSafetensors } from "./safetensors.ts";
import { MemorySource } from "./source.ts";
import { makeTinyModel } from "./tiny.ts";

const m = makeTinyModel("qwen2", { seed: 8 });
const H = m.config.hiddenSize;

Deno.test("prm files: PEFT config with a score module, LoRA + score tensors, prm_config; read back bit for bit", async () => {
  const adapter = randomAdapter(m.config, { r: 4, alpha: 8, targets: LORA_TARGETS, seed: 2 });
  const head = new Rng(3).uniformArray(H + 1);
  const files = prmFiles({
    adapter,
    head,
    info: { template: "chain-of-ctes@1", labels: "process", baseModel: "Qwen/Qwen2.5-Coder-0.5B" },
  });
  const cfg = JSON.parse(new TextDecoder().decode(files.get(PEFT_CONFIG)));
  assertEquals([cfg.task_type, cfg.modules_to_save, cfg.r, cfg.lora_alpha, cfg.peft_type], [
    "TOKEN_CLS",
    ["score"],
    4,
    8,
    "LORA",
  ]);
  const st = parseSafetensors(files.get(PEFT_WEIGHTS)!);
  assertEquals([st.tensors.get(SCORE_WEIGHT)?.shape, st.tensors.get(SCORE_BIAS)?.shape], [[1, H], [1]]);
  assertEquals(JSON.parse(new TextDecoder().decode(files.get(PRM_CONFIG))).labels, "process");
  const back = await readPrmFolder(new MemorySource(files), m.config);
  assertEquals(Array.from(back.head), Array.from(head));
  assertEquals([back.adapter.r, back.adapter.alpha, back.info], [4, 8, {
    template: "chain-of-ctes@1",
    labels: "process",
    baseModel: "Qwen/Qwen2.5-Coder-0.5B",
  }]);
  for (const [k, t] of adapter.tensors) assertEquals(back.adapter.tensors.get(k), t, k);
});

Deno.test("prm files: a plain adapter folder, a head of another width and a bad prm_config are refused with the reason", async () => {
  const adapter = randomAdapter(m.config, { r: 2, alpha: 4, targets: ["q_proj"], seed: 4 });
  const files = prmFiles({
    adapter,
    head: new Float32Array(H + 1),
    info: { template: "chain-of-ctes@1", labels: "outcome", baseModel: null },
  });
  const other = makeTinyModel("qwen3", { seed: 1 });
  await assertRejects(
    () => readPrmFolder(new MemorySource(files), other.config),
    /score head has 48 inputs, the model's hidden size is 40/,
  );
  const plain = new Map(files);
  plain.set(
    PEFT_CONFIG,
    new TextEncoder().encode(
      JSON.stringify({ ...JSON.parse(new TextDecoder().decode(files.get(PEFT_CONFIG))), modules_to_save: null }),
    ),
  );
  await assertRejects(() => readPrmFolder(new MemorySource(plain)), /modules_to_save must be \["score"\]/);
  const bad = new Map(files);
  bad.set(PRM_CONFIG, new TextEncoder().encode(JSON.stringify({ format: "rlvr-prm", labels: "steps", template: "x" })));
  await assertRejects(() => readPrmFolder(new MemorySource(bad)), /labels \("process" or "outcome"\)/);
  const ok = await readPrmFolder(new MemorySource(files), m.config);
  assert(ok.info.labels === "outcome", "outcome reward model");
});
