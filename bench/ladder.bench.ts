// Benchmark (not a test): where tile128h's time goes on a product, rung by rung (llm.c's method: take parts away and
// time what is left). The kernel is matmul_t256.wgsl as tile128h at a step of 16 with vec4 loads (what the defaults run
// for the big f32 products), its text edited per rung; every rung runs the product's grid, steps and epilogue:
//   real      the kernel as the defaults build it (through encodeMatmul)
//   text      the same kernel built here from its text (checks that this bench builds what the trainer runs)
//   fetch1st  each step's quads all fetched into registers before any is stored (the same sums)
//   swizzle   the tiles' columns permuted per row group so that the k-fastest (transposing) stores meet no bank
//             conflicts (SWZ_STORES below; the same sums)
//   stores    each step stores values computed in registers instead of loaded ones: no global loads in the loop
//   barriers  the tiles filled once before the loop; the loop keeps its two barriers a step
//   inner     the tiles filled once and no barrier in the loop: the 16x8 block's arithmetic, the epilogue, the grid
//   long      inner with 8x the contracted steps per workgroup (the workgroup's fixed costs spread thinner)
//   sum       inner with one store a thread instead of the epilogue's 128
// The gaps name the costs: real - stores the global loads, stores - barriers the tile stores, barriers - inner the
// barriers. Products (M = tokens): dx of down (A k-fastest, B row-fastest: what the f32 forward and backward run) and
// gate/up x W^T (B k-fastest, transposed). TFLOP/s = 2 M N K / time; best of `rounds` interleaved rounds of `iters`
// dispatches in one timed pass (bench/gpu-time.ts).
// Usage: deno run -A bench/ladder.bench.ts [tokens=6144] [iters=20] [rounds=3] [out=FILE.json]
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { computePipeline, dispatch, readF32, requestGpu, storageBuffer, uniformBuffer } from "../src/gpu/device.ts";
import { encodeMatmul, type EncodeMatmulOpts, halfThreads, pickMatmul, splitKSlices, typedSource, withStep } from "../src/gpu/kernels/matmul.ts";
import source256 from "../src/gpu/kernels/matmul_t256.wgsl" with { type: "text" };
import { timeRun } from "./gpu-time.ts";

const named = new Map(benchArgs.filter((a) => a.includes("=")).map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const M = Number(named.get("tokens") ?? 6144), iters = Number(named.get("iters") ?? 20), rounds = Number(named.get("rounds") ?? 3);
const { device, info } = await requestGpu();

/** The pieces of matmul_t256.wgsl's main loop the rungs edit; each must be found exactly once. */
const LOAD_A = "    for (var j = 0u; j < QA; j++) { storeA(tid + j * NT, fetchA(baseA, row0, k0, kEnd, tid + j * NT)); }\n";
const LOAD_B = "    for (var j = 0u; j < QB; j++) { storeB(tid + j * NT, fetchB(baseB, col0, k0, kEnd, tid + j * NT)); }\n";
const LOOP = "  for (var k0 = 0u; k0 < kEnd; k0 += TK) {\n";
const BARRIER = "    workgroupBarrier();\n";

function once(text: string, what: string, by: string): string {
  const at = text.indexOf(what);
  if (at < 0 || text.indexOf(what, at + 1) >= 0) throw new Error(`ladder: '${what.trim()}' is not in matmul_t256.wgsl exactly once`);
  return text.slice(0, at) + by + text.slice(at + what.length);
}

// Quads of values that change with the step, so that the compiler keeps every store (and cannot hoist them); `seed`, one
// load of each operand before the loop, keeps both bindings in the pipeline's layout.
const SEED = "  let seed = quadA(0u).x + quadB(0u).x;\n";
const MADE_A = "    for (var j = 0u; j < QA; j++) { storeA(tid + j * NT, vec4f(f32(k0 + j + tid) * 1e-3 + seed)); }\n";
const MADE_B = "    for (var j = 0u; j < QB; j++) { storeB(tid + j * NT, vec4f(f32(k0 + 2u * j + tid) * 1e-3 + seed)); }\n";
const PREFILL = "  for (var j = 0u; j < QA; j++) { storeA(tid + j * NT, vec4f(f32(j + tid) * 1e-3 + seed)); }\n" +
  "  for (var j = 0u; j < QB; j++) { storeB(tid + j * NT, vec4f(f32(2u * j + tid) * 1e-3 + seed)); }\n  workgroupBarrier();\n";

// Conflict-free tile stores: a k-fastest quad's four elements go to four tile rows, and at TK = 16 the 32 threads of a
// warp store into rows 4 kq + c (kq < 4) whose padded starts (132 words apart) meet on the same banks two by two. Column
// (vec4) c of tile row k moves to c ^ swz(k), swz(k) = 2 (k / 4): the four row groups land on disjoint banks. Every
// store and read of both tiles takes the same permutation (within 8 vec4, so rows stay in bounds): the same sums.
const SWZ_STORES = `fn swz(k: u32) -> u32 { return 2u * ((k / 4u) % 4u); }

fn storeA(q: u32, v: vec4f) {
  if (TRANS_A) {
    let k = q / (TM / 4u);
    tileA[k * TSVA + ((q % (TM / 4u)) ^ swz(k))] = v;
    return;
  }
  let mm = q / (TK / 4u);
  let k = 4u * (q % (TK / 4u));
  let t = k * TSVA + ((mm / 4u) ^ swz(k)); let l = mm % 4u;
  tileA[t][l] = v.x; tileA[t + TSVA][l] = v.y; tileA[t + 2u * TSVA][l] = v.z; tileA[t + 3u * TSVA][l] = v.w;
}

fn storeB(q: u32, v: vec4f) {
  if (!TRANS_B) {
    let k = q / (TS / 4u);
    tileB[k * TSV + ((q % (TS / 4u)) ^ swz(k))] = v;
    return;
  }
  let nn = q / (TK / 4u);
  let k = 4u * (q % (TK / 4u));
  let t = k * TSV + ((nn / 4u) ^ swz(k)); let l = nn % 4u;
  tileB[t][l] = v.x; tileB[t + TSV][l] = v.y; tileB[t + 2u * TSV][l] = v.z; tileB[t + 3u * TSV][l] = v.w;
}
`;
function swizzled(b: string): string {
  const fnStart = (name: string) => b.indexOf(`fn ${name}(q: u32, v: vec4f) {`);
  const fnEnd = (at: number) => b.indexOf("\n}\n", at) + 3;
  const a0 = fnStart("storeA"), a1 = fnEnd(a0), b0 = fnStart("storeB"), b1 = fnEnd(b0);
  if (a0 < 0 || b0 < a1) throw new Error("ladder: storeA / storeB not where expected in matmul_t256.wgsl");
  let out = b.slice(0, a0) + SWZ_STORES + b.slice(a1, b0) + b.slice(b1);
  out = once(out, "tileB[kk * TSV + tx]", "tileB[kk * TSV + (tx ^ swz(kk))]");
  out = once(out, "tileB[kk * TSV + 16u + tx]", "tileB[kk * TSV + ((16u + tx) ^ swz(kk))]");
  out = once(out, "tileA[kk * TSVA + ty]", "tileA[kk * TSVA + (ty ^ swz(kk))]");
  for (const g of [1, 2, 3]) out = once(out, `tileA[kk * TSVA + TY * ${g}u + ty]`, `tileA[kk * TSVA + ((TY * ${g}u + ty) ^ swz(kk))]`);
  return out;
}

/** The tiles filled once before the loop, no tile loads or stores in it (the barriers rung, and the inner rung's start). */
function prefilled(b: string): string {
  return once(once(once(b, LOAD_A, ""), LOAD_B, ""), LOOP, SEED + PREFILL + LOOP);
}

/** The inner rung (the tiles filled once, no barrier in the loop). */
function innerOf(b: string): string {
  const out = prefilled(b);
  const loop = out.indexOf(LOOP);
  const tail = out.indexOf("// TAIL256");
  const inLoop = out.slice(loop, tail).split(BARRIER);
  if (inLoop.length !== 3) throw new Error("ladder: the main loop should hold two barriers");
  return out.slice(0, loop) + inLoop.join("") + out.slice(tail);
}

// The two rungs past inner split what is left between it (42-43 TFLOP/s on the H200) and the 16x8 block's inner loop
// alone (fma-peak lds256, 50.9): `long` runs LONG times the contracted steps per workgroup on the same grid (the
// fixed costs of a workgroup, its start, first steps and epilogue, spread over LONG x the arithmetic; counted as LONG x
// the FLOPs), `sum` keeps inner's steps but ends with one store a thread (the sum of its accumulators) instead of
// the 128 bounds-checked stores of the epilogue.
const LONG = 8;
const EPILOGUE = "  let baseC = wg.z * dims.strideC;\n";
function summed(b: string): string {
  const at = b.indexOf(EPILOGUE);
  const end = b.indexOf("\n}\n", at);
  if (at < 0 || end < 0) throw new Error("ladder: the epilogue is not where expected in matmul_t256.wgsl");
  const regs = Array.from({ length: 16 }, (_, i) => `r${i}l + r${i}r`).join(" + ");
  // (grid x <= 38 here: 64 columns of workgroups keep the indices apart)
  return b.slice(0, at) + `  let s = ${regs};\n  c[(wg.y * 64u + wg.x) * NT + tid] = s.x + s.y + s.z + s.w;` + b.slice(end);
}

const rungs: Record<string, (body: string) => string> = {
  text: (b) => b,
  fetch1st: (b) =>
    once(once(b, LOAD_A, "    var qa: array<vec4f, QA>;\n    var qb: array<vec4f, QB>;\n" +
      "    for (var j = 0u; j < QA; j++) { qa[j] = fetchA(baseA, row0, k0, kEnd, tid + j * NT); }\n" +
      "    for (var j = 0u; j < QB; j++) { qb[j] = fetchB(baseB, col0, k0, kEnd, tid + j * NT); }\n" +
      "    for (var j = 0u; j < QA; j++) { storeA(tid + j * NT, qa[j]); }\n"), LOAD_B, "    for (var j = 0u; j < QB; j++) { storeB(tid + j * NT, qb[j]); }\n"),
  swizzle: swizzled,
  stores: (b) => once(once(once(b, LOAD_A, MADE_A), LOAD_B, MADE_B), LOOP, SEED + LOOP),
  barriers: prefilled,
  inner: innerOf,
  long: (b) => once(innerOf(b), "  for (var k0 = 0u; k0 < kEnd; k0 += TK) {\n", `  for (var k0 = 0u; k0 < ${LONG}u * kEnd; k0 += TK) {\n`),
  sum: (b) => summed(innerOf(b)),
};
/** FLOPs a rung does relative to the product's. */
const work = (rung: string) => rung === "long" ? LONG : 1;

const products: [string, EncodeMatmulOpts][] = [
  ["dx = dy W (down)", { M, N: 4864, K: 896 }],
  ["gate/up x W^T", { M, N: 4864, K: 896, transB: true }],
];
const rng = new Rng(5);
const bufA = storageBuffer(device, "ladder-a", rng.uniformArray(M * 4864));
const bufB = storageBuffer(device, "ladder-b", rng.uniformArray(4864 * 4864));
const bufC = storageBuffer(device, "ladder-c", M * 4864 * 4);
const base = withStep(source256, 16, "matmul_t256.wgsl");
const summary: Record<string, unknown> = { webgpu, adapter: `${info.vendor} ${info.description || info.device}`, M, iters, rounds };
const best = new Map<string, number>();
const runs: { key: string; run: (enc: GPUCommandEncoder) => Promise<void> }[] = [];
for (const [name, o] of products) {
  const pick = pickMatmul(o);
  if (pick.variant !== "tile128h" || splitKSlices(o) > 1) throw new Error(`ladder: ${name} runs ${pick.variant} split ${splitKSlices(o)}, not unsplit tile128h (run with the default switches)`);
  runs.push({ key: `${name}\u0000real`, run: (enc) => encodeMatmul(device, enc, bufA, bufB, bufC, o) });
  // Dims (matmul_common.wgsl): M, N, K, alpha = 1 (as f32 bits), no batch strides, not split.
  const dims = uniformBuffer(device, `ladder-${name}`, new Uint32Array([o.M, o.N, o.K, 0x3f800000, 0, 0, 0, 0]));
  for (const [rung, edit] of Object.entries(rungs)) {
    const code = typedSource(halfThreads(edit(base)), false, false, { a: true, b: true });
    const pipe = await computePipeline(device, `ladder-${rung}`, code, { TRANS_A: 0, TRANS_B: o.transB ? 1 : 0, ACCUMULATE: 0 });
    const grid: [number, number, number] = [Math.ceil(o.N / 128), Math.ceil(o.M / 128), 1];
    runs.push({ key: `${name}\u0000${rung}`, run: (enc) => Promise.resolve(dispatch(device, enc, pipe, [bufA, bufB, bufC, dims], grid)) });
  }
}
// The rungs that keep the product (text, fetch1st, swizzle) must give real's bits: a check that their edits changed only
// the order of the loads and where the tiles keep their elements.
const result = async (key: string) => {
  const enc = device.createCommandEncoder();
  await runs.find((x) => x.key === key)!.run(enc);
  device.queue.submit([enc.finish()]);
  return await readF32(device, bufC);
};
for (const [name] of products) {
  const want = await result(`${name}\u0000real`);
  for (const rung of ["text", "fetch1st", "swizzle"]) {
    const got = await result(`${name}\u0000${rung}`);
    const bad = got.findIndex((x, i) => !Object.is(x, want[i]));
    if (bad >= 0) throw new Error(`ladder: ${name} ${rung} differs from the trainer's kernel at element ${bad}: ${got[bad]} against ${want[bad]}`);
  }
}
for (let r = 0; r < rounds; r++) {
  for (const x of runs) {
    const t = await timeRun(device, iters, x.run);
    best.set(x.key, Math.min(best.get(x.key) ?? Infinity, t.ms));
  }
}
const names = ["real", ...Object.keys(rungs)];
console.log(`ladder on ${summary.adapter} (${webgpu}): tile128h, step 16, vec4 loads; TFLOP/s, best of ${rounds} rounds of ${iters} dispatches`);
console.log(`| product | M x N x K | ${names.join(" | ")} |\n|---|---|${names.map(() => "---").join("|")}|`);
for (const [name, o] of products) {
  const flops = 2 * o.M * o.N * o.K;
  const cells = names.map((n) => {
    const ms = best.get(`${name}\u0000${n}`) ?? NaN;
    const tflops = (work(n) * flops) / (ms / 1000) / 1e12;
    summary[`${name} ${n}`] = { ms, tflops };
    return tflops.toFixed(1);
  });
  console.log(`| ${name} | ${o.M}x${o.N}x${o.K} | ${cells.join(" | ")} |`);
}
for (const b of [bufA, bufB, bufC]) b.destroy();
if (named.get("out")) await Deno.writeTextFile(named.get("out")!, JSON.stringify(summary, null, 1) + "\n");
console.log(JSON.stringify(summary));
