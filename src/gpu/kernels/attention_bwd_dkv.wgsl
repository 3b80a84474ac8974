// Attention backward, key/value side: dk and dv (B, T, Hkv, D). One workgroup owns BK key rows of
// one (batch, kv head) and loops over the query heads of its group and over query tiles of BQ rows
// (t >= first key), so the sum over the group is a plain loop: deterministic, no atomics.
// dv_j = sum p_tj dout_t; dk_j = scale * sum dS_tj q_t, with delta from attention_bwd_dq.wgsl.

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

@group(0) @binding(0) var<storage, read> q: array<f32>;          // (B, T, H, D)
@group(0) @binding(1) var<storage, read> k: array<f32>;          // (B, T, Hkv, D)
@group(0) @binding(2) var<storage, read> v: array<f32>;          // (B, T, Hkv, D)
@group(0) @binding(3) var<storage, read> dout: array<f32>;       // (B, T, H, D)
@group(0) @binding(4) var<storage, read> lse: array<f32>;        // (B, H, T)
@group(0) @binding(5) var<storage, read> delta: array<f32>;      // (B, H, T)
@group(0) @binding(6) var<storage, read> lens: array<u32>;       // (B)
@group(0) @binding(7) var<storage, read_write> dk: array<f32>;   // (B, T, Hkv, D)
@group(0) @binding(8) var<storage, read_write> dv: array<f32>;   // (B, T, Hkv, D)
@group(0) @binding(9) var<uniform> dims: Dims;

override D: u32 = 64u;
override BK: u32 = 16u;  // key rows per workgroup
override BQ: u32 = 8u;   // query rows per tile
override DS: u32 = D + 1u; // row stride of the tiles: padded so rows fall in different banks
const LANES: u32 = 16u;
const DPT_MAX: u32 = 8u;

var<workgroup> ks: array<f32, BK * DS>;   // (BK, DS)
var<workgroup> vs: array<f32, BK * DS>;   // (BK, DS)
var<workgroup> qs: array<f32, BQ * DS>;   // (BQ, DS)
var<workgroup> dos: array<f32, BQ * DS>;  // (BQ, DS)
var<workgroup> ps: array<f32, BK * BQ>;  // (BK, BQ) probabilities of the tile
var<workgroup> dss: array<f32, BK * BQ>; // (BK, BQ) dS of the tile
var<workgroup> rowL: array<f32, BQ>;
var<workgroup> rowDelta: array<f32, BQ>;

@compute @workgroup_size(LANES, BK)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let b = wg.z;
  let hk = wg.y;
  let j0 = wg.x * BK;
  let group = dims.H / dims.Hkv;
  let len = min(lens[b], dims.T);
  let lane = lid.x;
  let r = lid.y;
  let tid = r * LANES + lane;
  let nt = LANES * BK;
  let j = j0 + r;
  let dpt = (D + LANES - 1u) / LANES;

  for (var e = tid; e < BK * D; e += nt) {
    let jj = j0 + e / D;
    var kx = 0.0;
    var vx = 0.0;
    if (jj < len) {
      let idx = ((b * dims.T + jj) * dims.Hkv + hk) * D + e % D;
      kx = k[idx];
      vx = v[idx];
    }
    ks[(e / D) * DS + e % D] = kx;
    vs[(e / D) * DS + e % D] = vx;
  }
  var accK: array<f32, DPT_MAX>;
  var accV: array<f32, DPT_MAX>;
  for (var g = 0u; g < group; g++) {
    let h = hk * group + g;
    for (var q0 = j0; q0 < len; q0 += BQ) {
      workgroupBarrier(); // the previous query tile is consumed (and the key tile is loaded)
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
      for (var e = tid; e < BQ; e += nt) {
        let tt = q0 + e;
        var lv = 0.0;
        var dl = 0.0;
        if (tt < len) {
          lv = lse[(b * dims.H + h) * dims.T + tt];
          dl = delta[(b * dims.H + h) * dims.T + tt];
        }
        rowL[e] = lv;
        rowDelta[e] = dl;
      }
      workgroupBarrier();
      for (var e = tid; e < BK * BQ; e += nt) {
        let c = e / BQ;
        let rr = e % BQ;
        let tt = q0 + rr;
        var p = 0.0;
        var ds = 0.0;
        if (j0 + c <= tt && tt < len) {
          var s = 0.0;
          var dp = 0.0;
          for (var d = 0u; d < D; d++) {
            s = fma(qs[rr * DS + d], ks[c * DS + d], s);
            dp = fma(dos[rr * DS + d], vs[c * DS + d], dp);
          }
          p = exp(s * dims.scale - rowL[rr]);
          ds = p * (dp - rowDelta[rr]);
        }
        ps[e] = p;
        dss[e] = ds;
      }
      workgroupBarrier();
      for (var rr = 0u; rr < BQ; rr++) {
        let p = ps[r * BQ + rr];
        let ds = dss[r * BQ + rr];
        for (var i = 0u; i < dpt; i++) {
          let d = lane + LANES * i;
          if (d < D) {
            accV[i] = fma(p, dos[rr * DS + d], accV[i]);
            accK[i] = fma(ds, qs[rr * DS + d], accK[i]);
          }
        }
      }
    }
  }
  if (j >= dims.T) { return; }
  for (var i = 0u; i < dpt; i++) {
    let d = lane + LANES * i;
    if (d < D) {
      let idx = ((b * dims.T + j) * dims.Hkv + hk) * D + d;
      dk[idx] = accK[i] * dims.scale;
      dv[idx] = accV[i];
    }
  }
}
