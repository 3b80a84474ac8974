// `rlvr export` on a run folder holding an adapter (no GPU needed): PEFT files equal to the run's,
// the TRL config from the notebook's GRPO cell, and the training prompts as the model renders them.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { zeroAdapter } from "../../model/lora.ts";
import { parsePeftAdapter } from "../../model/peft.ts";
import { writePeftFolder } from "../../model/peft.deno.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { tinyDatasetCell, writeTinyDataset, writeVaryingLengthModel } from "../../runtime/recipe/fixtures.deno.ts";

Deno.test("rlvr export: PEFT adapter, TRL GRPOConfig and the training prompts with gold SQL", async () => {
  const dir = await Deno.makeTempDir({ prefix: "rlvr-export-" });
  await writeTinyDataset(`${dir}/data`);
  await writeVaryingLengthModel(`${dir}/model`, { seed: 1 });
  const nb = {
    version: 1,
    title: "export",
    cells: [
      tinyDatasetCell({ devFraction: 0.25 }),
      { id: "model", type: "model", params: { source: "url", url: "model", loraRank: 2, loraAlpha: 4 } },
      { id: "prompt", type: "prompt", params: { template: "omnisql@1" } },
      {
        id: "grpo",
        type: "grpo",
        params: { G: 4, batchQuestions: 3, steps: 50, lr: 3e-6, aggregation: "seq-mean-token-mean", advantage: "mean" },
      },
    ],
  };
  await Deno.writeTextFile(`${dir}/nb.json`, JSON.stringify(nb));
  const cfg = makeTinyModel("qwen2", { seed: 1 }).config;
  const adapter = zeroAdapter(cfg, { r: 2, alpha: 4, targets: ["q_proj", "down_proj"], seed: 2 });
  await writePeftFolder(`${dir}/run/adapter`, adapter);
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../main.ts", import.meta.url).pathname,
      "export",
      `${dir}/nb.json`,
      "--run",
      `${dir}/run`,
      "--max-steps",
      "20",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(r.code === 0, `rlvr export exited ${r.code}: ${new TextDecoder().decode(r.stderr)}`);
  const last = JSON.parse(new TextDecoder().decode(r.stdout).trim().split("\n").at(-1) ?? "{}");
  assertEquals(last.files.length, 4);
  const out = `${dir}/run/export`;
  assertEquals(
    await Deno.readFile(`${out}/adapter/adapter_model.safetensors`),
    await Deno.readFile(`${dir}/run/adapter/adapter_model.safetensors`),
  );
  const back = parsePeftAdapter(
    JSON.parse(await Deno.readTextFile(`${out}/adapter/adapter_config.json`)),
    await Deno.readFile(`${out}/adapter/adapter_model.safetensors`),
  );
  assertEquals([back.r, back.alpha, back.targets], [2, 4, ["q_proj", "down_proj"]]);
  const trl = JSON.parse(await Deno.readTextFile(`${out}/trl_grpo_config.json`));
  assertEquals(
    [
      trl.grpo_config.learning_rate,
      trl.grpo_config.num_generations,
      trl.grpo_config.per_device_train_batch_size,
      trl.grpo_config.max_steps,
      trl.grpo_config.loss_type,
      trl.grpo_config.scale_rewards,
    ],
    [3e-6, 4, 12, 20, "grpo", "none"],
  );
  assertEquals(trl.peft_config.target_modules, ["q_proj", "down_proj"]);
  const prompts = (await Deno.readTextFile(`${out}/prompts.jsonl`)).trim().split("\n").map((l) => JSON.parse(l));
  assertEquals(prompts.length, 6, "the training split without its dev quarter");
  for (const p of prompts) {
    assert(
      p.prompt.startsWith("<|im_start|>user\n") && p.prompt.endsWith("<|im_start|>assistant\n"),
      "rendered with the model's chat template",
    );
    assert(p.prompt.includes("CREATE TABLE pets") && /^SELECT /.test(p.gold_sql) && p.template === "omnisql@1");
  }
  await Deno.remove(dir, { recursive: true });
});
