// Captured decoding with LoRA on all seven targets of a q4 and of an f32 model: the captured decoding graph takes every
// adapter packed with its A products split along K (decoder.ts LoraStack, S > 1: q/k/v's and gate/up's stacked, o's
// and down's alone; A transposed, B block-diagonal and repeated S times), the captured prefill q/k/v's and gate/up's
// stacked (S = 1: A stacked by rows, B block-diagonal), all filled by the captured session from the policy's
// per-target feeds (captured.ts setAdapter: lora_block.wgsl and row copies, or packed on the CPU). Their
// log-probabilities equal the policy's own graph's (per-target inputs) within captured-check.ts's tolerance,
// teacher-forced on ragged rows, with the adapter fed as CPU tensors, as the policy's resident copies (setAdapter) and
// as the trainer's GPU buffers (setAdapterBuffers); a second adapter's values are followed; a packing that forgets to
// transpose one A is seen. RLVR_CAPTURED_LORA_SLICE makes the slices 16 columns wide, so that the tiny models' inputs
// (48 and 64) are split (3 and 4 slices).
import { assert, assertEquals } from "../../tests/assert.ts";
import { requestGpu, storageBuffer, writeBuffer } from "../gpu/device.ts";
import { type CapturedDecoder, compareCaptured, type CompareModel } from "./captured.ts";
import { LORA_TARGETS, type LoraAdapter, loraKey, randomAdapter } from "./lora.ts";
import { shortTarget } from "./onnx/decoder.ts";
import { ort } from "./onnx/ort.ts";
import { OrtPolicy } from "./policy.ts";
import { makeTinyModel } from "./tiny.ts";

const gpu = await requestGpu();
Deno.env.set("RLVR_CAPTURED_LORA_SLICE", "16");
// Head dim 8: GroupQueryAttention applies, so the captured graph can be built.
// Also f32 (the demo's policy; decoder.ts floatLinears: one product per group over the concatenated weights), with
// ("qwen2": q/k/v biases, stacked into Gemm's C) and without attention biases ("llama").
const sizes = { seed: 31, hidden: 48, heads: 6, kvHeads: 2, headDim: 8, intermediate: 64 };
const models = { llama: makeTinyModel("llama", sizes), qwen2: makeTinyModel("qwen2", sizes) };
let m = models.llama;
const V = m.config.vocabSize;
if (models.qwen2.config.vocabSize !== V) throw new Error("tiny models differ in vocabulary");
const TOL = 1e-3; // captured-check.ts
const prompts = [9, 1, 5].map((n, r) => Array.from({ length: n }, (_, i) => (i * 37 + r * 11 + 5) % V));
const tokens = Array.from({ length: 3 }, (_, s) => prompts.map((_, r) => (s * 53 + r * 29 + 7) % V));
const adaptersOf = (mm: typeof m) =>
  [3, 4].map((seed) => randomAdapter(mm.config, { r: 4, alpha: 8, targets: LORA_TARGETS, seed, bScale: 0.4 }));
let adapters = adaptersOf(m);

/** The adapter's per-target feeds as CPU float32 tensors (what the policy's graph names them). */
function cpuFeeds(a: LoraAdapter, scale: boolean): Record<string, ort.Tensor> {
  const feeds: Record<string, ort.Tensor> = {};
  if (scale) feeds.lora_scale = new ort.Tensor("float32", Float32Array.of(a.alpha / a.r), [1]);
  for (let l = 0; l < m.config.numLayers; l++) {
    for (const t of LORA_TARGETS) {
      for (const ab of ["A", "B"] as const) {
        const x = a.tensors.get(loraKey(l, t, ab))!;
        feeds[`lora.${l}.${shortTarget(t)}.${ab}`] = new ort.Tensor("float32", x.data.slice(), x.shape);
      }
    }
  }
  return feeds;
}

/**
 * The policy, with its adapter feeds replaced by `feeds` where given (the captured sessions' CPU path), and `after`
 * called on the captured decoder after each of its setAdapter calls (the negative check breaks its packing there).
 */
function model(
  p: OrtPolicy,
  feeds?: Record<string, ort.Tensor>,
  after?: (dec: CapturedDecoder) => void,
): CompareModel {
  return {
    cfg: p.cfg,
    gpuDevice: () => p.gpuDevice(),
    stepGpu: (i) => p.stepGpu(i),
    step: (i) => p.step(i),
    releaseCache: (c) => p.releaseCache(c),
    adapterFeedsNow: () => (feeds ? Promise.resolve(feeds) : p.adapterFeedsNow()),
    capturedDecoder: async (r, t) => {
      const dec = await p.capturedDecoder(r, t);
      if (!after) return dec;
      // A view of the decoder whose setAdapter runs `after` once the packing is recorded.
      return Object.assign(Object.create(dec) as CapturedDecoder, {
        setAdapter(enc: GPUCommandEncoder, f: Record<string, ort.Tensor>) {
          dec.setAdapter(enc, f);
          after(dec);
        },
      });
    },
    capturedPrefill: (r, w) => p.capturedPrefill(r, w),
  };
}

/** The largest |captured - policy| log-probability over every step, with the given prefill. */
async function worstOf(
  p: OrtPolicy,
  prefill: "policy" | "captured",
  feeds?: Record<string, ort.Tensor>,
  after?: (dec: CapturedDecoder) => void,
): Promise<{ worst: number; captured: Float32Array[] }> {
  const { captured, explicit } = await compareCaptured(model(p, feeds, after), prompts, tokens, prefill);
  return { worst: maxDiff(captured, explicit), captured };
}

/** The captured log-probabilities (both prefills where the captured one passes its check), each checked against the policy's graph. */
async function check(p: OrtPolicy, what: string, feeds?: Record<string, ort.Tensor>): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  const prefills = (await p.capturedPrefillOk()) ? (["policy", "captured"] as const) : (["policy"] as const);
  for (const prefill of prefills) {
    const { worst, captured } = await worstOf(p, prefill, feeds);
    console.log(`${what}, ${prefill} prefill: max |captured - policy| ${worst.toExponential(2)}`);
    assert(worst <= TOL, `${what}, ${prefill} prefill: captured log-probabilities differ by ${worst}`);
    out.push(...captured);
  }
  return out;
}

function maxDiff(a: Float32Array[], b: Float32Array[]): number {
  let d = 0;
  for (let s = 0; s < a.length; s++) for (let i = 0; i < a[s].length; i++) d = Math.max(d, Math.abs(a[s][i] - b[s][i]));
  return d;
}

const cases = [
  ...[2, undefined].map((loraScale) => ({ dtype: "q4" as const, arch: "llama" as const, loraScale })),
  ...(["llama", "qwen2"] as const).flatMap((arch) =>
    [2, undefined].map((loraScale) => ({ dtype: "f32" as const, arch, loraScale }))
  ),
];
for (const { dtype, arch, loraScale } of cases) {
  Deno.test(
    `captured decoding, ${dtype}${dtype === "f32" ? ` ${arch}` : ""} with LoRA on all seven targets (${
      loraScale ? "loraScale fixed" : "lora_scale input"
    }): packed adapters (decoding: A products split along K, B repeated; prefill: q/k/v and gate/up stacked) = the policy's graph, fed as CPU tensors, resident copies and GPU buffers; a second adapter is followed; a wrong packing is seen`,
    async () => {
      m = models[arch];
      adapters = adaptersOf(m);
      const policy = await OrtPolicy.create(m.config, m.weights, {
        dtype,
        maxPositions: 48,
        device: gpu.device,
        logitsOnGpu: true,
        loraTargets: LORA_TARGETS,
        loraScale,
      });
      const buffers = new Map<string, GPUBuffer>();
      try {
        if (!(await policy.capturedOk())) {
          console.log("notice: captured decoding failed its check on this device; nothing to compare");
          return;
        }
        // CPU tensors into the captured sessions (packed there), then the policy's resident copies (setAdapter).
        policy.setAdapter(adapters[0]);
        const cpu1 = await check(policy, "adapter 1, CPU feeds", cpuFeeds(adapters[0], loraScale === undefined));
        const res1 = await check(policy, "adapter 1, setAdapter");
        assert(maxDiff(cpu1, res1) <= TOL, "CPU feeds and resident copies differ");
        // The decoding graph's inputs are split (3 slices of the 48 inputs, 4 of the MLP's 64), the prefill's not.
        const L = m.config.numLayers;
        const dec = await policy.capturedDecoder(prompts.length, 16);
        assertEquals(
          dec.loraSlices,
          Object.fromEntries(
            Array.from({ length: L }, (_, i) => [
              [`lora.${i}.qkv.split`, 3],
              [`lora.${i}.gate_up.split`, 3],
              [`lora.${i}.o.split`, 3],
              [`lora.${i}.down.split`, 4],
            ]).flat(),
          ),
        );
        if (await policy.capturedPrefillOk()) {
          const pf = await policy.capturedPrefill(prompts.length, 16);
          assertEquals(Object.values(pf.loraSlices), new Array(2 * L).fill(1));
        }
        // The negative check: layer 0's down A written as fed, (r, in), where the packing transposes it (in, r)
        // (lora_block.wgsl's strides, placeInto), after the CPU feeds' packed values (written at setAdapter): the
        // captured log-probabilities leave the tolerance.
        const a = adapters[0].tensors.get(loraKey(0, "down_proj", "A"))!;
        const feeds1 = cpuFeeds(adapters[0], loraScale === undefined);
        const broken = await worstOf(policy, "policy", feeds1, (d) => {
          const buf = (d as unknown as { buffer(name: string): GPUBuffer }).buffer("lora.0.down.split.A");
          gpu.device.queue.writeBuffer(buf, 0, a.data);
        });
        console.log(
          `adapter 1, layer 0's down A not transposed: max |captured - policy| ${broken.worst.toExponential(2)}`,
        );
        assert(broken.worst > 10 * TOL, `a wrongly packed A went unseen (${broken.worst})`);
        if (dtype === "f32") {
          // The unstacked captured graphs (decodeProducts "plain": a product and two LoRA Gemms per target) compute
          // the same dot products: the same log-probabilities to float rounding.
          await policy.releaseCaptured();
          Deno.env.set("RLVR_CAPTURED_PRODUCTS", "plain");
          let plain: Float32Array[];
          try {
            plain = await check(policy, "adapter 1, unstacked captured graphs");
          } finally {
            Deno.env.delete("RLVR_CAPTURED_PRODUCTS");
            await policy.releaseCaptured();
          }
          const d = maxDiff(plain, res1);
          console.log(`adapter 1: max |stacked - unstacked captured| ${d.toExponential(2)}`);
          assert(d <= 1e-4, `the stacked and unstacked captured graphs differ by ${d}`);
        }
        policy.setAdapter(adapters[1]);
        const cpu2 = await check(policy, "adapter 2, CPU feeds", cpuFeeds(adapters[1], loraScale === undefined));
        const res2 = await check(policy, "adapter 2, setAdapter");
        assert(maxDiff(res1, res2) > 10 * TOL, `adapters 1 and 2 decoded alike (${maxDiff(res1, res2)})`);
        assert(maxDiff(cpu2, res2) <= TOL, "CPU feeds and resident copies differ");
        // The trainer's buffers: adapter 1, then adapter 2's values written into the same buffers.
        for (const [k, t] of adapters[0].tensors) buffers.set(k, storageBuffer(gpu.device, k, t.data));
        policy.setAdapterBuffers({ r: 4, alpha: 8, targets: LORA_TARGETS, buffers });
        const gpu1 = await check(policy, "adapter 1, GPU buffers");
        assert(maxDiff(gpu1, res1) <= TOL, "GPU buffers and resident copies of adapter 1 differ");
        for (const [k, t] of adapters[1].tensors) writeBuffer(gpu.device, buffers.get(k)!, t.data);
        const gpu2 = await check(policy, "adapter 2 written into the GPU buffers");
        assert(maxDiff(gpu2, res2) <= TOL, "the captured sessions did not follow the values written into the buffers");
      } finally {
        await policy.release();
        for (const b of buffers.values()) b.destroy();
      }
    },
  );
}
