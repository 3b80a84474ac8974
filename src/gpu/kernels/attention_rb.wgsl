// Causal grouped-query attention forward, flash style, register-blocked: o (B, T, H, D) and lse (B, H, T) by an online
// softmax, on the tiles of attention_bwd_dq_rb.wgsl. A workgroup of NT = 4 BQ threads owns BQ query rows of one
// (batch, head) and streams key/value tiles of BK rows (keys <= its last query). Per tile, a barrier after each phase:
//  - scores: thread (qp, kp) computes S for QR queries qp + SQ i and KR keys kp + SK i, and its rows' partial maxima;
//  - row maxima: the same thread writes P = exp(S - m) into a (BK, BQ) tile stored query-fastest (four consecutive
//    queries are one vec4), and key slot kp 0 writes m and the rescale exp(m_old - m);
//  - sums: thread (qg, c) owns queries 4 qg .. 4 qg + 3 and vec4 columns c, c + 16 of o and their four sums of P.
// Design and tiles: docs/kernels.md, "Causal GQA attention"; attention.ts appends attention_dims.wgsl and
// attention_rb_common.wgsl (without its BACKWARD block).

@group(0) @binding(0) var<storage, read> q: array<vec4f>;         // (B, T, H, D / 4)
@group(0) @binding(1) var<storage, read> k: array<vec4f>;         // (B, T, Hkv, D / 4)
@group(0) @binding(2) var<storage, read> v: array<vec4f>;         // (B, T, Hkv, D / 4)
@group(0) @binding(3) var<storage, read> lens: array<u32>;        // (B)
@group(0) @binding(4) var<storage, read_write> o: array<vec4f>;   // (B, T, H, D / 4)
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;   // (B, H, T)
@group(0) @binding(6) var<uniform> dims: Dims;

override D4: u32 = 16u;          // vec4 columns of a row (D / 4), at most 16 * JMAX
override BQ: u32 = 32u;          // query rows per workgroup, a multiple of 4
override BK: u32 = 16u;          // key rows per tile, 4 QR KR
override QR: u32 = 2u;           // queries per thread in the score phase (1 or 2)
override KR: u32 = 2u;           // keys per thread in the score phase (1 or 2)
override JMAX: u32 = 1u;         // vec4 columns per thread in the sums (1, or 2 where D4 > 16)
override NT: u32 = 4u * BQ;      // threads: (BQ / QR) (BK / KR) in the score phase, 16 (BQ / 4) in the sums
override DS4: u32 = D4 + 1u;     // vec4 row stride of the Q, K and V tiles (a spare vec4 against bank conflicts)
override BQ4: u32 = BQ / 4u;     // vec4 of a key row of the P tile, and of the row scalars
override PS4: u32 = BQ4 + 1u;    // vec4 row stride of the P tile (the spare vec4: the score phase's writes hit 32 banks)
override SK: u32 = BK / KR;      // key slots of the score phase (4 QR)
override SK4: u32 = SK / 4u;     // vec4 of a row's partial maxima
const NEG: f32 = -1.0e30;        // score of a masked pair; real scores are far above NEG / 2

var<workgroup> qs: array<vec4f, BQ * DS4>;    // (BQ, DS4)
var<workgroup> ks: array<vec4f, BK * DS4>;    // (BK, DS4)
var<workgroup> vs: array<vec4f, BK * DS4>;    // (BK, DS4)
var<workgroup> pt: array<vec4f, BK * PS4>;    // (BK, BQ) probabilities of the tile, query-fastest
var<workgroup> pmax: array<vec4f, BQ * SK4>;  // (BQ, SK) each key slot's max of the row's scores in the tile
var<workgroup> rowM: array<f32, 2u * BQ>;     // running max of each row, before / after the tile by its parity
var<workgroup> rowAlpha: array<vec4f, BQ4>;   // exp(m_old - m_new) of each row for the tile

@compute @workgroup_size(NT)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) tid: u32) {
  // #include attention_query_roles.wgsl

  for (var e = tid; e < BQ * D4; e += NT) {
    let tt = q0 + e / D4;
    var qx = vec4f(0.0);
    if (tt < len) { qx = q[qRow(b, tt, h) + e % D4]; }
    qs[(e / D4) * DS4 + e % D4] = qx;
  }
  for (var e = tid; e < BQ; e += NT) { rowM[e] = NEG; }
  // aRX: query 4 qg + R, column c (X = A) and c + 16 (X = B); l4: the four rows' sums of P.
  var a0A = vec4f(0.0); var a1A = vec4f(0.0); var a2A = vec4f(0.0); var a3A = vec4f(0.0);
  var a0B = vec4f(0.0); var a1B = vec4f(0.0); var a2B = vec4f(0.0); var a3B = vec4f(0.0);
  var l4 = vec4f(0.0);
  var cur = 0u; // rowM[cur * BQ + row]: the max before this tile; the tile writes rowM[(1 - cur) * BQ + row]
  let kEnd = min(q0 + BQ, len); // causal: no key beyond the block's last valid query
  for (var k0 = 0u; k0 < kEnd; k0 += BK) {
    workgroupBarrier(); // the previous tile is consumed (and the query tile, rowM are written)
    loadKV(tid, b, hk, k0, kEnd);
    workgroupBarrier();
    // sIJ: query qp + SQ I, key kp + SK J (scaled, NEG where masked), kept in registers until P is written.
    var s00 = 0.0; var s01 = 0.0; var s10 = 0.0; var s11 = 0.0;
    {
      let qr0 = qp * DS4;
      let qr1 = (qp + SQ) * DS4;
      let kr0 = kp * DS4;
      let kr1 = (kp + SK) * DS4;
      for (var i4 = 0u; i4 < D4; i4++) {
        let qa = qs[qr0 + i4];
        let ka = ks[kr0 + i4];
        s00 += dot(qa, ka);
        if (KR > 1u) {
          let kb = ks[kr1 + i4];
          s01 += dot(qa, kb);
          if (QR > 1u) {
            let qb = qs[qr1 + i4];
            s10 += dot(qb, ka);
            s11 += dot(qb, kb);
          }
        } else if (QR > 1u) {
          s10 += dot(qs[qr1 + i4], ka);
        }
      }
      s00 = masked(qp, kp, q0, k0, len, s00);
      s01 = masked(qp, kp + SK, q0, k0, len, s01);
      s10 = masked(qp + SQ, kp, q0, k0, len, s10);
      s11 = masked(qp + SQ, kp + SK, q0, k0, len, s11);
      pmax[qp * SK4 + kp / 4u][kp % 4u] = select(s00, max(s00, s01), KR > 1u);
      if (QR > 1u) { pmax[(qp + SQ) * SK4 + kp / 4u][kp % 4u] = select(s10, max(s10, s11), KR > 1u); }
    }
    workgroupBarrier();
    {
      let mn0 = newMax(qp, kp, cur);
      putP(qp, kp, s00, mn0);
      if (KR > 1u) { putP(qp, kp + SK, s01, mn0); }
      if (QR > 1u) {
        let mn1 = newMax(qp + SQ, kp, cur);
        putP(qp + SQ, kp, s10, mn1);
        if (KR > 1u) { putP(qp + SQ, kp + SK, s11, mn1); }
      }
    }
    workgroupBarrier();
    {
      let al = rowAlpha[qg];
      l4 *= al;
      a0A *= al.x; a1A *= al.y; a2A *= al.z; a3A *= al.w;
      a0B *= al.x; a1B *= al.y; a2B *= al.z; a3B *= al.w;
      for (var j = 0u; j < BK; j++) {
        let p4 = pt[j * PS4 + qg];
        l4 += p4;
        if (cA) {
          let v4 = vs[j * DS4 + c];
          a0A = fma(vec4f(p4.x), v4, a0A); a1A = fma(vec4f(p4.y), v4, a1A);
          a2A = fma(vec4f(p4.z), v4, a2A); a3A = fma(vec4f(p4.w), v4, a3A);
        }
        if (cB) {
          let v4 = vs[j * DS4 + c + LANES];
          a0B = fma(vec4f(p4.x), v4, a0B); a1B = fma(vec4f(p4.y), v4, a1B);
          a2B = fma(vec4f(p4.z), v4, a2B); a3B = fma(vec4f(p4.w), v4, a3B);
        }
      }
    }
    cur = 1u - cur;
  }
  let t = q0 + 4u * qg;
  storeO(t, b, h, len, c, cur, l4.x, a0A, a0B);
  storeO(t + 1u, b, h, len, c, cur, l4.y, a1A, a1B);
  storeO(t + 2u, b, h, len, c, cur, l4.z, a2A, a2B);
  storeO(t + 3u, b, h, len, c, cur, l4.w, a3A, a3B);
}

// The scaled score of query row qr, key row kr of the tile from its dot product, or NEG where masked.
fn masked(qr: u32, kr: u32, q0: u32, k0: u32, len: u32, d: f32) -> f32 {
  let j = k0 + kr;
  return select(NEG, d * dims.scale, j <= q0 + qr && j < len);
}

// Row qr's max after the tile (its running max and the tile's partial maxima); key slot 0 writes it and the
// rescale of the row's sums.
fn newMax(qr: u32, kp: u32, cur: u32) -> f32 {
  let mo = rowM[cur * BQ + qr];
  var mx = vec4f(mo);
  for (var i = 0u; i < SK4; i++) { mx = max(mx, pmax[qr * SK4 + i]); }
  let mn = max(max(mx.x, mx.y), max(mx.z, mx.w));
  if (kp == 0u) {
    rowM[(1u - cur) * BQ + qr] = mn;
    rowAlpha[qr / 4u][qr % 4u] = exp(mo - mn);
  }
  return mn;
}

// P of query row qr, key row kr of the tile from its score and the row's max (0 where masked).
fn putP(qr: u32, kr: u32, s: f32, mn: f32) {
  pt[kr * PS4 + qr / 4u][qr % 4u] = select(0.0, exp(s - mn), s > NEG * 0.5);
}

// Query row t's vec4 columns c, c + 16 of o and (column lane 0) its lse; zeros for padded rows, nothing past T.
fn storeO(t: u32, b: u32, h: u32, len: u32, c: u32, cur: u32, sm: f32, xa: vec4f, xb: vec4f) {
  if (t >= dims.T) { return; }
  let valid = t < len;
  let base = qRow(b, t, h);
  if (c < D4) { o[base + c] = select(vec4f(0.0), xa / sm, valid); }
  if (JMAX > 1u && c + LANES < D4) { o[base + c + LANES] = select(vec4f(0.0), xb / sm, valid); }
  if (c == 0u) {
    var x = 0.0;
    if (valid) { x = rowM[cur * BQ + t % BQ] + log(sm); } // a valid row saw at least one tile (and its barriers)
    lse[statAt(b, h, t)] = x;
  }
}
