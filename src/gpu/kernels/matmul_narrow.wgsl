// Batched matmul on 64x16 output tiles, for products with a narrow side (LoRA rank r <= 32):
// C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE). Same contract, bindings, element
// type aliases (prepended by matmul.ts) and split-K convention as matmul_common.wgsl. With TRANS_C
// the kernel computes the transposed product and stores element (m, n) at c[n * M + m]: the
// wrapper runs a product with few rows (dA = (dy B)^T x, M = r) as C^T = op(B)^T op(A)^T.
// A 4x32 workgroup computes a 64x16 tile; thread (tx, ty) owns rows ty and ty + 32, columns
// 4 tx .. 4 tx + 3 (two vec4 registers). A 64-wide tile over N = 16 would leave 75% idle.

// Dims, bindings, TRANS_A / TRANS_B / ACCUMULATE, loadA and loadB: matmul_common.wgsl.
override TRANS_C: bool = false;

const TM: u32 = 64u;  // output tile rows
const TN: u32 = 16u;  // output tile columns
const TK: u32 = 16u;  // contracted-dimension tile
const TMP: u32 = 65u; // row stride of tileA: one spare word against bank conflicts of k-fastest fills

var<workgroup> tileA: array<f32, 1040>; // (TK, TMP): tileA[k * TMP + m]
var<workgroup> tileB: array<vec4f, 64>; // (TK, TN / 4): element n of row k at tileB[k * 4 + n / 4][n % 4]

@compute @workgroup_size(4, 32)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TM;
  let col0 = wg.x * TN;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 4u + tx;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  let kEnd = sliceEnd(wg.z);
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
