// Batched, tiled matmul: C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE).
// Dimension letters: M rows of C, N columns of C, K the contracted dimension, b the batch.
// Each 16x16 workgroup computes a 64x64 tile of C; thread (tx, ty) owns the 4x4 outputs at rows
// ty + 16 r and columns tx + 16 q (interleaved, so neighbouring threads read neighbouring words of
// the tiles and write neighbouring words of C), accumulated in four vec4 registers with the
// k-loop written out (no indexed per-thread arrays, which some compilers keep in local memory).

// Dims, bindings, split-K, TRANS_A / TRANS_B / ACCUMULATE, loadA and loadB: matmul_common.wgsl, after the operand
// prelude (matmul-source.ts).

const TS: u32 = 64u; // output tile edge
const TK: u32 = 16u; // contracted-dimension tile
// Row stride of the tiles: one spare word, so threads that fill a tile down a column (the
// k-fastest loads below) hit different memory banks instead of all hitting one.
const TSP: u32 = 65u;

var<workgroup> tileA: array<f32, 1040>; // (TK, TSP): tileA[k * TSP + m]
var<workgroup> tileB: array<f32, 1040>; // (TK, TSP): tileB[k * TSP + n]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let col0 = wg.x * TS;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 16u + tx;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  let kEnd = sliceEnd(wg.z);
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  var acc2 = vec4f(0.0);
  var acc3 = vec4f(0.0);
  for (var k0 = 0u; k0 < kEnd; k0 += TK) {
    // 256 threads load 1024 elements of each tile; the fastest-varying index follows memory order.
    for (var i = 0u; i < 4u; i++) {
      let e = tid + i * 256u;
      var mm: u32; var ka: u32;
      if (TRANS_A) { mm = e % TS; ka = e / TS; } else { ka = e % TK; mm = e / TK; }
      tileA[ka * TSP + mm] = loadA(baseA, row0 + mm, k0 + ka, kEnd);
      var nn: u32; var kb: u32;
      if (TRANS_B) { kb = e % TK; nn = e / TK; } else { nn = e % TS; kb = e / TS; }
      tileB[kb * TSP + nn] = loadB(baseB, k0 + kb, col0 + nn, kEnd);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      let ra = kk * TSP + ty;
      let rb = kk * TSP + tx;
      let av = vec4f(tileA[ra], tileA[ra + 16u], tileA[ra + 32u], tileA[ra + 48u]);
      let bv = vec4f(tileB[rb], tileB[rb + 16u], tileB[rb + 32u], tileB[rb + 48u]);
      acc0 = fma(vec4f(av.x), bv, acc0);
      acc1 = fma(vec4f(av.y), bv, acc1);
      acc2 = fma(vec4f(av.z), bv, acc2);
      acc3 = fma(vec4f(av.w), bv, acc3);
    }
    workgroupBarrier();
  }
  let baseC = wg.z * dims.strideC;
  storeRow(baseC, row0 + ty, col0 + tx, acc0);
  storeRow(baseC, row0 + ty + 16u, col0 + tx, acc1);
  storeRow(baseC, row0 + ty + 32u, col0 + tx, acc2);
  storeRow(baseC, row0 + ty + 48u, col0 + tx, acc3);
}

// Writes one thread row: columns n, n + 16, n + 32, n + 48 of row m.
fn storeRow(baseC: u32, m: u32, n: u32, v: vec4f) {
  if (m >= dims.M) { return; }
  for (var q = 0u; q < 4u; q++) {
    let col = n + q * 16u;
    if (col < dims.N) {
      let idx = baseC + m * dims.N + col;
      var x = dims.alpha * v[q];
      if (ACCUMULATE) { x += c[idx]; }
      c[idx] = x;
    }
  }
}
