// The q4 products on 64x64 tiles, W in onnxruntime's MatMulNBits layout (4 bits, block 32); a template: TRANS.
//   forward  y (N, Nout) = x (N, K) @ dequant(W)^T (+ bias): the contraction walks one quantisation block (32 values
//            of K) at a time.
//   TRANS    dx (N, K) = dy (N, Nout) @ dequant(W), the product through a frozen q4 weight needed by backward: a tile
//            of dx is two quantisation blocks wide; the contraction walks Nout 32 rows of W at a time.
// Each 16x16 workgroup computes a 64x64 tile of the output, each thread a 4x4 block, dequantising W into workgroup
// memory.

// #if TRANS
@group(0) @binding(0) var<storage, read> dy: array<f32>;           // (N, Nout)
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;     // (N, K)
// #else
@group(0) @binding(0) var<storage, read> x: array<f32>;            // (N, K)
@group(0) @binding(4) var<storage, read_write> y: array<f32>;      // (N, Nout)
@group(0) @binding(6) var<storage, read> bias: array<f32>;         // (Nout); unused unless HAS_BIAS

override HAS_BIAS: bool = false;
// #endif

const TS: u32 = 64u; // output tile edge
const TK: u32 = 32u; // contracted values per step: one quantisation block of K (TRANS: 32 rows of W)
const RT: u32 = 4u;  // outputs per thread along each edge

// tileA keeps the input's rows contiguous (the stores of consecutive threads then hit consecutive banks);
// tileB is (TK, TS) as vec4 along TS. A thread reads 4 rows x 4 steps of A and 4 steps of B per
// 4 x 16 FMAs.
var<workgroup> tileA: array<vec4f, 512>; // (TS, TK) row-major: element (m, k) at tileA[m * 8 + k / 4][k % 4]
var<workgroup> tileB: array<vec4f, 512>; // element (k, n) at tileB[k * 16 + n / 4][n % 4]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let col0 = wg.x * TS; // TRANS: a multiple of two blocks
  let tid = lid.y * 16u + lid.x;
  var acc: array<vec4f, 4>; // acc[r][q]: row lid.y * 4 + r, column lid.x * 4 + q
  // #if TRANS
  for (var n0 = 0u; n0 < dims.Nout; n0 += TK) {
    for (var i = 0u; i < 8u; i++) {
      let e = tid + i * 256u;
      let j = e % TK;
      let m = e / TK;
      var av = 0.0;
      if (row0 + m < dims.N && n0 + j < dims.Nout) { av = dy[(row0 + m) * dims.Nout + n0 + j]; }
      tileA[m * 8u + j / 4u][j % 4u] = av;
    }
    // One u32 word (8 nibbles) per thread: 32 rows of W x 2 blocks x 4 words.
    let j = tid / 8u;
    let blkLocal = (tid % 8u) / 4u;
    let w = tid % 4u;
    let nG = n0 + j;
    let blk = col0 / 32u + blkLocal;
    let kc = blkLocal * 32u + w * 8u;
    if (nG < dims.Nout && blk < dims.nb) {
      let word = wq[(nG * dims.nb + blk) * 4u + w];
      let s = scales[nG * dims.nb + blk];
      let z = zeroPoint(nG, blk);
      for (var i = 0u; i < 2u; i++) {
        let nib = (word >> (16u * i)) & 0xffffu; // elements kc + 4i .. kc + 4i + 3
        let qv = vec4f(vec4u(nib & 15u, (nib >> 4u) & 15u, (nib >> 8u) & 15u, nib >> 12u));
        tileB[j * 16u + kc / 4u + i] = (qv - z) * s;
      }
    } else {
      tileB[j * 16u + kc / 4u] = vec4f(0.0);
      tileB[j * 16u + kc / 4u + 1u] = vec4f(0.0);
    }
  // #else
  for (var blk = 0u; blk < dims.nb; blk++) {
    let k0 = blk * TK;
    for (var i = 0u; i < 8u; i++) {
      let e = tid + i * 256u;
      let ka = e % TK;
      let m = e / TK;
      var av = 0.0;
      if (row0 + m < dims.N && k0 + ka < dims.K) { av = x[(row0 + m) * dims.K + k0 + ka]; }
      tileA[m * 8u + ka / 4u][ka % 4u] = av;
    }
    // One u32 word (8 nibbles) of one output row per thread: 64 rows x 4 words.
    let n = tid / 4u;
    let w = tid % 4u;
    let nG = col0 + n;
    if (nG < dims.Nout) {
      let word = wq[(nG * dims.nb + blk) * 4u + w];
      let s = scales[nG * dims.nb + blk];
      let z = zeroPoint(nG, blk);
      for (var i = 0u; i < 8u; i++) {
        tileB[(w * 8u + i) * 16u + n / 4u][n % 4u] = (f32((word >> (4u * i)) & 15u) - z) * s;
      }
    } else {
      for (var i = 0u; i < 8u; i++) { tileB[(w * 8u + i) * 16u + n / 4u][n % 4u] = 0.0; }
    }
  // #endif
    workgroupBarrier();
    for (var s4 = 0u; s4 < TK / 4u; s4++) {
      var a: array<vec4f, 4>; // rows lid.y * 4 + r, steps 4 * s4 .. 4 * s4 + 3
      for (var r = 0u; r < RT; r++) { a[r] = tileA[(lid.y * RT + r) * 8u + s4]; }
      for (var c = 0u; c < 4u; c++) {
        let bv = tileB[(s4 * 4u + c) * 16u + lid.x];
        for (var r = 0u; r < RT; r++) { acc[r] = fma(vec4f(a[r][c]), bv, acc[r]); }
      }
    }
    workgroupBarrier();
  }
  for (var r = 0u; r < RT; r++) {
    let m = row0 + lid.y * RT + r;
    if (m >= dims.N) { continue; }
    for (var q = 0u; q < RT; q++) {
      // #if TRANS
      let kk = col0 + lid.x * RT + q;
      if (kk >= dims.K) { continue; }
      var val = acc[r][q];
      if (ACCUMULATE) { val += dx[m * dims.K + kk]; }
      dx[m * dims.K + kk] = val;
      // #else
      let nn = col0 + lid.x * RT + q;
      if (nn >= dims.Nout) { continue; }
      var val = acc[r][q];
      if (HAS_BIAS) { val += bias[nn]; }
      if (ACCUMULATE) { val += y[m * dims.Nout + nn]; }
      y[m * dims.Nout + nn] = val;
      // #endif
    }
  }
}
