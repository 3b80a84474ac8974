// tile96h: C (b, M, N) = alpha op(A) op(B) on 96x128 tiles, 16x8 threads, a 12x8 block of C per thread (rows
// 4 TY g + 4 ty + i for g < 3, i < 4; columns 4 tx + j and 64 + 4 tx + j, j < 4; twenty-four vec4 accumulators).
// A template (matmul-source.ts fills it; its variables: docs/kernels.md, "Matmul"). matmul.ts prepends the operand
// prelude and matmul_common.wgsl. Loads move quads: four consecutive elements along an operand's memory-fastest
// dimension (A: k, or m when transposed; B: n, or k when transposed), one vec4 load where the operand binds as vec4
// (VEC_X), else four bounds-checked scalars. A k-fastest quad spreads over four tile rows.
// over four tile rows.
// #if TAIL
// #include matmul_tail_prelude.wgsl
// #endif

const TM: u32 = 96u; // output tile rows
const TY: u32 = 8u;  // threads along the rows
const NT: u32 = 16u * TY; // threads
const TS: u32 = 128u; // output tile columns
// Contracted-dimension tile: 16, or 8 where the device's workgroup memory is short.
const TK: u32 = {{TK}}u;
const TSVA: u32 = TM / 4u + 1u; // row stride of tileA in vec4: one spare against bank conflicts of k-fastest fills
const TSV: u32 = 33u;  // row stride of tileB in vec4
// #if STEP8
const QA: u32 = (TM * TK / 4u + NT - 1u) / NT; // quads of the A tile per thread and step
// #else
const QA: u32 = TM * TK / (4u * NT); // quads of the A tile per thread and step
// #endif
const QB: u32 = TS * TK / (4u * NT); // of the B tile
const LOADS_A: u32 = TM * TK / NT; // elements per thread and step (the tail's scalar loads)
const LOADS: u32 = TS * TK / NT;

var<workgroup> tileA: array<vec4f, TK * TSVA>; // (TK, TSVA): element m of row k at tileA[k * TSVA + m / 4][m % 4]
var<workgroup> tileB: array<vec4f, TK * TSV>;  // (TK, TSV): element n of row k at tileB[k * TSV + n / 4][n % 4]

// Quad q (< TM TK / 4) of A's tile at rows row0.., contracted step k0: zeros outside the valid rows and slice.
fn fetchA(baseA: u32, row0: u32, k0: u32, kEnd: u32, q: u32) -> vec4f {
  if (TRANS_A) {
    // A (K, M): m = 4 (q % (TM / 4)) .. + 3 of row k = q / (TM / 4).
    let m = row0 + 4u * (q % (TM / 4u)); let k = k0 + q / (TM / 4u);
    if (VEC_A) {
      if (m < dims.M && k < kEnd) { return quadA((baseA + k * dims.M + m) / 4u); }
      return vec4f(0.0);
    }
    return vec4f(loadA(baseA, m, k, kEnd), loadA(baseA, m + 1u, k, kEnd), loadA(baseA, m + 2u, k, kEnd), loadA(baseA, m + 3u, k, kEnd));
  }
  // A (M, K): k = 4 (q % (TK / 4)) .. + 3 of row m = q / (TK / 4).
  let m = row0 + q / (TK / 4u); let k = k0 + 4u * (q % (TK / 4u));
  if (VEC_A) {
    if (m < dims.M && k < kEnd) { return quadA((baseA + m * rowK() + k) / 4u); }
    return vec4f(0.0);
  }
  return vec4f(loadA(baseA, m, k, kEnd), loadA(baseA, m, k + 1u, kEnd), loadA(baseA, m, k + 2u, kEnd), loadA(baseA, m, k + 3u, kEnd));
}

fn storeA(q: u32, v: vec4f) {
  if (TRANS_A) {
    tileA[(q / (TM / 4u)) * TSVA + q % (TM / 4u)] = v;
    return;
  }
  let mm = q / (TK / 4u);
  let t = 4u * (q % (TK / 4u)) * TSVA + mm / 4u; let l = mm % 4u;
  tileA[t][l] = v.x; tileA[t + TSVA][l] = v.y; tileA[t + 2u * TSVA][l] = v.z; tileA[t + 3u * TSVA][l] = v.w;
}

// Quad q (< TS TK / 4) of B's tile at columns col0.., step k0.
fn fetchB(baseB: u32, col0: u32, k0: u32, kEnd: u32, q: u32) -> vec4f {
  if (TRANS_B) {
    // B (N, K): k = 4 (q % (TK / 4)) .. + 3 of row n = q / (TK / 4).
    let n = col0 + q / (TK / 4u); let k = k0 + 4u * (q % (TK / 4u));
    if (VEC_B) {
      if (n < dims.N && k < kEnd) { return quadB((baseB + n * rowK() + k) / 4u); }
      return vec4f(0.0);
    }
    return vec4f(loadB(baseB, k, n, kEnd), loadB(baseB, k + 1u, n, kEnd), loadB(baseB, k + 2u, n, kEnd), loadB(baseB, k + 3u, n, kEnd));
  }
  // B (K, N): n = 4 (q % 32) .. + 3 of row k = q / 32.
  let n = col0 + 4u * (q % (TS / 4u)); let k = k0 + q / (TS / 4u);
  if (VEC_B) {
    if (n < dims.N && k < kEnd) { return quadB((baseB + k * dims.N + n) / 4u); }
    return vec4f(0.0);
  }
  return vec4f(loadB(baseB, k, n, kEnd), loadB(baseB, k, n + 1u, kEnd), loadB(baseB, k, n + 2u, kEnd), loadB(baseB, k, n + 3u, kEnd));
}

fn storeB(q: u32, v: vec4f) {
  if (!TRANS_B) {
    tileB[(q / (TS / 4u)) * TSV + q % (TS / 4u)] = v;
    return;
  }
  let nn = q / (TK / 4u);
  let t = 4u * (q % (TK / 4u)) * TSV + nn / 4u; let l = nn % 4u;
  tileB[t][l] = v.x; tileB[t + TSV][l] = v.y; tileB[t + 2u * TSV][l] = v.z; tileB[t + 3u * TSV][l] = v.w;
}

@compute @workgroup_size(16, TY)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TM;
  let col0 = wg.x * TS;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 16u + tx;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  let kEnd = sliceEnd(wg.z);
  var r0l = vec4f(0.0); var r0r = vec4f(0.0);
  var r1l = vec4f(0.0); var r1r = vec4f(0.0);
  var r2l = vec4f(0.0); var r2r = vec4f(0.0);
  var r3l = vec4f(0.0); var r3r = vec4f(0.0);
  var r4l = vec4f(0.0); var r4r = vec4f(0.0);
  var r5l = vec4f(0.0); var r5r = vec4f(0.0);
  var r6l = vec4f(0.0); var r6r = vec4f(0.0);
  var r7l = vec4f(0.0); var r7r = vec4f(0.0);
  var r8l = vec4f(0.0); var r8r = vec4f(0.0);
  var r9l = vec4f(0.0); var r9r = vec4f(0.0);
  var r10l = vec4f(0.0); var r10r = vec4f(0.0);
  var r11l = vec4f(0.0); var r11r = vec4f(0.0);
  for (var k0 = 0u; k0 < kEnd; k0 += TK) {
// #if STEP8
    for (var j = 0u; j < QA; j++) { if (tid + j * NT < TM * TK / 4u) { storeA(tid + j * NT, fetchA(baseA, row0, k0, kEnd, tid + j * NT)); } }
// #else
    for (var j = 0u; j < QA; j++) { storeA(tid + j * NT, fetchA(baseA, row0, k0, kEnd, tid + j * NT)); }
// #endif
    for (var j = 0u; j < QB; j++) { storeB(tid + j * NT, fetchB(baseB, col0, k0, kEnd, tid + j * NT)); }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      // #include matmul_t96h_fma.wgsl
    }
    workgroupBarrier();
  }
// #if TAIL
// #include matmul_t96h_tail.wgsl
// #endif
  let baseC = wg.z * dims.strideC;
  let n0 = col0 + 4u * tx;
  let n1 = col0 + 64u + 4u * tx;
  let m0 = row0 + 4u * ty;
  store4(baseC, m0, n0, r0l); store4(baseC, m0, n1, r0r);
  store4(baseC, m0 + 1u, n0, r1l); store4(baseC, m0 + 1u, n1, r1r);
  store4(baseC, m0 + 2u, n0, r2l); store4(baseC, m0 + 2u, n1, r2r);
  store4(baseC, m0 + 3u, n0, r3l); store4(baseC, m0 + 3u, n1, r3r);
  let m1 = row0 + 4u * TY * 1u + 4u * ty;
  store4(baseC, m1, n0, r4l); store4(baseC, m1, n1, r4r);
  store4(baseC, m1 + 1u, n0, r5l); store4(baseC, m1 + 1u, n1, r5r);
  store4(baseC, m1 + 2u, n0, r6l); store4(baseC, m1 + 2u, n1, r6r);
  store4(baseC, m1 + 3u, n0, r7l); store4(baseC, m1 + 3u, n1, r7r);
  let m2 = row0 + 4u * TY * 2u + 4u * ty;
  store4(baseC, m2, n0, r8l); store4(baseC, m2, n1, r8r);
  store4(baseC, m2 + 1u, n0, r9l); store4(baseC, m2 + 1u, n1, r9r);
  store4(baseC, m2 + 2u, n0, r10l); store4(baseC, m2 + 2u, n1, r10r);
  store4(baseC, m2 + 3u, n0, r11l); store4(baseC, m2 + 3u, n1, r11r);
}

// #if C4
// Writes columns n .. n + 3 of row m as one vec4 (N is a multiple of 4: the quad lies wholly inside or outside C).
fn store4(baseC: u32, m: u32, n: u32, v: vec4f) {
  if (m >= dims.M || n >= dims.N) { return; }
  let idx = (baseC + m * dims.N + n) / 4u;
  var x = dims.alpha * v;
  if (ACCUMULATE) { x += c[idx]; }
  c[idx] = x;
}
// #else
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
// #endif
