// The policy where the device has no shader-f16 (Dawn over Vulkan on NVIDIA, SwiftShader, Chrome on
// Linux with an NVIDIA GPU): q4 and f16 graphs are built without any f16 tensor and compute in f32.
// Checked against the float64 reference on the weights such a graph holds, and (q4) against the
// WGSL trainer's own q4 forward on the same GPUDevice: the importance ratio compares the two.
// On a device that has shader-f16 (lavapipe) the no-f16 graph is forced with `shaderF16: false`;
// on one without it (Dawn on SwiftShader) the default detection must choose it by itself.
import { assert, assertClose, assertEquals } from "../../tests/assert.ts";
import { Rng } from "../core/rng.ts";
import { requestGpu } from "../gpu/device.ts";
import { destroyModel, uploadModel } from "../gpu/model/state.ts";
import { logprobsWebgpu } from "../gpu/trainer/logprobs.ts";
import type { Arch } from "./config.ts";
import { randomAdapter } from "./lora.ts";
import { OrtPolicy, webgpuHasF16 } from "./policy.ts";
import { q4EffectiveWeights, roundTripF16 } from "./quant.ts";
import { referenceLogprobs } from "./reference.ts";
import type { Weights } from "./tensor.ts";
import { makeTinyModel } from "./tiny.ts";

const ARCHS: Arch[] = ["qwen2", "llama", "qwen3"];
const gpu = await requestGpu();
const deviceHasF16 = gpu.device.features.has("shader-f16");

function seqsFor(V: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return [11, 6, 15].map((n) => Array.from({ length: n }, () => rng.int(V)));
}

/** What an f16 graph stores in half precision, rounded through f16 (norm weights stay f32). */
function f16Weights(w: Weights): Weights {
  const out: Weights = new Map();
  for (const [name, t] of w) out.set(name, name.includes("norm") ? t : roundTripF16(t));
  return out;
}

Deno.test(`shader-f16 detection: webgpuHasF16 reads the device (${deviceHasF16 ? "has" : "lacks"} shader-f16) and a default policy builds accordingly`, async () => {
  assertEquals(await webgpuHasF16(gpu.device), deviceHasF16);
  const m = makeTinyModel("qwen2", { seed: 5 });
  const policy = await OrtPolicy.create(m.config, m.weights, { dtype: "q4", maxPositions: 16, device: gpu.device });
  try {
    assertEquals(policy.kvType, "float32");
    assertEquals(policy.precision.includes("no shader-f16"), !deviceHasF16, policy.precision);
    const got = await policy.logprobs(seqsFor(m.config.vocabSize, 2));
    assert(got.flat().every(Number.isFinite), "non-finite log-probs");
  } finally {
    await policy.release();
  }
});

for (const arch of ARCHS) {
  Deno.test(`no shader-f16, ${arch}: q4 log-probs match the float64 reference on the graph's weights and the WGSL trainer's q4 forward within 1e-3, with and without LoRA`, async () => {
    const m = makeTinyModel(arch, { seed: 23 });
    const seqs = seqsFor(m.config.vocabSize, 9);
    const targets = ["q_proj", "v_proj", "up_proj", "down_proj"] as const;
    const adapter = randomAdapter(m.config, { r: 4, alpha: 8, targets: [...targets], seed: 3, bScale: 0.2 });
    const policy = await OrtPolicy.create(m.config, m.weights, {
      dtype: "q4",
      loraTargets: targets,
      maxPositions: 32,
      device: gpu.device,
      shaderF16: false,
    });
    const trainer = uploadModel(gpu.device, m.config, m.weights, { q4: true });
    try {
      assertEquals(policy.provider, "webgpu");
      const eff = q4EffectiveWeights(m.config, m.weights, { shaderF16: false });
      for (const a of [null, adapter]) {
        policy.setAdapter(a);
        const got = await policy.logprobs(seqs);
        const want = referenceLogprobs(eff.cfg, eff.w, seqs, a ?? undefined);
        const eRef = assertClose(got.flat(), want.flat(), {
          atol: 2e-3,
          rtol: 0,
          name: `${arch} q4 no-f16 vs reference${a ? " (LoRA)" : ""}`,
        });
        const ours = await logprobsWebgpu(trainer, seqs, a ?? undefined);
        const eTrainer = assertClose(got.flat(), ours.flat(), {
          atol: 1e-3,
          rtol: 0,
          name: `${arch} q4 ORT vs WGSL trainer${a ? " (LoRA)" : ""}`,
        });
        console.log(
          `${arch} q4 without f16${a ? " + LoRA" : ""}: max |ORT - reference| ${
            eRef.maxAbs.toExponential(2)
          }, |ORT - trainer| ${eTrainer.maxAbs.toExponential(2)}`,
        );
      }
    } finally {
      destroyModel(trainer);
      await policy.release();
    }
  });

  Deno.test(`no shader-f16, ${arch}: f16 weights computed in f32 match the float64 reference on f16-rounded weights`, async () => {
    const m = makeTinyModel(arch, { seed: 29 });
    const seqs = seqsFor(m.config.vocabSize, 4);
    const adapter = randomAdapter(m.config, { r: 4, alpha: 8, targets: ["k_proj", "gate_proj"], seed: 6, bScale: 0.2 });
    const policy = await OrtPolicy.create(m.config, m.weights, {
      dtype: "f16",
      loraTargets: ["k_proj", "gate_proj"],
      maxPositions: 32,
      device: gpu.device,
      shaderF16: false,
    });
    try {
      assertEquals(policy.kvType, "float32");
      const w16 = f16Weights(m.weights);
      policy.setAdapter(adapter);
      const got = await policy.logprobs(seqs);
      const e = assertClose(got.flat(), referenceLogprobs(m.config, w16, seqs, adapter).flat(), {
        atol: 2e-3,
        rtol: 0,
        name: `${arch} f16-as-f32 vs reference`,
      });
      console.log(`${arch} f16 weights in f32: max |err| ${e.maxAbs.toExponential(2)}`);
    } finally {
      await policy.release();
    }
  });
}
