// Batched matmul on 128x128 output tiles: C[b] = alpha * op(A[b]) @ op(B[b]) (+ C[b] when ACCUMULATE).
// Same contract, bindings and split-K convention as matmul.wgsl; the wrapper (matmul.ts) prepends
// the operand prelude (`alias AElem = f32|f16|vec4f;`, B's likewise, with `enable f16;` when either is
// f16; elemA/quadA/VEC_A, matmul_common.wgsl): element types cannot be override constants.
// Products are always accumulated in f32.
// Dimension letters: M rows of C, N columns of C, K the contracted dimension, b the batch.
// A 16x16 workgroup computes a 128x128 tile; thread (tx, ty) owns an 8x8 block: rows 4 ty + i and
// 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j (i, j < 4), held in sixteen vec4 registers.
// Per contracted step it reads two vec4 of A and two of B from workgroup memory for 64 FMAs
// (the 64x64 kernel: eight scalar reads for 16 FMAs).

// Dims, bindings, TRANS_A / TRANS_B / ACCUMULATE, loadA and loadB: matmul_common.wgsl; VEC_A, VEC_B, quadA,
// quadB: the prelude.

const TS: u32 = 128u; // output tile edge
// Contracted-dimension tile: 8, or 16 or 32 where matmul.ts substitutes this line (switch tk: half / a quarter of
// the barriers per k, more workgroup memory; the sum runs in the same k order either way).
const TK: u32 = 8u;
// Row stride of the tiles in vec4: 32 plus one spare, so the k-fastest fills (non-transposed A,
// transposed B) land on distinct banks. 2 x TK x 33 x 16 bytes: 8.4 KiB at TK 8, 16.9 KiB at 16. At 32
// matmul.ts makes it 32 (2 x 32 x 32 x 16 = 32 KiB, the workgroup-memory limit of many devices; those fills then
// meet bank conflicts, the products' reads do not).
const TSV: u32 = 33u;
const LOADS: u32 = TS * TK / 256u; // elements of each tile per thread and step (a multiple of 4: TK is 8, 16 or 32)

var<workgroup> tileA: array<vec4f, TK * TSV>; // (TK, TSV): element m of row k at tileA[k * TSV + m / 4][m % 4]
var<workgroup> tileB: array<vec4f, TK * TSV>; // (TK, TSV): element n of row k at tileB[k * TSV + n / 4][n % 4]

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
  // rXl: row X of the thread's block, left four columns; rXr: the right four.
  var r0l = vec4f(0.0); var r0r = vec4f(0.0); var r1l = vec4f(0.0); var r1r = vec4f(0.0);
  var r2l = vec4f(0.0); var r2r = vec4f(0.0); var r3l = vec4f(0.0); var r3r = vec4f(0.0);
  var r4l = vec4f(0.0); var r4r = vec4f(0.0); var r5l = vec4f(0.0); var r5r = vec4f(0.0);
  var r6l = vec4f(0.0); var r6r = vec4f(0.0); var r7l = vec4f(0.0); var r7r = vec4f(0.0);
  for (var k0 = 0u; k0 < kEnd; k0 += TK) {
    // 256 threads load the TS x TK elements of each tile; the fastest-varying index follows memory order.
    // Scalar (VEC_X false): LOADS bounds-checked elements of each tile per thread.
    for (var i = 0u; i < LOADS; i++) {
      let e = tid + i * 256u;
      if (!VEC_A) {
        var mm: u32; var ka: u32;
        if (TRANS_A) { mm = e % TS; ka = e / TS; } else { ka = e % TK; mm = e / TK; }
        tileA[ka * TSV + mm / 4u][mm % 4u] = loadA(baseA, row0 + mm, k0 + ka, kEnd);
      }
      if (!VEC_B) {
        var nn: u32; var kb: u32;
        if (TRANS_B) { kb = e % TK; nn = e / TK; } else { nn = e % TS; kb = e / TS; }
        tileB[kb * TSV + nn / 4u][nn % 4u] = loadB(baseB, k0 + kb, col0 + nn, kEnd);
      }
    }
    // Vectorised (VEC_X true, switch vload; matmul.ts vecLoads checks the layout): LOADS / 4 vec4 of each tile per
    // thread, along the operand's memory-fastest dimension, scattered into the same tile elements as the scalar loads.
    // A vec4 is wholly inside or outside the valid range: the rows along it are a multiple of 4 long, and a k-fastest
    // operand's slices start and end on multiples of 4 (vecLoads refuses it otherwise); outside, it is zeros.
    for (var j = 0u; j < LOADS / 4u; j++) {
      let q = tid + j * 256u;
      if (VEC_A) {
        if (TRANS_A) {
          // A (K, M): quad q is m = 4 (q % 32) .. + 3 of row k = q / 32, one vec4 of the tile row.
          let mq = q % (TS / 4u); let ka = q / (TS / 4u);
          let m = row0 + 4u * mq; let k = k0 + ka;
          var v = vec4f(0.0);
          if (m < dims.M && k < kEnd) { v = quadA((baseA + k * dims.M + m) / 4u); }
          tileA[ka * TSV + mq] = v;
        } else {
          // A (M, K): quad q is k = 4 (q % (TK / 4)) .. + 3 of row m = q / (TK / 4), one element of four tile rows.
          let ka = 4u * (q % (TK / 4u)); let mm = q / (TK / 4u);
          let m = row0 + mm; let k = k0 + ka;
          var v = vec4f(0.0);
          if (m < dims.M && k < kEnd) { v = quadA((baseA + m * rowK() + k) / 4u); }
          let t = ka * TSV + mm / 4u; let l = mm % 4u;
          tileA[t][l] = v.x; tileA[t + TSV][l] = v.y; tileA[t + 2u * TSV][l] = v.z; tileA[t + 3u * TSV][l] = v.w;
        }
      }
      if (VEC_B) {
        if (TRANS_B) {
          // B (N, K): quad q is k = 4 (q % (TK / 4)) .. + 3 of row n = q / (TK / 4).
          let kb = 4u * (q % (TK / 4u)); let nn = q / (TK / 4u);
          let n = col0 + nn; let k = k0 + kb;
          var v = vec4f(0.0);
          if (n < dims.N && k < kEnd) { v = quadB((baseB + n * rowK() + k) / 4u); }
          let t = kb * TSV + nn / 4u; let l = nn % 4u;
          tileB[t][l] = v.x; tileB[t + TSV][l] = v.y; tileB[t + 2u * TSV][l] = v.z; tileB[t + 3u * TSV][l] = v.w;
        } else {
          // B (K, N): quad q is n = 4 (q % 32) .. + 3 of row k = q / 32.
          let nq = q % (TS / 4u); let kb = q / (TS / 4u);
          let n = col0 + 4u * nq; let k = k0 + kb;
          var v = vec4f(0.0);
          if (n < dims.N && k < kEnd) { v = quadB((baseB + k * dims.N + n) / 4u); }
          tileB[kb * TSV + nq] = v;
        }
      }
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      let a0 = tileA[kk * TSV + ty];
      let a1 = tileA[kk * TSV + 16u + ty];
      let b0 = tileB[kk * TSV + tx];
      let b1 = tileB[kk * TSV + 16u + tx];
      r0l = fma(vec4f(a0.x), b0, r0l); r0r = fma(vec4f(a0.x), b1, r0r);
      r1l = fma(vec4f(a0.y), b0, r1l); r1r = fma(vec4f(a0.y), b1, r1r);
      r2l = fma(vec4f(a0.z), b0, r2l); r2r = fma(vec4f(a0.z), b1, r2r);
      r3l = fma(vec4f(a0.w), b0, r3l); r3r = fma(vec4f(a0.w), b1, r3r);
      r4l = fma(vec4f(a1.x), b0, r4l); r4r = fma(vec4f(a1.x), b1, r4r);
      r5l = fma(vec4f(a1.y), b0, r5l); r5r = fma(vec4f(a1.y), b1, r5r);
      r6l = fma(vec4f(a1.z), b0, r6l); r6r = fma(vec4f(a1.z), b1, r6r);
      r7l = fma(vec4f(a1.w), b0, r7l); r7r = fma(vec4f(a1.w), b1, r7r);
    }
    workgroupBarrier();
  }
  // TAIL: matmul_tail.wgsl goes here under the switch loraTail (matmul.ts withTail).
  let baseC = wg.z * dims.strideC;
  let m0 = row0 + 4u * ty;
  let m1 = row0 + 64u + 4u * ty;
  let n0 = col0 + 4u * tx;
  let n1 = col0 + 64u + 4u * tx;
  store4(baseC, m0, n0, r0l); store4(baseC, m0, n1, r0r);
  store4(baseC, m0 + 1u, n0, r1l); store4(baseC, m0 + 1u, n1, r1r);
  store4(baseC, m0 + 2u, n0, r2l); store4(baseC, m0 + 2u, n1, r2r);
  store4(baseC, m0 + 3u, n0, r3l); store4(baseC, m0 + 3u, n1, r3r);
  store4(baseC, m1, n0, r4l); store4(baseC, m1, n1, r4r);
  store4(baseC, m1 + 1u, n0, r5l); store4(baseC, m1 + 1u, n1, r5r);
  store4(baseC, m1 + 2u, n0, r6l); store4(baseC, m1 + 2u, n1, r6r);
  store4(baseC, m1 + 3u, n0, r7l); store4(baseC, m1 + 3u, n1, r7r);
}

// Writes columns n .. n + 3 of row m (those inside C).
fn store4(baseC: u32, m: u32, n: u32, v: vec4f) {
  if (m >= dims.M) { return; }
  for (var q = 0u; q < 4u; q++) {
    let col = n + q;
    if (col < dims.N) {
      let idx = baseC + m * dims.N + col;
      var x = dims.alpha * v[q];
      if (ACCUMULATE) { x += c[idx]; }
      c[idx] = x;
    }
  }
}
