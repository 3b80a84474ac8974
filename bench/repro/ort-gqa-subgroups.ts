// Reproduction: onnxruntime-web's GroupQueryAttention on a device with and without `subgroups`.
// A one-layer model (4 query heads, 2 KV heads, head size 8), one 40-token sequence, log-probs
// against the float64 reference. On Dawn over SwiftShader (subgroup size 4) the device with
// subgroups is off by ~0.5 from the fifth token on, the one without matches to ~1e-6.
//   VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json deno run -A bench/repro/ort-gqa-subgroups.ts --webgpu dawn
import { selectWebGpuFromArgs } from "../../src/gpu/engine.deno.ts";

await selectWebGpuFromArgs(Deno.args);
const { OrtPolicy } = await import("../../src/model/policy.ts");
const { makeTinyModel } = await import("../../src/model/tiny.ts");
const { referenceLogprobs } = await import("../../src/model/reference.ts");

const m = makeTinyModel("llama", {
  seed: 3,
  hidden: 32,
  heads: 4,
  kvHeads: 2,
  headDim: 8,
  layers: 1,
  intermediate: 48,
});
const ids = [Array.from({ length: 40 }, (_, i) => (i * 7 + 3) % m.config.vocabSize)];
const want = referenceLogprobs(m.config, m.weights, ids).flat();
for (const features of [[], ["subgroups"]] as GPUFeatureName[][]) {
  const adapter = await navigator.gpu.requestAdapter();
  if (!adapter) throw new Error("no adapter");
  if (features.some((f) => !adapter.features.has(f))) {
    console.log(`the adapter has no ${features.join(", ")}: nothing to compare`);
    continue;
  }
  const device = await adapter.requestDevice({ requiredFeatures: features });
  const policy = await OrtPolicy.create(m.config, m.weights, {
    dtype: "f32",
    maxPositions: 64,
    attention: "gqa",
    checkGqa: false,
    device,
  });
  const got = (await policy.logprobs(ids)).flat();
  const err = got.map((x, i) => Math.abs(x - want[i]));
  const first = err.findIndex((e) => e > 1e-3);
  console.log(
    `GQA, device features [${features.join(", ")}]: max |logp - float64| ${Math.max(...err).toExponential(2)}${
      first >= 0 ? `, first off at token ${first + 1}` : ""
    }`,
  );
  await policy.release();
  device.destroy();
}
Deno.exit(0);
