// Batched matmul on 64x16 output tiles, for products with a narrow side (LoRA rank r <= 32):
// C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE). Same contract, bindings, element
// type aliases (prepended by matmul.ts) and split-K convention as matmul_t128.wgsl. With TRANS_C
// the kernel computes the transposed product and stores element (m, n) at c[n * M + m]: the
// wrapper runs a product with few rows (dA = (dy B)^T x, M = r) as C^T = op(B)^T op(A)^T.
// A 4x32 workgroup computes a 64x16 tile; thread (tx, ty) owns rows ty and ty + 32, columns
// 4 tx .. 4 tx + 3 (two vec4 registers). A 64-wide tile over N = 16 would leave 75% idle.

struct Dims {
  M: u32,
  N: u32,
  K: u32,
  alpha: f32,
  strideA: u32, // elements between batches of A (0 broadcasts one A to every batch)
  strideB: u32, // elements between batches of B
  strideC: u32, // elements between batches of C
  kTotal: u32,  // 0, or the whole contracted length when batches are split-K slices
}

@group(0) @binding(0) var<storage, read> a: array<AElem>;      // (b, M, K), or (b, K, M) when TRANS_A
@group(0) @binding(1) var<storage, read> b: array<BElem>;      // (b, K, N), or (b, N, K) when TRANS_B
@group(0) @binding(2) var<storage, read_write> c: array<f32>;  // (b, M, N), or (b, N, M) when TRANS_C
@group(0) @binding(3) var<uniform> dims: Dims;

override TRANS_A: bool = false;
override TRANS_B: bool = false;
override TRANS_C: bool = false;
override ACCUMULATE: bool = false;

const TM: u32 = 64u;  // output tile rows
const TN: u32 = 16u;  // output tile columns
const TK: u32 = 16u;  // contracted-dimension tile
const TMP: u32 = 65u; // row stride of tileA: one spare word against bank conflicts of k-fastest fills

var<workgroup> tileA: array<f32, 1040>; // (TK, TMP): tileA[k * TMP + m]
var<workgroup> tileB: array<vec4f, 64>; // (TK, TN / 4): element n of row k at tileB[k * 4 + n / 4][n % 4]

fn loadA(base: u32, m: u32, k: u32, kEnd: u32) -> f32 {
  if (m >= dims.M || k >= kEnd) { return 0.0; }
  if (TRANS_A) { return f32(a[base + k * dims.M + m]); }
  return f32(a[base + m * dims.K + k]);
}

fn loadB(base: u32, k: u32, n: u32, kEnd: u32) -> f32 {
  if (k >= kEnd || n >= dims.N) { return 0.0; }
  if (TRANS_B) { return f32(b[base + n * dims.K + k]); }
  return f32(b[base + k * dims.N + n]);
}

@compute @workgroup_size(4, 32)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TM;
  let col0 = wg.x * TN;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 4u + tx;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  var kEnd = dims.K;
  if (dims.kTotal != 0u) { kEnd = min(dims.K, dims.kTotal - min(dims.kTotal, wg.z * dims.K)); }
  var acc0 = vec4f(0.0);
  var acc1 = vec4f(0.0);
  for (var k0 = 0u; k0 < kEnd; k0 += TK) {
    // 128 threads load the 1024 elements of A's tile and the 256 of B's; memory order fastest.
    for (var i = 0u; i < 8u; i++) {
      let e = tid + i * 128u;
      var mm: u32; var ka: u32;
      if (TRANS_A) { mm = e % TM; ka = e / TM; } else { ka = e % TK; mm = e / TK; }
      tileA[ka * TMP + mm] = loadA(baseA, row0 + mm, k0 + ka, kEnd);
    }
    for (var i = 0u; i < 2u; i++) {
      let e = tid + i * 128u;
      var nn: u32; var kb: u32;
      if (TRANS_B) { kb = e % TK; nn = e / TK; } else { nn = e % TN; kb = e / TN; }
      tileB[kb * 4u + nn / 4u][nn % 4u] = loadB(baseB, k0 + kb, col0 + nn, kEnd);
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      let bv = tileB[kk * 4u + tx];
      acc0 = fma(vec4f(tileA[kk * TMP + ty]), bv, acc0);
      acc1 = fma(vec4f(tileA[kk * TMP + ty + 32u]), bv, acc1);
    }
    workgroupBarrier();
  }
  let baseC = wg.z * dims.strideC;
  store4(baseC, row0 + ty, col0 + 4u * tx, acc0);
  store4(baseC, row0 + ty + 32u, col0 + 4u * tx, acc1);
}

// Writes columns n .. n + 3 of row m (those inside C), transposed when TRANS_C.
fn store4(baseC: u32, m: u32, n: u32, v: vec4f) {
  if (m >= dims.M) { return; }
  for (var q = 0u; q < 4u; q++) {
    let col = n + q;
    if (col < dims.N) {
      var idx = baseC + m * dims.N + col;
      if (TRANS_C) { idx = baseC + col * dims.M + m; }
      var x = dims.alpha * v[q];
      if (ACCUMULATE) { x += c[idx]; }
      c[idx] = x;
    }
  }
}
