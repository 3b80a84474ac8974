// The engine switch through the CLI, on the engine this test run uses (npm test runs it on Deno's
// wgpu over lavapipe and on Dawn over SwiftShader): `rlvr gpu` names it, and `rlvr logprobs` at f32
// and q4, through the ONNX policy and the WGSL trainer, with and without an adapter, on tiny
// Qwen2 / Llama / Qwen3 folders: f32 against the float64 reference, q4 of the two engines against
// each other (where the device has no shader-f16 the ONNX q4 graph holds what the trainer holds;
// with f16 its embedding and head differ, so there each q4 result is checked against its own
// dequantised reference instead).
import { assert, assertClose, assertEquals } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { currentEngine } from "../../gpu/engine.deno.ts";
import type { Arch } from "../../model/config.ts";
import { randomAdapter } from "../../model/lora.ts";
import { writePeftFolder } from "../../model/peft.deno.ts";
import { q4EffectiveWeights } from "../../model/quant.ts";
import { referenceLogprobs } from "../../model/reference.ts";
import { makeTinyModel } from "../../model/tiny.ts";
import { writeHfFolder } from "../../model/tiny.deno.ts";

const engine = currentEngine()?.engine ?? "deno";

async function rlvr(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; last: Record<string, unknown>; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("../main.ts", import.meta.url).pathname, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { RLVR_WEBGPU: "", ...env },
  }).output();
  const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
  return { code: out.code, last: JSON.parse(lines[lines.length - 1]), stderr: new TextDecoder().decode(out.stderr) };
}

/** `rlvr logprobs` of `${dir}/model` on `${dir}/ids.json` (with `${dir}/adapter` where asked), its JSON to `out`. */
function logprobsArgs(
  dir: string,
  webgpu: string,
  e: "ort" | "webgpu",
  dtype: "f32" | "q4",
  withAdapter: boolean,
  out: string,
): string[] {
  return [
    "logprobs",
    "--webgpu",
    webgpu,
    "--model",
    `${dir}/model`,
    "--ids",
    `${dir}/ids.json`,
    "--engine",
    e,
    "--dtype",
    dtype,
    ...(withAdapter ? ["--adapter", `${dir}/adapter`] : []),
    "--out",
    out,
  ];
}

Deno.test(`rlvr gpu --webgpu ${engine}: the JSON names the engine, the adapter's features and limits; a bad engine name is a usage error`, async () => {
  const r = await rlvr(["gpu", "--no-bench", "--webgpu", engine]);
  assert(r.code === 0, `exit ${r.code}: ${r.stderr}`);
  assertEquals(r.last.webgpu, engine);
  const adapter = r.last.adapter as {
    features: Record<string, boolean>;
    subgroupMatrixConfigs: string[];
    limits: Record<string, number>;
  };
  assertEquals(Object.keys(adapter.features).sort(), ["shader-f16", "subgroups", "timestamp-query"]);
  assert(Array.isArray(adapter.subgroupMatrixConfigs), "subgroup-matrix configs listed");
  assert(adapter.limits.maxStorageBufferBindingSize > 0, "limits reported");
  assert(r.stderr.includes(`webgpu: ${engine}`), `the one-line engine note: ${r.stderr}`);
  const bad = await rlvr(["gpu", "--no-bench", "--webgpu", "metal"]);
  assertEquals(bad.code, 2);
  assert(String(bad.last.error).includes("must be dawn, deno or auto"), String(bad.last.error));
});

// Every architecture on Deno's wgpu (lavapipe, 23 s); on Dawn (SwiftShader, ~15 s per CLI run on the
// 2-core CI machine) qwen2 only: the architectures' graphs and kernels are the same code on either
// engine and run on Dawn in policy, no-f16, logprobs and grad tests.
const ARCHS: Arch[] = engine === "dawn" ? ["qwen2"] : ["qwen2", "llama", "qwen3"];

for (const arch of ARCHS) {
  Deno.test(`rlvr logprobs --webgpu ${engine}, ${arch}: --engine ort and webgpu at f32 (vs float64) and q4 (vs each other), with an adapter${arch === "qwen2" && engine !== "dawn" ? " and without" : ""}`, async () => {
    const dir = await Deno.makeTempDir({ prefix: `webgpu-cli-${arch}-` });
    const tiny = makeTinyModel(arch, { seed: 31 });
    await writeHfFolder(`${dir}/model`, tiny);
    const adapter = randomAdapter(tiny.config, {
      r: 4,
      alpha: 8,
      targets: ["q_proj", "v_proj", "up_proj"],
      seed: 5,
      bScale: 0.2,
    });
    await writePeftFolder(`${dir}/adapter`, adapter);
    const rng = new Rng(8);
    const ids = [13, 5, 9].map((n) => Array.from({ length: n }, () => rng.int(tiny.config.vocabSize)));
    await Deno.writeTextFile(`${dir}/ids.json`, JSON.stringify(ids));
    let noF16 = false;
    // Without an adapter on qwen2 only (on wgpu): the adapter-less graph is one code path on every
    // arch; on Dawn with the adapter only (the graph with LoRA inputs is what the recipe runs).
    for (const withAdapter of arch === "qwen2" && engine !== "dawn" ? [false, true] : [true]) {
      const got: Record<string, number[]> = {};
      for (const dtype of ["f32", "q4"] as const) {
        for (const e of ["ort", "webgpu"] as const) {
          const out = `${dir}/${e}-${dtype}-${withAdapter}.json`;
          const r = await rlvr(logprobsArgs(dir, engine, e, dtype, withAdapter, out));
          assert(r.code === 0, `${e} ${dtype}: exit ${r.code}: ${r.stderr}`);
          assertEquals(r.last.engine, e);
          if (e === "ort") {
            assertEquals(r.last.provider, "webgpu");
            if (dtype === "q4") noF16 = String(r.last.precision).includes("no shader-f16");
          }
          got[`${e}-${dtype}`] = (JSON.parse(await Deno.readTextFile(out)) as number[][]).flat();
        }
      }
      const a = withAdapter ? adapter : undefined;
      const want = referenceLogprobs(tiny.config, tiny.weights, ids, a).flat();
      const tag = `${arch}${withAdapter ? " + adapter" : ""}`;
      const eOrt = assertClose(got["ort-f32"], want, { atol: 2e-3, rtol: 0, name: `${tag} ort f32 vs float64` });
      const eWgsl = assertClose(got["webgpu-f32"], want, { atol: 2e-3, rtol: 0, name: `${tag} webgpu f32 vs float64` });
      // The trainer's q4 keeps embedding and head f32 (q4EffectiveWeights with shaderF16: false).
      const trainerQ4 = q4EffectiveWeights(tiny.config, tiny.weights, { shaderF16: false });
      const eQ4w = assertClose(got["webgpu-q4"], referenceLogprobs(trainerQ4.cfg, trainerQ4.w, ids, a).flat(), {
        atol: 2e-3,
        rtol: 0,
        name: `${tag} webgpu q4 vs its reference`,
      });
      let q4Line: string;
      if (noF16) {
        const e = assertClose(got["ort-q4"], got["webgpu-q4"], {
          atol: 1e-3,
          rtol: 0,
          name: `${tag} q4: ort vs webgpu`,
        });
        q4Line = `q4 |ort - webgpu| ${e.maxAbs.toExponential(2)}`;
      } else {
        const ortQ4 = q4EffectiveWeights(tiny.config, tiny.weights);
        const e = assertClose(got["ort-q4"], referenceLogprobs(ortQ4.cfg, ortQ4.w, ids, a).flat(), {
          atol: 2e-3,
          rtol: 0,
          name: `${tag} ort q4 (f16 embedding, q4 head) vs its reference`,
        });
        q4Line = `q4 ort vs its reference ${
          e.maxAbs.toExponential(2)
        } (the device has shader-f16: the q4 graphs differ)`;
      }
      console.log(
        `${engine} ${tag}: f32 |ort - ref| ${eOrt.maxAbs.toExponential(2)}, |webgpu - ref| ${
          eWgsl.maxAbs.toExponential(2)
        }; webgpu q4 vs ref ${eQ4w.maxAbs.toExponential(2)}; ${q4Line}`,
      );
    }
    await Deno.remove(dir, { recursive: true });
  });
}

// On a GPU, Dawn runs without validating each call (engine.deno.ts); CPU adapters keep it, so the tests above run with
// it. RLVR_DAWN_VALIDATION=off takes that path here: the same logprobs, through the ONNX policy and the WGSL trainer.
if (engine === "dawn") {
  Deno.test("rlvr logprobs --webgpu dawn, RLVR_DAWN_VALIDATION=off: the note says so; ort and webgpu f32 vs float64", async () => {
    const dir = await Deno.makeTempDir({ prefix: "webgpu-cli-novalidation-" });
    const tiny = makeTinyModel("qwen2", { seed: 31 });
    await writeHfFolder(`${dir}/model`, tiny);
    const adapter = randomAdapter(tiny.config, {
      r: 4,
      alpha: 8,
      targets: ["q_proj", "up_proj"],
      seed: 6,
      bScale: 0.2,
    });
    await writePeftFolder(`${dir}/adapter`, adapter);
    const rng = new Rng(9);
    const ids = [11, 4].map((n) => Array.from({ length: n }, () => rng.int(tiny.config.vocabSize)));
    await Deno.writeTextFile(`${dir}/ids.json`, JSON.stringify(ids));
    const want = referenceLogprobs(tiny.config, tiny.weights, ids, adapter).flat();
    for (const e of ["ort", "webgpu"] as const) {
      const out = `${dir}/${e}.json`;
      const r = await rlvr(logprobsArgs(dir, "dawn", e, "f32", true, out), { RLVR_DAWN_VALIDATION: "off" });
      assert(r.code === 0, `${e}: exit ${r.code}: ${r.stderr}`);
      assert(r.stderr.includes("validation off"), `the engine note: ${r.stderr}`);
      const got = (JSON.parse(await Deno.readTextFile(out)) as number[][]).flat();
      assertClose(got, want, { atol: 2e-3, rtol: 0, name: `${e} f32 without validation vs float64` });
    }
    const bad = await rlvr(["gpu", "--no-bench", "--webgpu", "dawn"], { RLVR_DAWN_VALIDATION: "maybe" });
    assert(bad.code !== 0, "a bad RLVR_DAWN_VALIDATION is an error");
    assert(`${bad.stderr}${JSON.stringify(bad.last)}`.includes("RLVR_DAWN_VALIDATION must be on, off or auto"));
  });
}
