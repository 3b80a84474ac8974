import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { randomAdapter } from "../../model/lora.ts";
import { writePeftFolder } from "../../model/peft.deno.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { parseSafetensors, safetensorsToWeights } from "../../model/safetensors.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { writeHfFolder } from "../../model/tiny.deno.ts";
import { parseGradBatch } from "./lora-grad.ts";

Deno.test("rlvr lora-grad: end to end through the CLI, gradients under the adapter's names match finite differences of the reference", async () => {
  const dir = await Deno.makeTempDir({ prefix: "lora-grad-" });
  const tiny = makeTinyModel("llama", { seed: 3 });
  const cfg = tiny.config;
  await writeHfFolder(`${dir}/model`, tiny);
  const adapter = randomAdapter(cfg, {
    r: 2,
    alpha: 5,
    targets: ["q_proj", "v_proj", "down_proj"],
    seed: 4,
    bScale: 0.2,
  });
  await writePeftFolder(`${dir}/adapter`, adapter);
  const rng = new Rng(8);
  const batch = [
    { ids: Array.from({ length: 7 }, () => rng.int(cfg.vocabSize)), prompt_len: 3, advantage: 0.9 },
    { ids: Array.from({ length: 5 }, () => rng.int(cfg.vocabSize)), prompt_len: 4, advantage: -1.1 },
  ];
  await Deno.writeTextFile(`${dir}/batch.json`, JSON.stringify(batch));
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../main.ts", import.meta.url).pathname,
      "lora-grad",
      "--model",
      `${dir}/model`,
      "--adapter",
      `${dir}/adapter`,
      "--batch",
      `${dir}/batch.json`,
      "--out",
      `${dir}/grad.safetensors`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout).trim().split("\n");
  assert(out.code === 0, `exit ${out.code}: ${new TextDecoder().decode(out.stderr)}`);
  const last = JSON.parse(stdout[stdout.length - 1]);
  assertEquals([last.ok, last.tokens, last.tensors], [true, 5, adapter.tensors.size]);
  const grads = safetensorsToWeights(parseSafetensors(await Deno.readFile(`${dir}/grad.safetensors`)));
  assertEquals([...grads.keys()].sort(), [...adapter.tensors.keys()].sort());
  const loss = () => {
    const lp = referenceLogprobs(cfg, tiny.weights, batch.map((b) => b.ids), adapter);
    let s = 0;
    batch.forEach((b, i) => {
      for (let t = b.prompt_len; t < b.ids.length; t++) s += b.advantage * lp[i][t - 1];
    });
    return -s / 5;
  };
  assert(Math.abs(last.loss - loss()) < 1e-4, `loss ${last.loss} vs reference ${loss()}`);
  let gmax = 0;
  for (const g of grads.values()) for (const x of g.data) gmax = Math.max(gmax, Math.abs(x));
  for (const [name, g] of grads) {
    const t = adapter.tensors.get(name);
    assert(t !== undefined && t.shape.join() === g.shape.join(), `${name} shape`);
    for (const i of [rng.int(g.data.length), rng.int(g.data.length)]) {
      const x0 = t.data[i];
      t.data[i] = x0 + 1e-3;
      const hp = t.data[i] - x0, lp = loss();
      t.data[i] = x0 - 1e-3;
      const hm = x0 - t.data[i], lm = loss();
      t.data[i] = x0;
      const fd = (lp - lm) / (hp + hm);
      assert(
        Math.abs(g.data[i] - fd) <= 1e-3 * gmax + 2e-3 * Math.abs(fd),
        `${name}[${i}]: ${g.data[i]} vs finite difference ${fd}`,
      );
    }
  }
  await Deno.remove(dir, { recursive: true });
});

Deno.test("rlvr lora-grad: batch validation names the entry and the field", async () => {
  await assertRejects(() => Promise.resolve(parseGradBatch([], 10)), /non-empty JSON array/);
  await assertRejects(
    () => Promise.resolve(parseGradBatch([{ ids: [1, 2, 3], prompt_len: 0, advantage: 1 }], 10, "b.json")),
    /b\.json\[0\]\.prompt_len 0 must be an integer in 1\.\.3/,
  );
  await assertRejects(
    () => Promise.resolve(parseGradBatch([{ ids: [1, 12], prompt_len: 1, advantage: 1 }], 10)),
    /ids\[1\] = 12 is not a token id in \[0, 10\)/,
  );
  await assertRejects(
    () => Promise.resolve(parseGradBatch([{ ids: [1, 2], prompt_len: 1, advantage: "x" }], 10)),
    /advantage "x" is not a finite number/,
  );
  assertEquals(parseGradBatch([{ ids: [1, 2], prompt_len: 1, advantage: -2 }], 10), [{
    ids: [1, 2],
    promptLen: 1,
    advantage: -2,
  }]);
});
