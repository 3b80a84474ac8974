// Fused vocabulary head, forward pass 1 of 2, on 128x128 tiles (switch lm128): lmhead.wgsl's partials (per row and
// vocabulary slice: the max m, s = sum e^(z-m), sum e^(z-m) z and the target's logit when it falls in the slice) with
// matmul_t128.wgsl's tile and inner loop. Each 16x16 workgroup owns 128 rows and VS columns (VS a multiple of 128) of
// one window of W; it walks its columns in 128x128 tiles, thread (tx, ty) holding the 8x8 block of rows 4 ty + i and
// 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j (sixteen vec4 accumulators), and keeping running partials for its
// eight rows, merged across the 16 threads of a row at the end. Two vec4 reads of each tile per contracted step feed 64
// fmas (lmhead.wgsl's 4x4 block: 16). The partials' layout as lmhead.wgsl's; lmhead_combine.wgsl finishes.

// Dims, the bindings and the row merge (putMerge, rowMax, rowSum): lmhead_partials_common.wgsl, appended by lmhead.ts.

const TS: u32 = 128u;
const TK: u32 = 16u;
const TSV: u32 = 33u; // row stride of the tiles in vec4 (32 + 1 against bank conflicts of the k-fastest fills)

// (TK, TSV) tiles: element m of row k at tile[k * TSV + m / 4][m % 4]. tileA is the merge scratch at the end.
var<workgroup> tileA: array<vec4f, TK * TSV>;
var<workgroup> tileB: array<vec4f, TK * TSV>;

// One row's running partials: max m, sum s of e^(z - m), sum zs of e^(z - m) z, the target's logit zt (NEG if unseen).
struct Run {
  m: f32,
  s: f32,
  zs: f32,
  zt: f32,
}

// Folds the eight logits of one row in this tile (columns cLo .. cLo + 3 in lo, cHi .. cHi + 3 in hi, unscaled sums;
// columns at or past cEnd are not there) into r; `tgt` is the row's target (window column vStart + col).
fn fold(r: Run, lo: vec4f, hi: vec4f, cLo: u32, cHi: u32, cEnd: u32, tgt: u32) -> Run {
  var mt = r.m;
  for (var q = 0u; q < 4u; q++) {
    if (cLo + q < cEnd) { mt = max(mt, lo[q] * dims.scale); }
    if (cHi + q < cEnd) { mt = max(mt, hi[q] * dims.scale); }
  }
  let alpha = exp(r.m - mt);
  var o = Run(mt, r.s * alpha, r.zs * alpha, r.zt);
  for (var q = 0u; q < 4u; q++) {
    if (cLo + q < cEnd) {
      let z = lo[q] * dims.scale;
      let e = exp(z - mt);
      o.s += e;
      o.zs = fma(e, z, o.zs);
      if (dims.vStart + cLo + q == tgt) { o.zt = z; }
    }
  }
  for (var q = 0u; q < 4u; q++) {
    if (cHi + q < cEnd) {
      let z = hi[q] * dims.scale;
      let e = exp(z - mt);
      o.s += e;
      o.zs = fma(e, z, o.zs);
      if (dims.vStart + cHi + q == tgt) { o.zt = z; }
    }
  }
  return o;
}

// The workgroup row (of 128) of the thread's row slot r (0 .. 7).
fn slotRow(ty: u32, r: u32) -> u32 {
  return select(64u + 4u * ty + r - 4u, 4u * ty + r, r < 4u);
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 16u + tx;
  let c0 = wg.x * dims.VS;
  let cEnd = min(c0 + dims.VS, dims.vCount);
  var run: array<Run, 8>;
  var tgt: array<u32, 8>;
  for (var r = 0u; r < 8u; r++) {
    run[r] = Run(NEG, 0.0, 0.0, NEG);
    let row = row0 + slotRow(ty, r);
    tgt[r] = select(0xffffffffu, targets[min(row, dims.N - 1u)], row < dims.N);
  }
  for (var v0 = c0; v0 < cEnd; v0 += TS) {
    var r0l = vec4f(0.0); var r0r = vec4f(0.0); var r1l = vec4f(0.0); var r1r = vec4f(0.0);
    var r2l = vec4f(0.0); var r2r = vec4f(0.0); var r3l = vec4f(0.0); var r3r = vec4f(0.0);
    var r4l = vec4f(0.0); var r4r = vec4f(0.0); var r5l = vec4f(0.0); var r5r = vec4f(0.0);
    var r6l = vec4f(0.0); var r6r = vec4f(0.0); var r7l = vec4f(0.0); var r7r = vec4f(0.0);
    for (var k0 = 0u; k0 < dims.C; k0 += TK) {
      // 256 threads load the 128 x TK elements of h and of W, k fastest (memory order).
      for (var i = 0u; i < TS * TK / 256u; i++) {
        let e = tid + i * 256u;
        let kk = e % TK;
        let nn = e / TK;
        var a = 0.0;
        if (row0 + nn < dims.N && k0 + kk < dims.C) { a = h[(row0 + nn) * dims.C + k0 + kk]; }
        tileA[kk * TSV + nn / 4u][nn % 4u] = a;
        var b = 0.0;
        if (v0 + nn < cEnd && k0 + kk < dims.C) { b = w[(v0 + nn) * dims.C + k0 + kk]; }
        tileB[kk * TSV + nn / 4u][nn % 4u] = b;
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
    let cLo = v0 + 4u * tx;
    let cHi = v0 + 64u + 4u * tx;
    run[0] = fold(run[0], r0l, r0r, cLo, cHi, cEnd, tgt[0]);
    run[1] = fold(run[1], r1l, r1r, cLo, cHi, cEnd, tgt[1]);
    run[2] = fold(run[2], r2l, r2r, cLo, cHi, cEnd, tgt[2]);
    run[3] = fold(run[3], r3l, r3r, cLo, cHi, cEnd, tgt[3]);
    run[4] = fold(run[4], r4l, r4r, cLo, cHi, cEnd, tgt[4]);
    run[5] = fold(run[5], r5l, r5r, cLo, cHi, cEnd, tgt[5]);
    run[6] = fold(run[6], r6l, r6r, cLo, cHi, cEnd, tgt[6]);
    run[7] = fold(run[7], r7l, r7r, cLo, cHi, cEnd, tgt[7]);
  }
  // Merge the 16 threads of each row through tileA: max first, then the rescaled sums, then the target's logit.
  var big: array<f32, 8>;
  var s: array<f32, 8>;
  var zs: array<f32, 8>;
  for (var r = 0u; r < 8u; r++) { putMerge(slotRow(ty, r), tx, run[r].m); }
  workgroupBarrier();
  for (var r = 0u; r < 8u; r++) { big[r] = rowMax(slotRow(ty, r)); }
  workgroupBarrier();
  for (var r = 0u; r < 8u; r++) { putMerge(slotRow(ty, r), tx, run[r].s * exp(run[r].m - big[r])); }
  workgroupBarrier();
  for (var r = 0u; r < 8u; r++) { s[r] = rowSum(slotRow(ty, r)); }
  workgroupBarrier();
  for (var r = 0u; r < 8u; r++) { putMerge(slotRow(ty, r), tx, run[r].zs * exp(run[r].m - big[r])); }
  workgroupBarrier();
  for (var r = 0u; r < 8u; r++) { zs[r] = rowSum(slotRow(ty, r)); }
  workgroupBarrier();
  for (var r = 0u; r < 8u; r++) { putMerge(slotRow(ty, r), tx, run[r].zt); }
  workgroupBarrier();
  if (tx != 0u) { return; }
  for (var r = 0u; r < 8u; r++) {
    let row = row0 + slotRow(ty, r);
    if (row >= dims.N) { continue; }
    let base = (row * dims.nSplit + dims.splitBase + wg.x) * 4u;
    part[base] = big[r];
    part[base + 1u] = s[r];
    part[base + 2u] = zs[r];
    part[base + 3u] = rowMax(slotRow(ty, r));
  }
}
