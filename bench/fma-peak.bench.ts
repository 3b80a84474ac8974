// The FP32 arithmetic a WGSL kernel reaches on this engine, without the memory traffic of a matrix product: the ceiling
// the 128- and 256-tile products (matmul_t128.wgsl, matmul_t256.wgsl) are measured against (issue 16's 35 TFLOP/s).
//   fma     registers only: 16 independent vec4 chains per thread, fma(a, m, c) (64 scalar FMAs an iteration)
//   lds128  matmul_t128.wgsl's inner loop on a workgroup-memory tile filled once: per step 4 vec4 reads (two of A, two of
//           B) and 16 vec4 FMAs into the same sixteen accumulators, 256 threads, the same 16.9 KB of workgroup memory
//   lds256  matmul_t256.wgsl's: per step 6 vec4 reads and 32 vec4 FMAs into thirty-two accumulators, 25.1 KB
// Each kernel writes its sums (so nothing is optimised away); the time is the GPU's (bench/gpu-time.ts timestamp queries),
// `reps` dispatches in one pass. FLOPs = 2 x FMAs.
// Usage: deno run -A bench/fma-peak.bench.ts [iters=4096] [reps=5] [groups=4224] [out=FILE.json]
import { args as benchArgs, webgpu } from "./engine.ts";
import { computePipeline, dispatch, requestGpu, storageBuffer, uniformBuffer } from "../src/gpu/device.ts";
import { timeRun } from "./gpu-time.ts";

const named = new Map(benchArgs.filter((a) => a.includes("=")).map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const iters = Number(named.get("iters") ?? 4096), reps = Number(named.get("reps") ?? 5), groups = Number(named.get("groups") ?? 4224);
const { device, info } = await requestGpu();

const acc = (n: number) => Array.from({ length: n }, (_, i) => `  var r${i} = vec4f(f32(g.x % 7u) * 1e-3 + ${i}.0);`).join("\n");
const sum = (n: number) => Array.from({ length: n }, (_, i) => `r${i}`).join(" + ");
const FMA = `
@group(0) @binding(0) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(1) var<uniform> p: vec4u;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u) {
${acc(16)}
  let m = vec4f(0.999999);
  let c = vec4f(1e-7);
  for (var i = 0u; i < p.x; i++) {
${Array.from({ length: 16 }, (_, i) => `    r${i} = fma(r${i}, m, c);`).join("\n")}
  }
  out[g.x] = ${sum(16)};
}`;
// The tile loops: TK = 16 steps per pass over the tile, as the product kernels at tk=16.
const tileLoop = (rowsVec: number) => {
  const n = rowsVec * 4; // accumulators per thread: rowsVec vec4 of A, each 4 rows x 2 vec4 of B
  const lines: string[] = [];
  for (let g = 0; g < rowsVec; g++) {
    lines.push(`      let a${g} = tileA[kk * TSVA + ${16 * g}u + ty];`);
    ["x", "y", "z", "w"].forEach((c, i) => {
      const r = 4 * g + i;
      lines.push(`      r${r}l = fma(vec4f(a${g}.${c}), b0, r${r}l); r${r}r = fma(vec4f(a${g}.${c}), b1, r${r}r);`);
    });
  }
  return { n, body: lines.join("\n") };
};
const LDS = (rowsVec: number) => {
  const { n, body } = tileLoop(rowsVec);
  const tsva = 16 * rowsVec + 1;
  return `
@group(0) @binding(0) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(1) var<uniform> p: vec4u;
const TK: u32 = 16u;
const TSVA: u32 = ${tsva}u;
const TSV: u32 = 33u;
var<workgroup> tileA: array<vec4f, TK * TSVA>;
var<workgroup> tileB: array<vec4f, TK * TSV>;
@compute @workgroup_size(16, 16)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(local_invocation_id) lid: vec3u, @builtin(local_invocation_index) li: u32) {
  let tx = lid.x;
  let ty = lid.y;
  for (var i = li; i < TK * TSVA; i += 256u) { tileA[i] = vec4f(f32(i % 13u) * 1e-3); }
  for (var i = li; i < TK * TSV; i += 256u) { tileB[i] = vec4f(f32(i % 11u) * 1e-3); }
  workgroupBarrier();
${Array.from({ length: n }, (_, i) => `  var r${i}l = vec4f(0.0); var r${i}r = vec4f(0.0);`).join("\n")}
  for (var it = 0u; it < p.x; it++) {
    for (var kk = 0u; kk < TK; kk++) {
      let b0 = tileB[kk * TSV + tx];
      let b1 = tileB[kk * TSV + 16u + tx];
${body}
    }
  }
  out[g.y * 4096u + g.x] = ${Array.from({ length: n }, (_, i) => `r${i}l + r${i}r`).join(" + ")};
}`;
};

const kernels: { name: string; code: string; wg: [number, number]; fmasPerThreadIter: number }[] = [
  { name: "fma", code: FMA, wg: [groups, 1], fmasPerThreadIter: 64 },
  { name: "lds128", code: LDS(2), wg: [groups, 1], fmasPerThreadIter: 16 * 64 },
  { name: "lds256", code: LDS(4), wg: [groups, 1], fmasPerThreadIter: 16 * 128 },
];
const outBuf = storageBuffer(device, "fma-out", groups * 256 * 16 + 4096 * 16 * 16);
const summary: Record<string, unknown> = { webgpu, adapter: `${info.vendor} ${info.description || info.device}`, iters, reps, groups };
console.log(`fma-peak on ${summary.adapter} (${webgpu}): ${groups} workgroups of 256 threads, ${reps} dispatches per timed pass`);
console.log("| kernel | iterations | ms per dispatch | TFLOP/s |\n|---|---|---|---|");
for (const k of kernels) {
  // The tile loops run 16 steps an iteration: fewer iterations for about the same FMAs per thread.
  const n = k.name === "fma" ? iters : Math.max(1, Math.round((iters * 64) / k.fmasPerThreadIter));
  // A transient (device.ts pools uniform buffers per content): not destroyed here.
  const params = uniformBuffer(device, `fma-${k.name}`, new Uint32Array([n, 0, 0, 0]));
  const pipe = await computePipeline(device, `fma-peak-${k.name}`, k.code);
  const t = await timeRun(device, reps, (enc) => {
    dispatch(device, enc, pipe, [outBuf, params], k.wg);
    return Promise.resolve();
  });
  const flops = 2 * groups * 256 * n * k.fmasPerThreadIter;
  const tf = flops / (t.ms / 1000) / 1e12;
  console.log(`| ${k.name} | ${n} | ${t.ms.toFixed(3)} | ${tf.toFixed(1)} |`);
  summary[k.name] = { iterations: n, ms: t.ms, tflops: tf, timed: t.timed };
}
outBuf.destroy();
if (named.get("out")) await Deno.writeTextFile(named.get("out")!, JSON.stringify(summary, null, 1) + "\n");
console.log(JSON.stringify(summary));
