// Batched, tiled matmul: C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE).
// Dimension letters: M rows of C, N columns of C, K the contracted dimension, b the batch.
// Each 16x16 workgroup computes a 64x64 tile of C; each thread a 4x4 block held in registers.

struct Dims {
  M: u32,
  N: u32,
  K: u32,
  alpha: f32,
  strideA: u32, // elements between batches of A (0 broadcasts one A to every batch)
  strideB: u32, // elements between batches of B
  strideC: u32, // elements between batches of C
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;        // (b, M, K), or (b, K, M) when TRANS_A
@group(0) @binding(1) var<storage, read> b: array<f32>;        // (b, K, N), or (b, N, K) when TRANS_B
@group(0) @binding(2) var<storage, read_write> c: array<f32>;  // (b, M, N)
@group(0) @binding(3) var<uniform> dims: Dims;

override TRANS_A: bool = false;
override TRANS_B: bool = false;
override ACCUMULATE: bool = false;

const TS: u32 = 64u; // output tile edge
const TK: u32 = 16u; // contracted-dimension tile
const RT: u32 = 4u;  // outputs per thread along each edge
// Row stride of the tiles: one spare column, so threads that fill a tile down a column (the
// k-fastest loads below) hit different memory banks instead of all hitting one.
const TSP: u32 = 65u;

var<workgroup> tileA: array<f32, 1040>; // (TK, TSP): tileA[k * TSP + m]
var<workgroup> tileB: array<f32, 1040>; // (TK, TSP): tileB[k * TSP + n]

fn loadA(base: u32, m: u32, k: u32) -> f32 {
  if (m >= dims.M || k >= dims.K) { return 0.0; }
  if (TRANS_A) { return a[base + k * dims.M + m]; }
  return a[base + m * dims.K + k];
}

fn loadB(base: u32, k: u32, n: u32) -> f32 {
  if (k >= dims.K || n >= dims.N) { return 0.0; }
  if (TRANS_B) { return b[base + n * dims.K + k]; }
  return b[base + k * dims.N + n];
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let col0 = wg.x * TS;
  let tid = lid.y * 16u + lid.x;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  var acc: array<f32, 16>;
  for (var k0 = 0u; k0 < dims.K; k0 += TK) {
    // 256 threads load 1024 elements of each tile; the fastest-varying index follows memory order.
    for (var i = 0u; i < 4u; i++) {
      let e = tid + i * 256u;
      var mm: u32; var ka: u32;
      if (TRANS_A) { mm = e % TS; ka = e / TS; } else { ka = e % TK; mm = e / TK; }
      tileA[ka * TSP + mm] = loadA(baseA, row0 + mm, k0 + ka);
      var nn: u32; var kb: u32;
      if (TRANS_B) { kb = e % TK; nn = e / TK; } else { nn = e % TS; kb = e / TS; }
      tileB[kb * TSP + nn] = loadB(baseB, k0 + kb, col0 + nn);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      var av: array<f32, 4>;
      var bv: array<f32, 4>;
      for (var r = 0u; r < RT; r++) {
        av[r] = tileA[kk * TSP + lid.y * RT + r];
        bv[r] = tileB[kk * TSP + lid.x * RT + r];
      }
      for (var r = 0u; r < RT; r++) {
        for (var q = 0u; q < RT; q++) {
          acc[r * RT + q] = fma(av[r], bv[q], acc[r * RT + q]);
        }
      }
    }
    workgroupBarrier();
  }
  let baseC = wg.z * dims.strideC;
  for (var r = 0u; r < RT; r++) {
    let m = row0 + lid.y * RT + r;
    if (m >= dims.M) { continue; }
    for (var q = 0u; q < RT; q++) {
      let n = col0 + lid.x * RT + q;
      if (n >= dims.N) { continue; }
      let idx = baseC + m * dims.N + n;
      var v = dims.alpha * acc[r * RT + q];
      if (ACCUMULATE) { v += c[idx]; }
      c[idx] = v;
    }
  }
}
