// Attention backward, key/value side: dk and dv (B, T, Hkv, D). One workgroup owns BK key rows of
// one (batch, kv head) and loops over the query heads of its group and over query tiles of BQ rows
// (t >= first key), so the sum over the group is a plain loop: deterministic, no atomics.
// dv_j = sum p_tj dout_t; dk_j = scale * sum dS_tj q_t, with delta from attention_bwd_dq.wgsl.
// Tiles hold rows as vec4 as in attention.wgsl.

// Dims (B, T, H, Hkv, scale: usually 1 / sqrt(D)): attention_dims.wgsl, which attention.ts appends.

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
override RPT: u32 = 1u;  // key rows per thread (1 or 2)
override D4: u32 = (D + 3u) / 4u;
override DS4: u32 = D4 + 1u;
override NAMED_ACC: bool = false; // always false (attention.ts): named registers were tried and dropped
const LANES: u32 = 16u;
const JMAX: u32 = 2u;
const RPT_MAX: u32 = 2u;
fn ept() -> u32 { return (BQ * RPT + LANES - 1u) / LANES; } // tile elements per thread (nt = LANES BK / RPT threads)

var<workgroup> ks: array<vec4f, BK * DS4>;  // (BK, DS4)
var<workgroup> vs: array<vec4f, BK * DS4>;  // (BK, DS4)
var<workgroup> qs: array<vec4f, BQ * DS4>;  // (BQ, DS4)
var<workgroup> dos: array<vec4f, BQ * DS4>; // (BQ, DS4)
var<workgroup> ps: array<f32, BK * BQ>;     // (BK, BQ) probabilities of the tile
var<workgroup> dss: array<f32, BK * BQ>;    // (BK, BQ) dS of the tile
var<workgroup> rowL: array<f32, BQ>;
var<workgroup> rowDelta: array<f32, BQ>;

// Four consecutive head-dim values from `base`, zero past D (one function per buffer).
// #include attention_load.wgsl FN=loadQ BUF=q

// #include attention_load.wgsl FN=loadDout BUF=dout

// #include attention_load.wgsl FN=loadK BUF=k

// #include attention_load.wgsl FN=loadV BUF=v

@compute @workgroup_size(LANES, BK / RPT)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let b = wg.z;
  let hk = wg.y;
  let j0 = wg.x * BK;
  let group = dims.H / dims.Hkv;
  let len = min(lens[b], dims.T);
  let lane = lid.x;
  let rs = BK / RPT; // thread rows; thread row y owns key rows y, y + rs, ...
  let tid = lid.y * LANES + lane;
  let nt = LANES * rs;

  for (var e = tid; e < BK * D4; e += nt) {
    let jj = j0 + e / D4;
    var kx = vec4f(0.0);
    var vx = vec4f(0.0);
    if (jj < len) {
      let base = ((b * dims.T + jj) * dims.Hkv + hk) * D;
      kx = loadK(base, e % D4);
      vx = loadV(base, e % D4);
    }
    ks[(e / D4) * DS4 + e % D4] = kx;
    vs[(e / D4) * DS4 + e % D4] = vx;
  }
  var accK: array<vec4f, RPT_MAX * JMAX>; // accK[i * JMAX + j]: key row lid.y + i * rs, vec4 column lane + LANES * j
  var accV: array<vec4f, RPT_MAX * JMAX>;
  // NAMED_ACC: the same sums in named registers kIJ / vIJ (row i, column j) instead of the arrays.
  var k00 = vec4f(0.0); var k01 = vec4f(0.0); var k10 = vec4f(0.0); var k11 = vec4f(0.0);
  var v00 = vec4f(0.0); var v01 = vec4f(0.0); var v10 = vec4f(0.0); var v11 = vec4f(0.0);
  for (var g = 0u; g < group; g++) {
    let h = hk * group + g;
    for (var q0 = j0; q0 < len; q0 += BQ) {
      workgroupBarrier(); // the previous query tile is consumed (and the key tile is loaded)
      for (var e = tid; e < BQ * D4; e += nt) {
        let tt = q0 + e / D4;
        var qx = vec4f(0.0);
        var dx = vec4f(0.0);
        if (tt < len) {
          let base = ((b * dims.T + tt) * dims.H + h) * D;
          qx = loadQ(base, e % D4);
          dx = loadDout(base, e % D4);
        }
        qs[(e / D4) * DS4 + e % D4] = qx;
        dos[(e / D4) * DS4 + e % D4] = dx;
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
      {
        // Elements tid + nt i (i < ept() <= 2) of the (BK, BQ) tile: one query row, so each q and dout vec4 read feeds
        // ept() key rows. Named accumulators: with a dynamically indexed array attention ran much slower on NVIDIA.
        let rr = tid % BQ;
        let c0 = tid / BQ;
        let c1 = min(c0 + nt / BQ, BK - 1u);
        let two = ept() > 1u;
        var s0 = vec4f(0.0); var s1 = vec4f(0.0); var p0 = vec4f(0.0); var p1 = vec4f(0.0);
        for (var i4 = 0u; i4 < D4; i4++) {
          let qv = qs[rr * DS4 + i4];
          let dv4 = dos[rr * DS4 + i4];
          s0 = fma(qv, ks[c0 * DS4 + i4], s0);
          p0 = fma(dv4, vs[c0 * DS4 + i4], p0);
          if (two) {
            s1 = fma(qv, ks[c1 * DS4 + i4], s1);
            p1 = fma(dv4, vs[c1 * DS4 + i4], p1);
          }
        }
        putPds(tid, j0, q0 + rr, len, rr, s0, p0);
        if (two) { putPds(tid + nt, j0, q0 + rr, len, rr, s1, p1); }
      }
      workgroupBarrier();
      if (NAMED_ACC) {
        let two = RPT > 1u;
        let r1 = lid.y + rs;
        let c0 = lane < D4;
        let c1 = JMAX > 1u && lane + LANES < D4;
        for (var rr = 0u; rr < BQ; rr++) {
          let p0 = ps[lid.y * BQ + rr];
          let d0 = dss[lid.y * BQ + rr];
          var p1 = 0.0;
          var d1 = 0.0;
          if (two) { p1 = ps[r1 * BQ + rr]; d1 = dss[r1 * BQ + rr]; }
          if (c0) {
            let dov = dos[rr * DS4 + lane];
            let qv = qs[rr * DS4 + lane];
            v00 = fma(vec4f(p0), dov, v00); k00 = fma(vec4f(d0), qv, k00);
            if (two) { v10 = fma(vec4f(p1), dov, v10); k10 = fma(vec4f(d1), qv, k10); }
          }
          if (c1) {
            let dov = dos[rr * DS4 + lane + LANES];
            let qv = qs[rr * DS4 + lane + LANES];
            v01 = fma(vec4f(p0), dov, v01); k01 = fma(vec4f(d0), qv, k01);
            if (two) { v11 = fma(vec4f(p1), dov, v11); k11 = fma(vec4f(d1), qv, k11); }
          }
        }
      }
      for (var rr = 0u; rr < select(BQ, 0u, NAMED_ACC); rr++) {
        var p: array<f32, RPT_MAX>;
        var ds: array<f32, RPT_MAX>;
        for (var i = 0u; i < RPT; i++) {
          p[i] = ps[(lid.y + i * rs) * BQ + rr];
          ds[i] = dss[(lid.y + i * rs) * BQ + rr];
        }
        for (var jj = 0u; jj < JMAX; jj++) {
          let c4 = lane + LANES * jj;
          if (c4 < D4) {
            let dov = dos[rr * DS4 + c4]; // one load of dout and of q feed RPT key rows
            let qv = qs[rr * DS4 + c4];
            for (var i = 0u; i < RPT; i++) {
              accV[i * JMAX + jj] = fma(vec4f(p[i]), dov, accV[i * JMAX + jj]);
              accK[i * JMAX + jj] = fma(vec4f(ds[i]), qv, accK[i * JMAX + jj]);
            }
          }
        }
      }
    }
  }
  if (NAMED_ACC) {
    storeKV(j0 + lid.y, b, hk, lane, k00, v00);
    if (JMAX > 1u) { storeKV(j0 + lid.y, b, hk, lane + LANES, k01, v01); }
    if (RPT > 1u) {
      storeKV(j0 + lid.y + rs, b, hk, lane, k10, v10);
      if (JMAX > 1u) { storeKV(j0 + lid.y + rs, b, hk, lane + LANES, k11, v11); }
    }
    return;
  }
  for (var i = 0u; i < RPT; i++) {
    let j = j0 + lid.y + i * rs;
    if (j >= dims.T) { continue; }
    let base = ((b * dims.T + j) * dims.Hkv + hk) * D;
    for (var jj = 0u; jj < JMAX; jj++) {
      let c4 = lane + LANES * jj;
      for (var k = 0u; k < 4u; k++) {
        let d = c4 * 4u + k;
        if (d < D) {
          dk[base + d] = accK[i * JMAX + jj][k] * dims.scale;
          dv[base + d] = accV[i * JMAX + jj][k];
        }
      }
    }
  }
}

// Key row j's vec4 column c4 of dk (scaled) and dv, the elements inside D (rows past T are no rows).
fn storeKV(j: u32, b: u32, hk: u32, c4: u32, ka: vec4f, va: vec4f) {
  if (j >= dims.T) { return; }
  let base = ((b * dims.T + j) * dims.Hkv + hk) * D;
  for (var k = 0u; k < 4u; k++) {
    let d = c4 * 4u + k;
    if (d < D) {
      dk[base + d] = ka[k] * dims.scale;
      dv[base + d] = va[k];
    }
  }
}

// P and dS of tile element e (key row e / BQ, query tt = row rr of the query tile); 0 where masked or past the tile.
fn putPds(e: u32, j0: u32, tt: u32, len: u32, rr: u32, s4: vec4f, dp4: vec4f) {
  if (e >= BK * BQ) { return; }
  let c = e / BQ;
  var p = 0.0;
  var ds = 0.0;
  if (j0 + c <= tt && tt < len) {
    p = exp((s4.x + s4.y + s4.z + s4.w) * dims.scale - rowL[rr]);
    ds = p * ((dp4.x + dp4.y + dp4.z + dp4.w) - rowDelta[rr]);
  }
  ps[e] = p;
  dss[e] = ds;
}
