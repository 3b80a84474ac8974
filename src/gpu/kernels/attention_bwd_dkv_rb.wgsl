// Attention backward, key/value side, register-blocked: dk and dv (B, T, Hkv, D). A workgroup of NT = 4 BK threads owns
// BK key rows of one (batch, kv head) and loops over the group's query heads (with PARTS > 1, its part of them, its
// unscaled sums to part `wg.y % PARTS` of the buffers bound as dk and dv, (B, T, Hkv, PARTS, D / 4), summed by
// attention_dkv_reduce.wgsl) and their query tiles of BQ rows (t >= first key). Per tile:
//  - scores: thread (kp, tp) computes S and dP for KR keys kp + SK i and QR queries tp + SQ i, then P and dS into
//    (BQ, BK) tiles stored key-fastest (four consecutive keys are one vec4);
//  - sums: thread (kg, c) owns keys 4 kg .. 4 kg + 3 and vec4 columns c, c + 16 of dk and dv.
// Design: docs/kernels.md, "Causal GQA attention"; attention.ts appends attention_dims.wgsl and attention_rb_common.wgsl.

@group(0) @binding(0) var<storage, read> q: array<vec4f>;          // (B, T, H, D / 4)
@group(0) @binding(1) var<storage, read> k: array<vec4f>;          // (B, T, Hkv, D / 4)
@group(0) @binding(2) var<storage, read> v: array<vec4f>;          // (B, T, Hkv, D / 4)
@group(0) @binding(3) var<storage, read> dout: array<vec4f>;       // (B, T, H, D / 4)
@group(0) @binding(4) var<storage, read> lse: array<f32>;          // (B, H, T)
@group(0) @binding(5) var<storage, read> delta: array<f32>;        // (B, H, T)
@group(0) @binding(6) var<storage, read> lens: array<u32>;         // (B)
@group(0) @binding(7) var<storage, read_write> dk: array<vec4f>;   // (B, T, Hkv, D / 4)
@group(0) @binding(8) var<storage, read_write> dv: array<vec4f>;   // (B, T, Hkv, D / 4)
@group(0) @binding(9) var<uniform> dims: Dims;

override D4: u32 = 16u;          // vec4 columns of a row (D / 4), at most 16 * JMAX
override BK: u32 = 32u;          // key rows per workgroup, a multiple of 4
override BQ: u32 = 16u;          // query rows per tile, 4 KR QR
override KR: u32 = 2u;           // keys per thread in the score phase (1 or 2)
override QR: u32 = 2u;           // queries per thread in the score phase (1 or 2)
override JMAX: u32 = 1u;         // vec4 columns per thread in the sums (1, or 2 where D4 > 16)
override NT: u32 = 4u * BK;      // threads: (BK / KR) (BQ / QR) in the score phase, 16 (BK / 4) in the sums
override DS4: u32 = D4 + 1u;     // vec4 row stride of the K, V, Q and dout tiles (a spare vec4 against bank conflicts)
override BK4: u32 = BK / 4u;     // vec4 per query row of the P and dS tiles
override PARTS: u32 = 1u;        // workgroups sharing a (batch, kv head, key block), a divisor of H / Hkv (attnSplit=1)

var<workgroup> ks: array<vec4f, BK * DS4>;   // (BK, DS4)
var<workgroup> vs: array<vec4f, BK * DS4>;   // (BK, DS4)
var<workgroup> qs: array<vec4f, BQ * DS4>;   // (BQ, DS4)
var<workgroup> dos: array<vec4f, BQ * DS4>;  // (BQ, DS4)
var<workgroup> pt: array<vec4f, BQ * BK4>;   // (BQ, BK) probabilities of the tile, key-fastest
var<workgroup> dst: array<vec4f, BQ * BK4>;  // (BQ, BK) dS of the tile, key-fastest
var<workgroup> rowL: array<f32, BQ>;
var<workgroup> rowDelta: array<f32, BQ>;

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hk = wg.y / PARTS;
  let part = wg.y % PARTS;
  let j0 = wg.x * BK;
  let group = dims.H / dims.Hkv;
  let heads = group / PARTS; // this workgroup's query heads of the group: part heads .. part heads + heads - 1
  let len = min(lens[b], dims.T);
  // Score phase: SQ query slots fastest, so the 8 threads of a 128-bit load phase read 8 different q rows
  // (consecutive rows start in different banks) and one broadcast k row.
  let SK = BK / KR;
  let SQ = BQ / QR;
  let tp = tid % SQ;
  let kp = tid / SQ;
  // Sums: 16 column lanes fastest, keys 4 kg .. 4 kg + 3.
  let c = tid % LANES;
  let kg = tid / LANES;
  let cA = c < D4;
  let cB = JMAX > 1u && c + LANES < D4;

  loadKV(tid, b, hk, j0, len);
  // dk / dv sums: kRX / vRX for key 4 kg + R, column c (X = A) and c + 16 (X = B).
  var k0A = vec4f(0.0); var k1A = vec4f(0.0); var k2A = vec4f(0.0); var k3A = vec4f(0.0);
  var v0A = vec4f(0.0); var v1A = vec4f(0.0); var v2A = vec4f(0.0); var v3A = vec4f(0.0);
  var k0B = vec4f(0.0); var k1B = vec4f(0.0); var k2B = vec4f(0.0); var k3B = vec4f(0.0);
  var v0B = vec4f(0.0); var v1B = vec4f(0.0); var v2B = vec4f(0.0); var v3B = vec4f(0.0);
  for (var g = part * heads; g < (part + 1u) * heads; g++) {
    let h = hk * group + g;
    for (var q0 = j0; q0 < len; q0 += BQ) {
      workgroupBarrier(); // the previous query tile is consumed (and the key tile is loaded)
      loadQDout(tid, b, h, q0, len);
      for (var e = tid; e < BQ; e += NT) {
        let tt = q0 + e;
        var lv = 0.0;
        var dl = 0.0;
        if (tt < len) {
          lv = lse[statAt(b, h, tt)];
          dl = delta[statAt(b, h, tt)];
        }
        rowL[e] = lv;
        rowDelta[e] = dl;
      }
      workgroupBarrier();
      {
        // Keys kp, kp + SK x queries tp, tp + SQ (the block's components are query-major: y is key kp + SK).
        let sc = scoresSdP(tp, tp + SQ, kp, kp + SK);
        putPds(kp, tp, j0, q0, len, sc.s.x, sc.dp.x);
        if (QR > 1u) { putPds(kp, tp + SQ, j0, q0, len, sc.s.z, sc.dp.z); }
        if (KR > 1u) {
          putPds(kp + SK, tp, j0, q0, len, sc.s.y, sc.dp.y);
          if (QR > 1u) { putPds(kp + SK, tp + SQ, j0, q0, len, sc.s.w, sc.dp.w); }
        }
      }
      workgroupBarrier();
      for (var t = 0u; t < BQ; t++) {
        let p4 = pt[t * BK4 + kg];
        let d4 = dst[t * BK4 + kg];
        if (cA) {
          let o4 = dos[t * DS4 + c];
          let q4 = qs[t * DS4 + c];
          v0A = fma(vec4f(p4.x), o4, v0A); v1A = fma(vec4f(p4.y), o4, v1A);
          v2A = fma(vec4f(p4.z), o4, v2A); v3A = fma(vec4f(p4.w), o4, v3A);
          k0A = fma(vec4f(d4.x), q4, k0A); k1A = fma(vec4f(d4.y), q4, k1A);
          k2A = fma(vec4f(d4.z), q4, k2A); k3A = fma(vec4f(d4.w), q4, k3A);
        }
        if (cB) {
          let o4 = dos[t * DS4 + c + LANES];
          let q4 = qs[t * DS4 + c + LANES];
          v0B = fma(vec4f(p4.x), o4, v0B); v1B = fma(vec4f(p4.y), o4, v1B);
          v2B = fma(vec4f(p4.z), o4, v2B); v3B = fma(vec4f(p4.w), o4, v3B);
          k0B = fma(vec4f(d4.x), q4, k0B); k1B = fma(vec4f(d4.y), q4, k1B);
          k2B = fma(vec4f(d4.z), q4, k2B); k3B = fma(vec4f(d4.w), q4, k3B);
        }
      }
// #if DQ_PARTIAL
      dqPartial(tid, b, h, q0, wg.x); // the fused dq (attention_dq_partial.wgsl)
// #endif
    }
  }
  let j = j0 + 4u * kg;
  if (cA) {
    storeKV(j, b, hk, part, c, k0A, v0A); storeKV(j + 1u, b, hk, part, c, k1A, v1A);
    storeKV(j + 2u, b, hk, part, c, k2A, v2A); storeKV(j + 3u, b, hk, part, c, k3A, v3A);
  }
  if (cB) {
    storeKV(j, b, hk, part, c + LANES, k0B, v0B); storeKV(j + 1u, b, hk, part, c + LANES, k1B, v1B);
    storeKV(j + 2u, b, hk, part, c + LANES, k2B, v2B); storeKV(j + 3u, b, hk, part, c + LANES, k3B, v3B);
  }
}

// Key row j's vec4 column c4 of dk (scaled) and dv (rows past T are no rows); with PARTS > 1, of part `part` of the
// partial sums (unscaled: the reduce scales their sum). At PARTS 1 the index is kvRow(b, j, hk) + c4.
fn storeKV(j: u32, b: u32, hk: u32, part: u32, c4: u32, ka: vec4f, va: vec4f) {
  if (j >= dims.T) { return; }
  let at = (((b * dims.T + j) * dims.Hkv + hk) * PARTS + part) * D4 + c4;
  if (PARTS == 1u) { dk[at] = ka * dims.scale; } else { dk[at] = ka; }
  dv[at] = va;
}

// P and dS of key row kr, query row tr of the tile (key j0 + kr, query q0 + tr); 0 where masked.
fn putPds(kr: u32, tr: u32, j0: u32, q0: u32, len: u32, s: f32, dp: f32) {
  let tt = q0 + tr;
  var p = 0.0;
  var ds = 0.0;
  if (j0 + kr <= tt && tt < len) {
    p = exp(s * dims.scale - rowL[tr]);
    ds = p * (dp - rowDelta[tr]);
  }
  pt[tr * BK4 + kr / 4u][kr % 4u] = p;
  dst[tr * BK4 + kr / 4u][kr % 4u] = ds;
}
