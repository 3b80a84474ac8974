// Attention backward, query side: dq (B, T, H, D) and delta (B, H, T) = rowsum(dout * o), which
// attention_bwd_dkv.wgsl reads, so this kernel runs first. Probabilities are recomputed from the
// forward's lse: p = exp(q.k * scale - lse), dS = p * (dout.v - delta), dq = scale * sum_j dS_j k_j.
// Same tiling as attention.wgsl: BQ query rows per workgroup, key/value tiles of BK rows.

struct Dims {
  B: u32,
  T: u32,
  H: u32,
  Hkv: u32,
  scale: f32,
  _p0: u32,
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;            // (B, T, H, D)
@group(0) @binding(1) var<storage, read> k: array<f32>;            // (B, T, Hkv, D)
@group(0) @binding(2) var<storage, read> v: array<f32>;            // (B, T, Hkv, D)
@group(0) @binding(3) var<storage, read> o: array<f32>;            // (B, T, H, D)
@group(0) @binding(4) var<storage, read> dout: array<f32>;         // (B, T, H, D)
@group(0) @binding(5) var<storage, read> lse: array<f32>;          // (B, H, T)
@group(0) @binding(6) var<storage, read> lens: array<u32>;         // (B)
@group(0) @binding(7) var<storage, read_write> dq: array<f32>;     // (B, T, H, D)
@group(0) @binding(8) var<storage, read_write> delta: array<f32>;  // (B, H, T)
@group(0) @binding(9) var<uniform> dims: Dims;

override D: u32 = 64u;
override BQ: u32 = 16u;
override BK: u32 = 16u;
override DS: u32 = D + 1u; // row stride of the tiles: padded so rows fall in different banks
const LANES: u32 = 16u;
const DPT_MAX: u32 = 8u;

var<workgroup> qs: array<f32, BQ * DS>;   // (BQ, DS)
var<workgroup> dos: array<f32, BQ * DS>;  // (BQ, DS)
var<workgroup> ks: array<f32, BK * DS>;   // (BK, DS)
var<workgroup> vs: array<f32, BK * DS>;   // (BK, DS)
var<workgroup> ss: array<f32, BQ * BK>;  // (BQ, BK) dS of the tile
var<workgroup> rowL: array<f32, BQ>;
var<workgroup> rowDelta: array<f32, BQ>;

@compute @workgroup_size(LANES, BQ)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let b = wg.z;
  let h = wg.y;
  let q0 = wg.x * BQ;
  let hk = h / (dims.H / dims.Hkv);
  let len = min(lens[b], dims.T);
  let lane = lid.x;
  let r = lid.y;
  let tid = r * LANES + lane;
  let nt = LANES * BQ;
  let t = q0 + r;
  let dpt = (D + LANES - 1u) / LANES;

  for (var e = tid; e < BQ * D; e += nt) {
    let tt = q0 + e / D;
    var qx = 0.0;
    var dx = 0.0;
    if (tt < len) {
      let idx = ((b * dims.T + tt) * dims.H + h) * D + e % D;
      qx = q[idx];
      dx = dout[idx];
    }
    qs[(e / D) * DS + e % D] = qx;
    dos[(e / D) * DS + e % D] = dx;
  }
  if (lane == 0u) {
    var dl = 0.0;
    var lv = 0.0;
    if (t < len) {
      let base = ((b * dims.T + t) * dims.H + h) * D;
      for (var d = 0u; d < D; d++) { dl = fma(dout[base + d], o[base + d], dl); }
      lv = lse[(b * dims.H + h) * dims.T + t];
    }
    rowDelta[r] = dl;
    rowL[r] = lv;
    if (t < dims.T) { delta[(b * dims.H + h) * dims.T + t] = dl; }
  }
  var acc: array<f32, DPT_MAX>;
  let kEnd = min(q0 + BQ, len);
  for (var k0 = 0u; k0 < kEnd; k0 += BK) {
    workgroupBarrier();
    for (var e = tid; e < BK * D; e += nt) {
      let j = k0 + e / D;
      var kx = 0.0;
      var vx = 0.0;
      if (j < kEnd) {
        let idx = ((b * dims.T + j) * dims.Hkv + hk) * D + e % D;
        kx = k[idx];
        vx = v[idx];
      }
      ks[(e / D) * DS + e % D] = kx;
      vs[(e / D) * DS + e % D] = vx;
    }
    workgroupBarrier();
    for (var e = tid; e < BQ * BK; e += nt) {
      let rr = e / BK;
      let c = e % BK;
      let j = k0 + c;
      var ds = 0.0;
      if (j <= q0 + rr && q0 + rr < len) {
        var s = 0.0;
        var dp = 0.0;
        for (var d = 0u; d < D; d++) {
          s = fma(qs[rr * DS + d], ks[c * DS + d], s);
          dp = fma(dos[rr * DS + d], vs[c * DS + d], dp);
        }
        let p = exp(s * dims.scale - rowL[rr]);
        ds = p * (dp - rowDelta[rr]);
      }
      ss[e] = ds;
    }
    workgroupBarrier();
    for (var c = 0u; c < BK; c++) {
      let ds = ss[r * BK + c];
      for (var i = 0u; i < dpt; i++) {
        let d = lane + LANES * i;
        if (d < D) { acc[i] = fma(ds, ks[c * DS + d], acc[i]); }
      }
    }
  }
  if (t >= dims.T) { return; }
  for (var i = 0u; i < dpt; i++) {
    let d = lane + LANES * i;
    if (d < D) { dq[((b * dims.T + t) * dims.H + h) * D + d] = acc[i] * dims.scale; }
  }
}
