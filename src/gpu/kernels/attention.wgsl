// Causal grouped-query attention forward, flash style: one workgroup owns BQ query rows of one
// (batch, head) and streams key/value tiles of BK rows through workgroup memory with an online
// softmax, so no T x T score matrix exists. Thread (lane, r) owns row r and the head-dim slice
// d = lane + LANES * i; each thread computes BQ * BK / (LANES * BQ) scores of the tile.
// Glossary: B batch, T tokens, H query heads, Hkv kv heads, D head dim; lens (B) valid lengths.

struct Dims {
  B: u32,
  T: u32,
  H: u32,
  Hkv: u32,
  scale: f32, // usually 1 / sqrt(D)
  _p0: u32,
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(0) var<storage, read> q: array<f32>;          // (B, T, H, D)
@group(0) @binding(1) var<storage, read> k: array<f32>;          // (B, T, Hkv, D)
@group(0) @binding(2) var<storage, read> v: array<f32>;          // (B, T, Hkv, D)
@group(0) @binding(3) var<storage, read> lens: array<u32>;       // (B)
@group(0) @binding(4) var<storage, read_write> o: array<f32>;    // (B, T, H, D)
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;  // (B, H, T)
@group(0) @binding(6) var<uniform> dims: Dims;

override D: u32 = 64u;   // head dim, at most LANES * DPT_MAX
override BQ: u32 = 16u;  // query rows per workgroup
override BK: u32 = 16u;  // keys per tile
override DS: u32 = D + 1u; // row stride of the tiles: padded so rows fall in different banks
const LANES: u32 = 16u;
const DPT_MAX: u32 = 8u;
const NEG: f32 = -1.0e30; // score of a masked pair; real scores are far above NEG / 2

var<workgroup> qs: array<f32, BQ * DS>;   // (BQ, DS)
var<workgroup> ks: array<f32, BK * DS>;   // (BK, DS)
var<workgroup> vs: array<f32, BK * DS>;   // (BK, DS)
var<workgroup> ss: array<f32, BQ * BK>;  // (BQ, BK) scores of the tile

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
    var x = 0.0;
    if (tt < len) { x = q[((b * dims.T + tt) * dims.H + h) * D + e % D]; }
    qs[(e / D) * DS + e % D] = x;
  }
  var m = NEG;
  var l = 0.0;
  var acc: array<f32, DPT_MAX>;
  let kEnd = min(q0 + BQ, len); // causal: no key beyond the block's last valid query
  for (var k0 = 0u; k0 < kEnd; k0 += BK) {
    workgroupBarrier(); // the previous tile (and the query tile) are complete
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
      var s = NEG;
      if (j <= q0 + rr && j < len) {
        var dot = 0.0;
        for (var d = 0u; d < D; d++) { dot = fma(qs[rr * DS + d], ks[c * DS + d], dot); }
        s = dot * dims.scale;
      }
      ss[e] = s;
    }
    workgroupBarrier();
    var mt = m;
    for (var c = 0u; c < BK; c++) { mt = max(mt, ss[r * BK + c]); }
    let alpha = exp(m - mt);
    l *= alpha;
    for (var i = 0u; i < dpt; i++) { acc[i] *= alpha; }
    for (var c = 0u; c < BK; c++) {
      let s = ss[r * BK + c];
      if (s > NEG * 0.5) {
        let p = exp(s - mt);
        l += p;
        for (var i = 0u; i < dpt; i++) {
          let d = lane + LANES * i;
          if (d < D) { acc[i] = fma(p, vs[c * DS + d], acc[i]); }
        }
      }
    }
    m = mt;
  }
  if (t >= dims.T) { return; }
  let valid = t < len;
  for (var i = 0u; i < dpt; i++) {
    let d = lane + LANES * i;
    if (d < D) { o[((b * dims.T + t) * dims.H + h) * D + d] = select(0.0, acc[i] / l, valid); }
  }
  if (lane == 0u) { lse[(b * dims.H + h) * dims.T + t] = select(0.0, m + log(l), valid); }
}
