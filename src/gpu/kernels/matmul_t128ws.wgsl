// tile128h with a loading warp (switch ws): matmul_t256.wgsl's tile128h (128x128 tiles, the 16x8 block on 16x8
// computing threads) plus one warp of 32 threads that only loads. The tiles are double-buffered in workgroup memory:
// pass s of the loop has the loading warp fetch step s from global memory and store it into buffer s % 2 while the
// computing threads run step s - 1 on the other buffer; one barrier a pass, one pass more than steps. The computing
// threads then never wait on a global load, nor spend instructions on addresses, bounds or tile stores
// (bench/ladder.bench.ts: tile128h without its global loads 13-15% faster, without its tile stores a further 4-9%).
// Registers: the allocation is the computing threads' (~190 on the H200), for 160 threads a workgroup: two workgroups
// still fit a multiprocessor's 64K registers. The loading warp's step, loadStep, is written by matmul.ts (wsSource:
// a loop over its quads, or every quad fetched into a register before any is stored). Same contract, bindings,
// overrides, split-K convention and operand prelude as matmul_t256.wgsl, whose text matmul.ts (wsKernel) fills in at
// the marked lines below (the helpers, the arithmetic, the epilogue), the same tiles and the same fmas in the same order:
// bitwise tile128h's sums. The LoRA tail (matmul_tail256.wgsl) runs on the first buffer after the loop, its loads by the
// computing threads only (the loading warp joins its barriers; its arithmetic there is discarded).

const TM: u32 = 128u; // output tile rows
const TY: u32 = 8u;   // computing threads along the rows
const NT: u32 = 16u * TY; // computing threads
const NL: u32 = 32u;  // loading threads: one warp where subgroups have 32 invocations
const TS: u32 = 128u; // output tile columns
// Contracted-dimension tile: 8, or 16 where matmul.ts substitutes this line (switch tk).
const TK: u32 = 8u;
// Row strides of the tiles in vec4, one spare against bank conflicts of k-fastest fills; matmul.ts drops the spares
// (substituting these two lines) where the device's workgroup memory holds only the unpadded buffers.
const TSVA: u32 = TM / 4u + 1u;
const TSV: u32 = 33u;
const QA: u32 = TM * TK / (4u * NL); // quads of A's tile per loading thread and step
const QB: u32 = TS * TK / (4u * NL); // of B's
const LOADS_A: u32 = TM * TK / NT; // the LoRA tail's elements per computing thread and step
const LOADS: u32 = TS * TK / NT;

var<workgroup> tileA: array<vec4f, 2u * TK * TSVA>; // two (TK, TSVA) tiles: element m of row k at tileA[o + k * TSVA + m / 4][m % 4]
var<workgroup> tileB: array<vec4f, 2u * TK * TSV>;  // two (TK, TSV) tiles

// FETCH_STORE: matmul.ts wsSource puts matmul_t256.wgsl's fetchA, storeA, fetchB and storeB here, the stores taking a buffer offset o.

// LOADSTEP: matmul.ts writes fn loadStep(baseA, baseB, row0, col0, k0, kEnd, lt, oa, ob) here (wsSource).

@compute @workgroup_size(NT + NL)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) tid: u32) {
  let row0 = wg.y * TM;
  let col0 = wg.x * TS;
  let tx = tid % 16u;
  let ty = tid / 16u;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  let kEnd = sliceEnd(wg.z);
  let loader = tid >= NT;
  let lt = tid - NT; // the loading thread's index (unused by the computing threads)
  // ACCUMULATORS: matmul_t256.wgsl's thirty-two (matmul.ts wsSource).
  // Pass s loads step s into buffer s % 2 and computes step s - 1 from the other: one pass more than steps.
  for (var k0 = 0u; k0 < kEnd + TK; k0 += TK) {
    let cur = (k0 / TK) % 2u;
    if (loader) {
      if (k0 < kEnd) { loadStep(baseA, baseB, row0, col0, k0, kEnd, lt, cur * TK * TSVA, cur * TK * TSV); }
    } else if (k0 > 0u) {
      let oa = (1u - cur) * TK * TSVA;
      let ob = (1u - cur) * TK * TSV;
      // ARITHMETIC: matmul_t256.wgsl's step of the 16x8 block, its tile reads offset by oa and ob (matmul.ts wsSource).
    }
    workgroupBarrier();
  }
  // TAIL256: matmul_tail256.wgsl goes here under the switch loraTail (matmul.ts withTail).
  if (tid < NT) {
    // EPILOGUE: matmul_t256.wgsl's stores of the accumulators (matmul.ts wsSource).
  }
}

// STORE4: matmul_t256.wgsl's store4 (matmul.ts wsSource).
