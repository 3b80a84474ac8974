// dx (N, K) = dy (N, Nout) @ dequant(W): the product through a frozen q4 weight needed by backward,
// W in onnxruntime's MatMulNBits layout (4 bits, block 32), on 128x128 output tiles (an 8x8 block of
// sixteen vec4 accumulators per thread). A contracted step is
// 8 rows of W over the tile's 128 columns of K: 4 blocks x 4 words per row, 128 words, each
// dequantised by two threads into one vec4 of the W tile. Dims and W's bindings: q4matmul_common.wgsl.
// A template (wgsl-template.ts; q4matmul.ts fills it): {{TK}} is the contracted step, TAIL adds the LoRA tail.
// #if TAIL
// #include matmul_tail_prelude.wgsl
// #endif

@group(0) @binding(0) var<storage, read> dy: array<f32>;           // (N, Nout)
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;     // (N, K)

const TS: u32 = 128u; // output tile edge (a multiple of the block: 4 blocks of K)
// Rows of W (outputs of the forward) per contracted step: 16, or 8 where the device's workgroup memory is short.
const TK: u32 = {{TK}}u;
const TSV: u32 = 33u; // row stride of the tiles in vec4 (32 + 1 against bank conflicts of k-fastest fills)
const LOADS: u32 = TS * TK / 256u; // dy elements per thread and step
const TPW: u32 = 256u / (TK * 16u); // threads per W word of the step (TK rows x 16 words): 2 at TK 8, 1 at 16
const VPT: u32 = 2u / TPW;          // vec4 (4 nibbles each) per thread

var<private> slice: u32; // the split-K slice (0 when not split): its partial lands at slice * N * K

var<workgroup> tileA: array<vec4f, TK * TSV>; // (TK, TSV): element m of row j at tileA[j * TSV + m / 4][m % 4]
var<workgroup> tileB: array<vec4f, TK * TSV>; // (TK, TSV): element k of row j at tileB[j * TSV + k / 4][k % 4]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  slice = wg.z;
  let jEnd = sliceEnd(wg.z, dims.Nout);
  let row0 = wg.y * TS;
  let col0 = wg.x * TS;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 16u + tx;
  // W loader: word w of the step (row jj = w / 16, word w % 16 of the tile's 16 in that row), part h of TPW.
  let w = tid / TPW;
  let h = tid % TPW;
  let jj = w / 16u;
  let wr = w % 16u;
  let blk = col0 / 32u + wr / 4u;
  var r0l = vec4f(0.0); var r0r = vec4f(0.0); var r1l = vec4f(0.0); var r1r = vec4f(0.0);
  var r2l = vec4f(0.0); var r2r = vec4f(0.0); var r3l = vec4f(0.0); var r3r = vec4f(0.0);
  var r4l = vec4f(0.0); var r4r = vec4f(0.0); var r5l = vec4f(0.0); var r5r = vec4f(0.0);
  var r6l = vec4f(0.0); var r6r = vec4f(0.0); var r7l = vec4f(0.0); var r7r = vec4f(0.0);
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
