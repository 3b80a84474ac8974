// Attention backward, query side, register-blocked: dq (B, T, H, D) and delta (B, H, T) = rowsum(dout * o), which
// attention_bwd_dkv_rb.wgsl reads, so this kernel runs first. A workgroup of NT = 4 BQ threads owns BQ query rows of one
// (batch, head) and streams key tiles of BK rows; per tile, the dk/dv kernel's phases with queries and keys swapped:
//  - scores: thread (qp, kp) computes S and dP for QR queries qp + SQ i and KR keys kp + SK i, then dS into a (BK, BQ)
//    tile stored query-fastest;
//  - sums: thread (qg, c) owns queries 4 qg .. 4 qg + 3 and vec4 columns c, c + 16 of dq.
// attention.ts appends attention_dims.wgsl and attention_rb_common.wgsl.

@group(0) @binding(0) var<storage, read> q: array<vec4f>;           // (B, T, H, D / 4)
@group(0) @binding(1) var<storage, read> k: array<vec4f>;           // (B, T, Hkv, D / 4)
@group(0) @binding(2) var<storage, read> v: array<vec4f>;           // (B, T, Hkv, D / 4)
@group(0) @binding(3) var<storage, read> o: array<vec4f>;           // (B, T, H, D / 4)
@group(0) @binding(4) var<storage, read> dout: array<vec4f>;        // (B, T, H, D / 4)
@group(0) @binding(5) var<storage, read> lse: array<f32>;           // (B, H, T)
@group(0) @binding(6) var<storage, read> lens: array<u32>;          // (B)
@group(0) @binding(7) var<storage, read_write> dq: array<vec4f>;    // (B, T, H, D / 4)
@group(0) @binding(8) var<storage, read_write> delta: array<f32>;   // (B, H, T)
@group(0) @binding(9) var<uniform> dims: Dims;

override D4: u32 = 16u;          // vec4 columns of a row (D / 4), at most 16 * JMAX
override BQ: u32 = 32u;          // query rows per workgroup, a multiple of 4
override BK: u32 = 16u;          // key rows per tile, 4 KR QR
override KR: u32 = 2u;           // keys per thread in the score phase (1 or 2)
override QR: u32 = 2u;           // queries per thread in the score phase (1 or 2)
override JMAX: u32 = 1u;         // vec4 columns per thread in the sums (1, or 2 where D4 > 16)
override NT: u32 = 4u * BQ;      // threads: (BQ / QR) (BK / KR) in the score phase, 16 (BQ / 4) in the sums
override DS4: u32 = D4 + 1u;     // vec4 row stride of the Q, dout, K and V tiles
override BQ4: u32 = BQ / 4u;     // vec4 per key row of the dS tile

var<workgroup> qs: array<vec4f, BQ * DS4>;   // (BQ, DS4)
var<workgroup> dos: array<vec4f, BQ * DS4>;  // (BQ, DS4)
var<workgroup> ks: array<vec4f, BK * DS4>;   // (BK, DS4)
var<workgroup> vs: array<vec4f, BK * DS4>;   // (BK, DS4)
var<workgroup> dst: array<vec4f, BK * BQ4>;  // (BK, BQ) dS of the tile, query-fastest; first the delta partials
var<workgroup> rowL: array<f32, BQ>;
var<workgroup> rowDelta: array<f32, BQ>;

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) tid: u32) {
  let SK = BK / KR;
  // #include attention_query_roles.wgsl

  loadQDout(tid, b, h, q0, len);
  // delta: four threads a row (tid = 4 row + part) sum dout * o over the vec4 columns part, part + 4, ...;
  // thread `row` then adds the four partials in a fixed order.
  {
    let row = tid / 4u;
    let part = tid % 4u;
    let tt = q0 + row;
    var acc = 0.0;
    if (tt < len) {
      let base = qRow(b, tt, h);
      for (var c4 = part; c4 < D4; c4 += 4u) { acc += dot(dout[base + c4], o[base + c4]); }
    }
    dst[row][part] = acc;
  }
  workgroupBarrier();
  if (tid < BQ) {
    let tt = q0 + tid;
    let p4 = dst[tid];
    let dl = (p4.x + p4.y) + (p4.z + p4.w);
    var lv = 0.0;
    if (tt < len) { lv = lse[statAt(b, h, tt)]; }
    rowDelta[tid] = dl;
    rowL[tid] = lv;
    if (tt < dims.T) { delta[statAt(b, h, tt)] = dl; }
  }
  // dq sums: aRX for query 4 qg + R, column c (X = A) and c + 16 (X = B).
  var a0A = vec4f(0.0); var a1A = vec4f(0.0); var a2A = vec4f(0.0); var a3A = vec4f(0.0);
  var a0B = vec4f(0.0); var a1B = vec4f(0.0); var a2B = vec4f(0.0); var a3B = vec4f(0.0);
  let kEnd = min(q0 + BQ, len);
  for (var k0 = 0u; k0 < kEnd; k0 += BK) {
    workgroupBarrier(); // the previous key tile (and the delta partials) are consumed
    loadKV(tid, b, hk, k0, kEnd);
    workgroupBarrier();
    {
      // Queries qp, qp + SQ x keys kp, kp + SK.
      let sc = scoresSdP(qp, qp + SQ, kp, kp + SK);
      putDs(qp, kp, q0, k0, len, sc.s.x, sc.dp.x);
      if (KR > 1u) { putDs(qp, kp + SK, q0, k0, len, sc.s.y, sc.dp.y); }
      if (QR > 1u) {
        putDs(qp + SQ, kp, q0, k0, len, sc.s.z, sc.dp.z);
        if (KR > 1u) { putDs(qp + SQ, kp + SK, q0, k0, len, sc.s.w, sc.dp.w); }
      }
    }
    workgroupBarrier();
    for (var j = 0u; j < BK; j++) {
      let d4 = dst[j * BQ4 + qg];
      if (cA) {
        let k4 = ks[j * DS4 + c];
        a0A = fma(vec4f(d4.x), k4, a0A); a1A = fma(vec4f(d4.y), k4, a1A);
        a2A = fma(vec4f(d4.z), k4, a2A); a3A = fma(vec4f(d4.w), k4, a3A);
      }
      if (cB) {
        let k4 = ks[j * DS4 + c + LANES];
        a0B = fma(vec4f(d4.x), k4, a0B); a1B = fma(vec4f(d4.y), k4, a1B);
        a2B = fma(vec4f(d4.z), k4, a2B); a3B = fma(vec4f(d4.w), k4, a3B);
      }
    }
  }
  let t = q0 + 4u * qg;
  if (cA) {
    storeDq(t, b, h, c, a0A); storeDq(t + 1u, b, h, c, a1A);
    storeDq(t + 2u, b, h, c, a2A); storeDq(t + 3u, b, h, c, a3A);
  }
  if (cB) {
    storeDq(t, b, h, c + LANES, a0B); storeDq(t + 1u, b, h, c + LANES, a1B);
    storeDq(t + 2u, b, h, c + LANES, a2B); storeDq(t + 3u, b, h, c + LANES, a3B);
  }
}

// Query row t's vec4 column c4 of dq, scaled (rows past T are no rows).
fn storeDq(t: u32, b: u32, h: u32, c4: u32, a: vec4f) {
  if (t >= dims.T) { return; }
  dq[qRow(b, t, h) + c4] = a * dims.scale;
}

// dS of query row qr, key row kr of the tile (query q0 + qr, key k0 + kr); 0 where masked.
fn putDs(qr: u32, kr: u32, q0: u32, k0: u32, len: u32, s: f32, dp: f32) {
  let tt = q0 + qr;
  var ds = 0.0;
  if (k0 + kr <= tt && tt < len) {
    let p = exp(s * dims.scale - rowL[qr]);
    ds = p * (dp - rowDelta[qr]);
  }
  dst[kr * BQ4 + qr / 4u][qr % 4u] = ds;
}
