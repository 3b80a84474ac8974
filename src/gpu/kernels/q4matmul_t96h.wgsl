// y (N, Nout) = x (N, K) @ dequant(W)^T (+ bias), W in onnxruntime's MatMulNBits layout (4 bits, block 32), on
// 96x128 output tiles with 16x8 threads, each a 12x8 block of y (rows 32 g + 4 ty + i, g < 3, i < 4; columns 4 tx + j
// and 64 + 4 tx + j): q4 on the f32 tile96h's tile and block (matmul_t256.wgsl under the switch t96; this is the
// switch q4t96's kernel, in case 96 accumulators leave room for three workgroups a multiprocessor with the dequantising
// loader too). One thread per output row of W dequantises its TK nibbles of the step (one u32 word at TK 8, two at 16).
// Dims and W's bindings: q4matmul_common.wgsl.

@group(0) @binding(0) var<storage, read> x: array<f32>;            // (N, K)
@group(0) @binding(4) var<storage, read_write> y: array<f32>;      // (N, Nout)
@group(0) @binding(6) var<storage, read> bias: array<f32>;         // (Nout); unused unless HAS_BIAS

override HAS_BIAS: bool = false;

var<private> slice: u32; // the split-K slice (0 when not split): its partial lands at slice * N * Nout; the bias goes in slice 0

// Contracted step: 8 (one word of nibbles per W row), or 16 (two words) where q4matmul.ts substitutes this line.
const TK: u32 = 8u;
const TM: u32 = 96u;  // output tile rows
const TY: u32 = 8u;   // threads along the rows
const NT: u32 = 16u * TY; // threads: 128
const TS: u32 = 128u; // output tile columns
const TSVA: u32 = TM / 4u + 1u; // row stride of tileA in vec4 (24 + 1 against bank conflicts of k-fastest fills)
const TSV: u32 = 33u;           // row stride of tileB in vec4
const LOADS_A: u32 = TM * TK / NT; // A elements per thread and step (also the tail's)
const LOADS: u32 = TS * TK / NT;   // the tail's B elements per thread and step

var<workgroup> tileA: array<vec4f, TK * TSVA>; // (TK, TSVA): element m of row k at tileA[k * TSVA + m / 4][m % 4]
var<workgroup> tileB: array<vec4f, TK * TSV>;  // (TK, TSV): element n of row k at tileB[k * TSV + n / 4][n % 4]

@compute @workgroup_size(16, TY)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  slice = wg.z;
  let kEnd = sliceEnd(wg.z, dims.K);
  let row0 = wg.y * TM;
  let col0 = wg.x * TS;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 16u + tx;
  // W loader: thread tid dequantises row nG = col0 + tid of W.
  let nG = col0 + tid;
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
  for (var k0 = sliceBegin(wg.z); k0 < kEnd; k0 += TK) {
    // x: NT threads load the TM x TK elements, k fastest (memory order).
    for (var i = 0u; i < LOADS_A; i++) {
      let e = tid + i * NT;
      let ka = e % TK;
      let mm = e / TK;
      var av = 0.0;
      if (row0 + mm < dims.N && k0 + ka < kEnd) { av = x[(row0 + mm) * dims.K + k0 + ka]; }
      tileA[ka * TSVA + mm / 4u][mm % 4u] = av;
    }
    let blk = k0 / 32u;
    // Nibble p of the block's 32 is bits 4 (p % 8) of word p / 8; the step's first is k0 % 32 (a multiple of TK).
    var s = 0.0;
    var z = 0.0;
    if (nG < dims.Nout) {
      s = scales[nG * dims.nb + blk];
      z = zeroPoint(nG, blk);
    }
    for (var wd = 0u; wd < TK / 8u; wd++) {
      var word = 0u;
      if (nG < dims.Nout) { word = wq[(nG * dims.nb + blk) * 4u + (k0 % 32u) / 8u + wd]; }
      // Elements k0 + 8 wd + q of row nG (zero past Nout, where s = 0).
      for (var q = 0u; q < 8u; q++) {
        tileB[(8u * wd + q) * TSV + tid / 4u][tid % 4u] = (f32((word >> (4u * q)) & 15u) - z) * s;
      }
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      let b0 = tileB[kk * TSV + tx];
      let b1 = tileB[kk * TSV + 16u + tx];
      let a0 = tileA[kk * TSVA + ty];
      r0l = fma(vec4f(a0.x), b0, r0l); r0r = fma(vec4f(a0.x), b1, r0r);
      r1l = fma(vec4f(a0.y), b0, r1l); r1r = fma(vec4f(a0.y), b1, r1r);
      r2l = fma(vec4f(a0.z), b0, r2l); r2r = fma(vec4f(a0.z), b1, r2r);
      r3l = fma(vec4f(a0.w), b0, r3l); r3r = fma(vec4f(a0.w), b1, r3r);
      let a1 = tileA[kk * TSVA + TY * 1u + ty];
      r4l = fma(vec4f(a1.x), b0, r4l); r4r = fma(vec4f(a1.x), b1, r4r);
      r5l = fma(vec4f(a1.y), b0, r5l); r5r = fma(vec4f(a1.y), b1, r5r);
      r6l = fma(vec4f(a1.z), b0, r6l); r6r = fma(vec4f(a1.z), b1, r6r);
      r7l = fma(vec4f(a1.w), b0, r7l); r7r = fma(vec4f(a1.w), b1, r7r);
      let a2 = tileA[kk * TSVA + TY * 2u + ty];
      r8l = fma(vec4f(a2.x), b0, r8l); r8r = fma(vec4f(a2.x), b1, r8r);
      r9l = fma(vec4f(a2.y), b0, r9l); r9r = fma(vec4f(a2.y), b1, r9r);
      r10l = fma(vec4f(a2.z), b0, r10l); r10r = fma(vec4f(a2.z), b1, r10r);
      r11l = fma(vec4f(a2.w), b0, r11l); r11r = fma(vec4f(a2.w), b1, r11r);
    }
    workgroupBarrier();
  }
  // TAIL256: matmul_tail256.wgsl goes here under the switch loraTail (matmul.ts withTail).
  let n0 = col0 + 4u * tx;
  let n1 = col0 + 64u + 4u * tx;
  let m0 = row0 + 4u * ty;
  store4(m0, n0, r0l); store4(m0, n1, r0r);
  store4(m0 + 1u, n0, r1l); store4(m0 + 1u, n1, r1r);
  store4(m0 + 2u, n0, r2l); store4(m0 + 2u, n1, r2r);
  store4(m0 + 3u, n0, r3l); store4(m0 + 3u, n1, r3r);
  let m1 = row0 + 4u * TY * 1u + 4u * ty;
  store4(m1, n0, r4l); store4(m1, n1, r4r);
  store4(m1 + 1u, n0, r5l); store4(m1 + 1u, n1, r5r);
  store4(m1 + 2u, n0, r6l); store4(m1 + 2u, n1, r6r);
  store4(m1 + 3u, n0, r7l); store4(m1 + 3u, n1, r7r);
  let m2 = row0 + 4u * TY * 2u + 4u * ty;
  store4(m2, n0, r8l); store4(m2, n1, r8r);
  store4(m2 + 1u, n0, r9l); store4(m2 + 1u, n1, r9r);
  store4(m2 + 2u, n0, r10l); store4(m2 + 2u, n1, r10r);
  store4(m2 + 3u, n0, r11l); store4(m2 + 3u, n1, r11r);
}

// Writes columns n .. n + 3 of row m (those inside y), with the bias and the accumulation.
fn store4(m: u32, n: u32, v: vec4f) {
  if (m >= dims.N) { return; }
  for (var q = 0u; q < 4u; q++) {
    let col = n + q;
    if (col < dims.Nout) {
      let idx = slice * dims.N * dims.Nout + m * dims.Nout + col;
      var val = v[q];
      if (HAS_BIAS && slice == 0u) { val += bias[col]; }
      if (ACCUMULATE) { val += y[idx]; }
      y[idx] = val;
    }
  }
}
