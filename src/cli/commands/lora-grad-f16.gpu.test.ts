// `rlvr lora-grad` on a bf16 checkpoint: f16 frozen projections where the device has shader-f16
// (lavapipe has it), f32 with --f32 or RLVR_TRAINER_F32=1, and the same gradients either way (a bf16
// weight of ordinary size is exactly representable in f16, so both runs compute the same model).
import { assert, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { requestGpu } from "../../gpu/device.ts";
import { LORA_TARGETS, randomAdapter } from "../../model/lora.ts";
import { writePeftFolder } from "../../model/peft.deno.ts";
import { parseSafetensors, safetensorsToWeights } from "../../model/safetensors.ts";
import { makeTinyModel, tinyTokenizerFiles } from "../../model/tiny.ts";
import { writeHfFolder } from "../../model/tiny.deno.ts";

async function loraGrad(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ last: Record<string, unknown>; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../main.ts", import.meta.url).pathname, "lora-grad", ...args],
    stdout: "piped",
    stderr: "piped",
    env,
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert(out.code === 0, `exit ${out.code}: ${stderr}`);
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  return { last: JSON.parse(lines[lines.length - 1]), stderr };
}

Deno.test("rlvr lora-grad on a bf16 checkpoint: f16 projections by default where shader-f16 exists, f32 with --f32 or RLVR_TRAINER_F32=1, same gradients", async () => {
  const gpu = await requestGpu();
  const f16 = gpu.f16;
  gpu.device.destroy();
  const dir = await Deno.makeTempDir({ prefix: "lora-grad-f16-" });
  const tiny = makeTinyModel("qwen2", { seed: 6 });
  const cfg = tiny.config;
  await writeHfFolder(`${dir}/model`, tiny, tinyTokenizerFiles(), { dtype: "BF16" });
  await writePeftFolder(
    `${dir}/adapter`,
    randomAdapter(cfg, { r: 2, alpha: 4, targets: LORA_TARGETS, seed: 4, bScale: 0.2 }),
  );
  const rng = new Rng(8);
  const batch = [
    { ids: Array.from({ length: 9 }, () => rng.int(cfg.vocabSize)), prompt_len: 3, advantage: 0.9 },
    { ids: Array.from({ length: 6 }, () => rng.int(cfg.vocabSize)), prompt_len: 2, advantage: -1.1 },
  ];
  await Deno.writeTextFile(`${dir}/batch.json`, JSON.stringify(batch));
  const base = ["--model", `${dir}/model`, "--adapter", `${dir}/adapter`, "--batch", `${dir}/batch.json`];
  const half = await loraGrad([...base, "--out", `${dir}/g16.safetensors`]);
  const full = await loraGrad([...base, "--f32", "--out", `${dir}/g32.safetensors`]);
  const env = await loraGrad([...base, "--out", `${dir}/genv.safetensors`], { RLVR_TRAINER_F32: "1" });
  assertEquals(half.last.weights, f16 ? "f16" : "f32", half.stderr);
  assertEquals(full.last.weights, "f32");
  assertEquals(env.last.weights, "f32");
  const read = async (f: string) => safetensorsToWeights(parseSafetensors(await Deno.readFile(`${dir}/${f}`)));
  const g16 = await read("g16.safetensors"), g32 = await read("g32.safetensors");
  let gmax = 0, worst = 0;
  for (const t of g32.values()) for (const x of t.data) gmax = Math.max(gmax, Math.abs(x));
  assert(gmax > 0, "non-zero gradients");
  for (const [name, t] of g32) {
    const h = g16.get(name);
    assert(h !== undefined, name);
    for (let i = 0; i < t.data.length; i++) worst = Math.max(worst, Math.abs(h.data[i] - t.data[i]));
  }
  // Same weights, same f32 arithmetic; only the matmul's f16 operand path differs.
  assert(worst <= 1e-5 * gmax, `f16 vs f32 gradients differ by ${worst} (max |g| ${gmax})`);
  assert(
    Math.abs(Number(half.last.loss) - Number(full.last.loss)) <= 1e-6 * Math.max(1, Math.abs(Number(full.last.loss))),
    `loss ${half.last.loss} vs ${full.last.loss}`,
  );
  console.log(
    `lora-grad bf16 checkpoint: ${half.last.weights} vs f32 gradients, max |diff| ${
      worst.toExponential(2)
    } of max |g| ${gmax.toExponential(2)}`,
  );
  await Deno.remove(dir, { recursive: true });
});
