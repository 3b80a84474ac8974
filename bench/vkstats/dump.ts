// Records the 0.5B step's big products once each (f32 on each tile kernel and q4, forward and dx, with and without the LoRA tail),
// then its other hot kernels (attention's forward and backward at the 0.5B head shape, the vocabulary head's partials and
// dz on both tile sizes, a LoRA rank product on the narrow kernel) on whatever engine runs it, and writes the pipelines' labels in creation order to the file given. Run under Dawn with
// RLVR_DAWN_OPTIONS="enable-dawn-features=dump_shaders": Dawn then prints each pipeline's WGSL and its SPIR-V, in
// the same order; bench/vkstats/split.py pairs them with the labels and assembles the SPIR-V for vkstats.c.
// Usage: deno run -A bench/vkstats/dump.ts LABELS.json [perf=SWITCHES]
import { args as benchArgs } from "../engine.ts";
import { requestGpu, storageBuffer } from "../../src/gpu/device.ts";
import { encodeAttentionBackward, encodeAttentionForward } from "../../src/gpu/kernels/attention.ts";
import { encodeLmheadBackward, encodeLmheadForward, lmheadPartialsBytes, lmheadScratchBytes } from "../../src/gpu/kernels/lmhead.ts";
import { encodeMatmul } from "../../src/gpu/kernels/matmul.ts";
import { encodeQ4Matmul, encodeQ4MatmulTransposed, uploadQ4 } from "../../src/gpu/kernels/q4matmul.ts";
import { parsePerfSwitches, perfSwitches, setPerfSwitches } from "../../src/gpu/switches.ts";
import { quantizeQ4 } from "../../src/model/quant.ts";

const out = benchArgs.find((a) => !a.includes("=")) ?? "vkstats-labels.json";
const perf = benchArgs.find((a) => a.startsWith("perf="));
if (perf) setPerfSwitches(parsePerfSwitches(perf.slice(5)));
const { device } = await requestGpu();
const labels: string[] = [];
const create = device.createComputePipelineAsync.bind(device);
device.createComputePipelineAsync = (d: GPUComputePipelineDescriptor) => {
  labels.push(d.label ?? "(no label)");
  return create(d);
};

// Sizes: big enough that every product takes the trainer's kernel for the 0.5B shapes (both sides >= 128, K > 128, q4's
// tile128 at >= 96 tiles). Nothing is submitted: encoding compiles the pipelines, which is all the dump needs.
const M = 3072, H = 896, F = 512, r = 16;
const buf = (n: number) => storageBuffer(device, "vkstats", n * 4);
const x = buf(M * H), y = buf(M * F), w = buf(F * H), dx = buf(M * H);
const xa = buf(M * r), bF = buf(F * r), aH = buf(r * H);
const enc = device.createCommandEncoder();
// f32 forward y = x W^T (+ s (x A^T) B^T) and its dx = dy W (+ s (dy B) A), with and without the tail, on each 128- and
// 256-row tile kernel.
for (const variant of ["tile128", "tile128h", "tile256", "tile96h"] as const) {
  for (const tail of [false, true]) {
    await encodeMatmul(device, enc, x, w, y, { M, N: F, K: H, transB: true, variant, ...(tail ? { tail: { a: xa, b: bF, r, scale: 2 } } : {}) });
    await encodeMatmul(device, enc, y, w, dx, { M, N: H, K: F, variant, ...(tail ? { tail: { a: xa, b: aH, r, scale: 2 } } : {}) });
  }
}
// q4 forward and dx, with and without the tail.
const wt = { data: new Float32Array(F * H).map((_, i) => Math.sin(i)), shape: [F, H] };
const qw = quantizeQ4(wt);
const q = uploadQ4(device, "vkstats-q4", { Nout: qw.N, K: qw.K, packed: qw.packed, scales: qw.scales, zeroPoints: qw.zeroPoints ?? undefined });
await encodeQ4Matmul(device, enc, x, q, y, M);
await encodeQ4Matmul(device, enc, x, q, y, M, { tail: { a: xa, b: bF, r, scale: 2 } });
await encodeQ4MatmulTransposed(device, enc, y, q, dx, M);
await encodeQ4MatmulTransposed(device, enc, y, q, dx, M, { tail: { a: xa, b: aH, r, scale: 2 } });
// Attention at the 0.5B step's heads (H 14, Hkv 2, D 64; the tiles depend on D and the workgroup memory, not on T): the
// blocked forward, then the backward as the switches pick it (by default delta, the dk/dv kernel with the dq partial, the
// reduce; under attnSplit=1, the default, the split dk/dv kernel and its reduce), and its dk/dv kernel under attnSplit=0.
{
  const a = { B: 1, T: 64, H: 14, Hkv: 2, D: 64 };
  const qb = () => buf(a.B * a.T * a.H * a.D), kb = () => buf(a.B * a.T * a.Hkv * a.D), rows = () => buf(a.B * a.H * a.T);
  const ab = { q: qb(), k: kb(), v: kb(), lens: storageBuffer(device, "vkstats-lens", new Uint32Array([a.T])), o: qb(), lse: rows(), dout: qb(), dq: qb(), dk: kb(), dv: kb(), delta: rows() };
  await encodeAttentionForward(device, enc, ab, a);
  const sw = perfSwitches();
  for (const attnSplit of [0, 1] as const) {
    setPerfSwitches({ ...sw, attnSplit });
    await encodeAttentionBackward(device, enc, ab, a);
  }
  setPerfSwitches(sw);
}
// The vocabulary head (C 896, a 2,048-word vocabulary: the kernels' tiles do not depend on V) on 64x64 and 128x128
// tiles (switch lm128), forward partials and the backward's dz; then the rank product x A^T (K 4864, r 16) on the narrow kernel.
{
  const d = { N: 256, C: H, V: 2048 };
  const sw = perfSwitches();
  for (const lm128 of [0, 1] as const) {
    setPerfSwitches({ ...sw, lm128 });
    const lb = {
      h: buf(d.N * d.C), w: buf(d.V * d.C), targets: storageBuffer(device, "vkstats-targets", new Uint32Array(d.N)),
      logp: buf(d.N), lse: buf(d.N), entropy: buf(d.N), partials: storageBuffer(device, "vkstats-partials", lmheadPartialsBytes(d)),
    };
    await encodeLmheadForward(device, enc, lb, d);
    await encodeLmheadBackward(device, enc, { ...lb, g: buf(d.N), dh: buf(d.N * d.C), scratch: storageBuffer(device, "vkstats-scratch", lmheadScratchBytes(device, d)) }, d);
  }
  setPerfSwitches(sw);
  const K = 4864;
  await encodeMatmul(device, enc, buf(M * K), buf(r * K), buf(M * r), { M, N: r, K, transB: true });
}
enc.finish();
// The labels go to a file only: Dawn's dump shares stdout, where a line of ours could land inside it.
await Deno.writeTextFile(out, JSON.stringify(labels, null, 1) + "\n");
