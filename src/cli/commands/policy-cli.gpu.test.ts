// `rlvr logprobs` (both engines) and `rlvr sample` end to end through the CLI on a tiny model folder
// with a PEFT adapter, against the float64 reference.
import { assert, assertClose, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { randomAdapter } from "../../model/lora.ts";
import { writePeftFolder } from "../../model/peft.deno.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { CHATML_TEMPLATE, makeTinyModel, tinyTokenizerFiles } from "../../model/tiny.ts";
import { writeHfFolder } from "../../model/tiny.deno.ts";
import { HfTokenizer } from "../../model/tokenizer.ts";
import { ChatTemplate } from "../../core/chat-template.ts";

async function rlvr(args: string[]): Promise<{ code: number; last: Record<string, unknown>; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  return { code: out.code, last: JSON.parse(lines[lines.length - 1]), stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("rlvr logprobs --engine ort and rlvr sample: end to end on a tiny Qwen3 with a LoRA adapter", async () => {
  const dir = await Deno.makeTempDir({ prefix: "policy-cli-" });
  const tiny = makeTinyModel("qwen3", { seed: 12 });
  const cfg = tiny.config;
  await writeHfFolder(`${dir}/model`, tiny);
  const adapter = randomAdapter(cfg, { r: 3, alpha: 6, targets: ["q_proj", "gate_proj"], seed: 2, bScale: 0.2 });
  await writePeftFolder(`${dir}/adapter`, adapter);
  const rng = new Rng(4);
  const ids = [
    Array.from({ length: 9 }, () => rng.int(cfg.vocabSize)),
    Array.from({ length: 4 }, () => rng.int(cfg.vocabSize)),
  ];
  await Deno.writeTextFile(`${dir}/ids.json`, JSON.stringify(ids));

  const lp = await rlvr([
    "logprobs",
    "--model",
    `${dir}/model`,
    "--ids",
    `${dir}/ids.json`,
    "--engine",
    "ort",
    "--adapter",
    `${dir}/adapter`,
    "--out",
    `${dir}/lp.json`,
  ]);
  assert(lp.code === 0, `exit ${lp.code}: ${lp.stderr}`);
  assertEquals([lp.last.ok, lp.last.provider, lp.last.tokens], [true, "webgpu", 13]);
  const got: number[][] = JSON.parse(await Deno.readTextFile(`${dir}/lp.json`));
  assertEquals(got.map((r) => r.length), [8, 3]);
  assertClose(got.flat(), referenceLogprobs(cfg, tiny.weights, ids, adapter).flat(), {
    atol: 2e-3,
    rtol: 0,
    name: "CLI logprobs",
  });

  // The WGSL trainer's forward pass agrees with the reference and with the ONNX policy.
  const web = await rlvr([
    "logprobs",
    "--model",
    `${dir}/model`,
    "--ids",
    `${dir}/ids.json`,
    "--engine",
    "webgpu",
    "--adapter",
    `${dir}/adapter`,
    "--out",
    `${dir}/web.json`,
  ]);
  assert(web.code === 0, `exit ${web.code}: ${web.stderr}`);
  const webLp: number[][] = JSON.parse(await Deno.readTextFile(`${dir}/web.json`));
  assertEquals(webLp.map((r) => r.length), [8, 3]);
  assertClose(webLp.flat(), referenceLogprobs(cfg, tiny.weights, ids, adapter).flat(), {
    atol: 2e-3,
    rtol: 0,
    name: "CLI logprobs --engine webgpu",
  });
  assertClose(webLp.flat(), got.flat(), { atol: 2e-3, rtol: 0, name: "webgpu vs ort engines" });
  // --dtype f16 on the webgpu engine: the frozen projections stored as f16 where the device has shader-f16.
  const f16 = await rlvr([
    "logprobs",
    "--model",
    `${dir}/model`,
    "--ids",
    `${dir}/ids.json`,
    "--engine",
    "webgpu",
    "--dtype",
    "f16",
    "--adapter",
    `${dir}/adapter`,
    "--out",
    `${dir}/x.json`,
  ]);
  assert(f16.code === 0, `exit ${f16.code}: ${f16.stderr}`);
  assert(f16.last.dtype === "f16" || f16.last.dtype === "f32", String(f16.last.dtype));
  const f16Lp: number[][] = JSON.parse(await Deno.readTextFile(`${dir}/x.json`));
  assertClose(f16Lp.flat(), webLp.flat(), {
    atol: 5e-3,
    rtol: 0,
    name: `CLI logprobs --engine webgpu --dtype f16 (${f16.last.dtype}) vs f32`,
  });
  await Deno.writeTextFile(`${dir}/bad.json`, JSON.stringify([[1, 2, cfg.vocabSize]]));
  const bad = await rlvr(["logprobs", "--model", `${dir}/model`, "--ids", `${dir}/bad.json`, "--out", `${dir}/x.json`]);
  assertEquals(bad.code, 2);
  assert(/\[0\]\[2\] = 280 is not a token id/.test(String(bad.last.error)), String(bad.last.error));

  // Sampling: a plain string and a chat conversation, 2 samples each, reproducible by seed.
  const prompts = ["SELECT", [{ role: "user", content: "count the rows" }]];
  await Deno.writeTextFile(`${dir}/prompts.json`, JSON.stringify(prompts));
  const args = [
    "sample",
    "--model",
    `${dir}/model`,
    "--prompts",
    `${dir}/prompts.json`,
    "--n",
    "2",
    "--temperature",
    "3",
    "--top-k",
    "50",
    "--max-new-tokens",
    "6",
    "--seed",
    "5",
    "--adapter",
    `${dir}/adapter`,
  ];
  const s1 = await rlvr([...args, "--out", `${dir}/s1.json`]);
  assert(s1.code === 0, `exit ${s1.code}: ${s1.stderr}`);
  assertEquals([s1.last.samples, s1.last.provider], [4, "webgpu"]);
  const s2 = await rlvr([...args, "--out", `${dir}/s2.json`]);
  const a = JSON.parse(await Deno.readTextFile(`${dir}/s1.json`));
  assertEquals(a, JSON.parse(await Deno.readTextFile(`${dir}/s2.json`)));
  assertEquals(s2.code, 0);
  const tf = tinyTokenizerFiles();
  const tok = new HfTokenizer(tf.tokenizerJson, tf.tokenizerConfig);
  const rendered = [
    tok.encode("SELECT"),
    tok.encode(new ChatTemplate(CHATML_TEMPLATE).render([{ role: "user", content: "count the rows" }])),
  ];
  for (const s of a) {
    const seq = [...rendered[s.prompt], ...s.tokens];
    const want = referenceLogprobs(cfg, tiny.weights, [seq], adapter)[0].slice(rendered[s.prompt].length - 1);
    assertClose(s.logprobs, want, { atol: 2e-3, rtol: 0, name: `sample ${s.prompt}/${s.index}` });
    assert(["eos", "length"].includes(s.finish_reason), s.finish_reason);
  }
  await Deno.remove(dir, { recursive: true });
});
