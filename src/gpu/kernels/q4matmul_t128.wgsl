// The q4 products on 128x128 output tiles, W in onnxruntime's MatMulNBits layout (4 bits, block 32), with a tile
// loader that dequantises W into workgroup memory as it loads it; thread (tx, ty) owns rows 4 ty + i and
// 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j (sixteen vec4 accumulators). Dims and W's bindings:
// q4matmul_common.wgsl. A template (q4matmul.ts fills it): {{TK}} is the contracted step, TAIL adds the LoRA tail,
// TRANS picks the product (docs/kernels.md, "q4 matmul"):
//   forward  y (N, Nout) = x (N, K) @ dequant(W)^T (+ bias): a step of 8 along K is one u32 word of each W row;
//   TRANS    dx (N, K) = dy (N, Nout) @ dequant(W): a step of 8 is 8 rows of W over the tile's 128 columns of K.
// #if TAIL
// #include matmul_tail_prelude.wgsl
// #endif

// #if TRANS
@group(0) @binding(0) var<storage, read> dy: array<f32>;           // (N, Nout)
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;     // (N, K)
// #else
@group(0) @binding(0) var<storage, read> x: array<f32>;            // (N, K)
@group(0) @binding(4) var<storage, read_write> y: array<f32>;      // (N, Nout)
@group(0) @binding(6) var<storage, read> bias: array<f32>;         // (Nout); unused unless HAS_BIAS

override HAS_BIAS: bool = false;

var<private> slice: u32; // the split-K slice (0 when not split): its partial lands at slice * N * Nout; the bias goes in slice 0
// #endif

const TS: u32 = 128u; // output tile edge (TRANS: 4 blocks of K)
// Contracted step: 8 (one u32 word of nibbles per W row; TRANS: 8 rows of W), or 16 where the device's workgroup
// memory allows
const TK: u32 = {{TK}}u;
const TSV: u32 = 33u; // row stride of the tiles in vec4 (32 + 1 against bank conflicts of k-fastest fills)
const LOADS: u32 = TS * TK / 256u; // input elements per thread and step
// #if TRANS
const TPW: u32 = 256u / (TK * 16u); // threads per W word of the step (TK rows x 16 words): 2 at TK 8, 1 at 16
const VPT: u32 = 2u / TPW;          // vec4 (4 nibbles each) per thread

var<private> slice: u32; // the split-K slice (0 when not split): its partial lands at slice * N * K
// #else
const HALF: u32 = TK / 2u;         // nibbles of a W row per thread and step (two threads per row)
// #endif

var<workgroup> tileA: array<vec4f, TK * TSV>; // (TK, TSV): element m of row k at tileA[k * TSV + m / 4][m % 4]
var<workgroup> tileB: array<vec4f, TK * TSV>; // (TK, TSV): element n of row k at tileB[k * TSV + n / 4][n % 4]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  slice = wg.z;
  // #if TRANS
  let jEnd = sliceEnd(wg.z, dims.Nout);
  // #else
  let kEnd = sliceEnd(wg.z, dims.K);
  // #endif
  let row0 = wg.y * TS;
  let col0 = wg.x * TS;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 16u + tx;
  // #if TRANS
  // W loader: word w of the step (row jj = w / 16, word w % 16 of the tile's 16 in that row), part h of TPW.
  let w = tid / TPW;
  let h = tid % TPW;
  let jj = w / 16u;
  let wr = w % 16u;
  let blk = col0 / 32u + wr / 4u;
  // #else
  // W loader: two threads per output row n, each HALF nibbles (steps HALF h .. HALF h + HALF - 1) of the step.
  let nl = tid / 2u;
  let h = tid % 2u;
  let nG = col0 + nl;
  // #endif
  var r0l = vec4f(0.0); var r0r = vec4f(0.0); var r1l = vec4f(0.0); var r1r = vec4f(0.0);
  var r2l = vec4f(0.0); var r2r = vec4f(0.0); var r3l = vec4f(0.0); var r3r = vec4f(0.0);
  var r4l = vec4f(0.0); var r4r = vec4f(0.0); var r5l = vec4f(0.0); var r5r = vec4f(0.0);
  var r6l = vec4f(0.0); var r6r = vec4f(0.0); var r7l = vec4f(0.0); var r7r = vec4f(0.0);
  // #if TRANS
  for (var j0 = sliceBegin(wg.z); j0 < jEnd; j0 += TK) {
    // dy: 256 threads load the TS x TK elements, j fastest (memory order).
    for (var i = 0u; i < LOADS; i++) {
      let e = tid + i * 256u;
      let ja = e % TK;
      let mm = e / TK;
      var av = 0.0;
      if (row0 + mm < dims.N && j0 + ja < jEnd) { av = dy[(row0 + mm) * dims.Nout + j0 + ja]; }
      tileA[ja * TSV + mm / 4u][mm % 4u] = av;
    }
    let j = j0 + jj;
    var word = 0u;
    var z = 0.0;
    var s = 0.0;
    if (j < jEnd && blk < dims.nb) {
      word = wq[(j * dims.nb + blk) * 4u + wr % 4u] >> (16u * h);
      z = zeroPoint(j, blk);
      s = scales[j * dims.nb + blk];
    }
    // Vec4 v of this thread: elements k = col0 + 8 wr + 4 (VPT h + v) .. + 3 of row j (zero past the ranges).
    for (var v = 0u; v < VPT; v++) {
      let x = word >> (16u * v);
      let q = vec4f(vec4u(x & 15u, (x >> 4u) & 15u, (x >> 8u) & 15u, (x >> 12u) & 15u));
      tileB[jj * TSV + wr * 2u + VPT * h + v] = (q - z) * s;
    }
  // #else
  for (var k0 = sliceBegin(wg.z); k0 < kEnd; k0 += TK) {
    // x: 256 threads load the TS x TK elements, k fastest (memory order).
    for (var i = 0u; i < LOADS; i++) {
      let e = tid + i * 256u;
      let ka = e % TK;
      let mm = e / TK;
      var av = 0.0;
      if (row0 + mm < dims.N && k0 + ka < kEnd) { av = x[(row0 + mm) * dims.K + k0 + ka]; }
      tileA[ka * TSV + mm / 4u][mm % 4u] = av;
    }
    let blk = k0 / 32u;
    // Nibble p of the block's 32 is bits 4 (p % 8) of word p / 8; this thread's first is k0 % 32 + HALF h.
    let p0 = k0 % 32u + HALF * h;
    var word = 0u;
    var z = 0.0;
    var s = 0.0;
    if (nG < dims.Nout) {
      word = wq[(nG * dims.nb + blk) * 4u + p0 / 8u] >> (4u * (p0 % 8u));
      s = scales[nG * dims.nb + blk];
      z = zeroPoint(nG, blk);
    }
    // Elements k0 + HALF h + q of row nG (zero past Nout, where s = 0).
    for (var q = 0u; q < HALF; q++) {
      tileB[(HALF * h + q) * TSV + nl / 4u][nl % 4u] = (f32((word >> (4u * q)) & 15u) - z) * s;
    }
  // #endif
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      // #include matmul_fma8x8.wgsl
    }
    workgroupBarrier();
  }
// #if TAIL
// #include matmul_tail.wgsl
// #endif
  // #include matmul_store8x8.wgsl STORE=store4
}

// #if TRANS
// Writes columns k .. k + 3 of row m (those inside dx), with the accumulation.
fn store4(m: u32, k: u32, v: vec4f) {
  if (m >= dims.N) { return; }
  for (var q = 0u; q < 4u; q++) {
    let col = k + q;
    if (col < dims.K) {
      let idx = slice * dims.N * dims.K + m * dims.K + col;
      var val = v[q];
      if (ACCUMULATE) { val += dx[idx]; }
      dx[idx] = val;
    }
  }
}
// #else
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
// #endif
