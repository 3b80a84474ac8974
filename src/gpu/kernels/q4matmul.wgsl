// y (N, Nout) = x (N, K) @ dequant(W)^T (+ bias) with W in onnxruntime's MatMulNBits layout (4 bits, block 32).
// Each 16x16 workgroup computes a 64x64 tile of y, each thread a 4x4 block; the contraction walks
// one quantisation block (32 values of K) at a time, dequantising W into workgroup memory.

@group(0) @binding(0) var<storage, read> x: array<f32>;            // (N, K)
@group(0) @binding(4) var<storage, read_write> y: array<f32>;      // (N, Nout)
@group(0) @binding(6) var<storage, read> bias: array<f32>;         // (Nout); unused unless HAS_BIAS

override HAS_BIAS: bool = false;

const TS: u32 = 64u; // output tile edge
const TK: u32 = 32u; // one quantisation block of K
const RT: u32 = 4u;  // outputs per thread along each edge

// tileA keeps x rows contiguous (the stores of consecutive threads then hit consecutive banks);
// tileB is (TK, TS) as vec4 along TS. A thread reads 4 rows x 4 steps of A and 4 steps of B per
// 4 x 16 FMAs.
var<workgroup> tileA: array<vec4f, 512>; // (TS, TK) row-major: element (m, k) at tileA[m * 8 + k / 4][k % 4]
var<workgroup> tileB: array<vec4f, 512>; // element (k, n) at tileB[k * 16 + n / 4][n % 4]

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let col0 = wg.x * TS;
  let tid = lid.y * 16u + lid.x;
  var acc: array<vec4f, 4>; // acc[r][q]: row lid.y * 4 + r, column lid.x * 4 + q
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
      let nn = col0 + lid.x * RT + q;
      if (nn >= dims.Nout) { continue; }
      var val = acc[r][q];
      if (HAS_BIAS) { val += bias[nn]; }
      if (ACCUMULATE) { val += y[m * dims.Nout + nn]; }
      y[m * dims.Nout + nn] = val;
    }
  }
}
