// Attention backward, query side: dq (B, T, H, D) and delta (B, H, T) = rowsum(dout * o), which
// attention_bwd_dkv.wgsl reads, so this kernel runs first. Probabilities are recomputed from the
// forward's lse: p = exp(q.k * scale - lse), dS = p * (dout.v - delta), dq = scale * sum_j dS_j k_j.
// Same tiling as attention.wgsl: BQ query rows per workgroup (RPT per thread), key/value tiles of
// BK rows, vec4 rows.

// Dims (B, T, H, Hkv, scale: usually 1 / sqrt(D)): attention_dims.wgsl, which attention.ts appends.

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
override RPT: u32 = 1u; // query rows per thread (1 or 2)
override D4: u32 = (D + 3u) / 4u;
override DS4: u32 = D4 + 1u;
override NAMED_ACC: bool = false; // always false (attention.ts): named registers were tried and dropped
const LANES: u32 = 16u;
const JMAX: u32 = 2u;
const RPT_MAX: u32 = 2u;
fn ept() -> u32 { return (BK * RPT + LANES - 1u) / LANES; } // tile elements per thread (nt = LANES BQ / RPT threads)

var<workgroup> qs: array<vec4f, BQ * DS4>;  // (BQ, DS4)
var<workgroup> dos: array<vec4f, BQ * DS4>; // (BQ, DS4)
var<workgroup> ks: array<vec4f, BK * DS4>;  // (BK, DS4)
var<workgroup> vs: array<vec4f, BK * DS4>;  // (BK, DS4)
var<workgroup> ss: array<f32, BQ * BK>;     // (BQ, BK) dS of the tile
var<workgroup> rowL: array<f32, BQ>;
var<workgroup> rowDelta: array<f32, BQ>;

// Four consecutive head-dim values from `base`, zero past D (one function per buffer).
// #include attention_load.wgsl FN=loadQ BUF=q

// #include attention_load.wgsl FN=loadO BUF=o

// #include attention_load.wgsl FN=loadDout BUF=dout

// #include attention_load.wgsl FN=loadK BUF=k

// #include attention_load.wgsl FN=loadV BUF=v

@compute @workgroup_size(LANES, BQ / RPT)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let b = wg.z;
  let h = wg.y;
  let q0 = wg.x * BQ;
  let hk = h / (dims.H / dims.Hkv);
  let len = min(lens[b], dims.T);
  let lane = lid.x;
  let rs = BQ / RPT; // thread rows; thread row y owns tile rows y, y + rs, ...
  let tid = lid.y * LANES + lane;
  let nt = LANES * rs;

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
  // delta = rowsum(dout * o) and the row's lse. Where BK = LANES the row's 16 threads each sum dout * o over their vec4
  // columns into ss (BQ x LANES) and lane 0 adds the 16 partials in lane order; else lane 0 walks the row alone.
  if (BK == LANES) {
    for (var i = 0u; i < RPT; i++) {
      let row = lid.y + i * rs;
      let t = q0 + row;
      var part = 0.0;
      if (t < len) {
        let base = ((b * dims.T + t) * dims.H + h) * D;
        for (var jj = 0u; jj < JMAX; jj++) {
          let c4 = lane + LANES * jj;
          if (c4 < D4) {
            let x = loadDout(base, c4) * loadO(base, c4);
            part += (x.x + x.y) + (x.z + x.w);
          }
        }
      }
      ss[row * LANES + lane] = part;
    }
    workgroupBarrier();
  }
  if (lane == 0u) {
    for (var i = 0u; i < RPT; i++) {
      let row = lid.y + i * rs;
      let t = q0 + row;
      var dl = 0.0;
      var lv = 0.0;
      if (t < len) {
        let base = ((b * dims.T + t) * dims.H + h) * D;
        if (BK == LANES) {
          for (var l = 0u; l < LANES; l++) { dl += ss[row * LANES + l]; }
        } else {
          for (var d = 0u; d < D; d++) { dl = fma(dout[base + d], o[base + d], dl); }
        }
        lv = lse[(b * dims.H + h) * dims.T + t];
      }
      rowDelta[row] = dl;
      rowL[row] = lv;
      if (t < dims.T) { delta[(b * dims.H + h) * dims.T + t] = dl; }
    }
  }
  var acc: array<vec4f, RPT_MAX * JMAX>; // acc[i * JMAX + j]: row lid.y + i * rs, vec4 column lane + LANES * j
  // NAMED_ACC: the same sums in named registers aIJ (row i, column j) instead of the array.
  var a00 = vec4f(0.0); var a01 = vec4f(0.0); var a10 = vec4f(0.0); var a11 = vec4f(0.0);
  let kEnd = min(q0 + BQ, len);
  for (var k0 = 0u; k0 < kEnd; k0 += BK) {
    workgroupBarrier();
    for (var e = tid; e < BK * D4; e += nt) {
      let j = k0 + e / D4;
      var kx = vec4f(0.0);
      var vx = vec4f(0.0);
      if (j < kEnd) {
        let base = ((b * dims.T + j) * dims.Hkv + hk) * D;
        kx = loadK(base, e % D4);
        vx = loadV(base, e % D4);
      }
      ks[(e / D4) * DS4 + e % D4] = kx;
      vs[(e / D4) * DS4 + e % D4] = vx;
    }
    workgroupBarrier();
    {
      // Elements tid + nt i (i < ept() <= 2) of the (BQ, BK) tile: one key column, so each k and v vec4 read feeds
      // ept() query rows. Named accumulators: with a dynamically indexed array attention ran much slower on NVIDIA.
      let c = tid % BK;
      let j = k0 + c;
      let r0 = tid / BK;
      let r1 = min(r0 + nt / BK, BQ - 1u);
      let two = ept() > 1u;
      var s0 = vec4f(0.0); var s1 = vec4f(0.0); var p0 = vec4f(0.0); var p1 = vec4f(0.0);
      for (var i4 = 0u; i4 < D4; i4++) {
        let kv = ks[c * DS4 + i4];
        let vv = vs[c * DS4 + i4];
        s0 = fma(qs[r0 * DS4 + i4], kv, s0);
        p0 = fma(dos[r0 * DS4 + i4], vv, p0);
        if (two) {
          s1 = fma(qs[r1 * DS4 + i4], kv, s1);
          p1 = fma(dos[r1 * DS4 + i4], vv, p1);
        }
      }
      putDs(tid, j, q0, len, s0, p0);
      if (two) { putDs(tid + nt, j, q0, len, s1, p1); }
    }
    workgroupBarrier();
    if (NAMED_ACC) {
      let two = RPT > 1u;
      let c0 = lane < D4;
      let c1 = JMAX > 1u && lane + LANES < D4;
      for (var c = 0u; c < BK; c++) {
        let d0 = ss[lid.y * BK + c];
        var d1 = 0.0;
        if (two) { d1 = ss[(lid.y + rs) * BK + c]; }
        if (c0) {
          let kv = ks[c * DS4 + lane];
          a00 = fma(vec4f(d0), kv, a00);
          if (two) { a10 = fma(vec4f(d1), kv, a10); }
        }
        if (c1) {
          let kv = ks[c * DS4 + lane + LANES];
          a01 = fma(vec4f(d0), kv, a01);
          if (two) { a11 = fma(vec4f(d1), kv, a11); }
        }
      }
    }
    for (var c = 0u; c < select(BK, 0u, NAMED_ACC); c++) {
      var ds: array<f32, RPT_MAX>;
      for (var i = 0u; i < RPT; i++) { ds[i] = ss[(lid.y + i * rs) * BK + c]; }
      for (var j = 0u; j < JMAX; j++) {
        let c4 = lane + LANES * j;
        if (c4 < D4) {
          let kv = ks[c * DS4 + c4]; // one load feeds RPT rows
          for (var i = 0u; i < RPT; i++) { acc[i * JMAX + j] = fma(vec4f(ds[i]), kv, acc[i * JMAX + j]); }
        }
      }
    }
  }
  if (NAMED_ACC) {
    storeDq(q0 + lid.y, b, h, lane, a00);
    if (JMAX > 1u) { storeDq(q0 + lid.y, b, h, lane + LANES, a01); }
    if (RPT > 1u) {
      storeDq(q0 + lid.y + rs, b, h, lane, a10);
      if (JMAX > 1u) { storeDq(q0 + lid.y + rs, b, h, lane + LANES, a11); }
    }
    return;
  }
  for (var i = 0u; i < RPT; i++) {
    let t = q0 + lid.y + i * rs;
    if (t >= dims.T) { continue; }
    let base = ((b * dims.T + t) * dims.H + h) * D;
    for (var j = 0u; j < JMAX; j++) {
      let c4 = lane + LANES * j;
      for (var k = 0u; k < 4u; k++) {
        let d = c4 * 4u + k;
        if (d < D) { dq[base + d] = acc[i * JMAX + j][k] * dims.scale; }
      }
    }
  }
}

// Query row t's vec4 column c4 of dq (scaled), the elements inside D (rows past T are no rows).
fn storeDq(t: u32, b: u32, h: u32, c4: u32, a: vec4f) {
  if (t >= dims.T) { return; }
  let base = ((b * dims.T + t) * dims.H + h) * D;
  for (var k = 0u; k < 4u; k++) {
    let d = c4 * 4u + k;
    if (d < D) { dq[base + d] = a[k] * dims.scale; }
  }
}

// dS of tile element e (query row e / BK, key j) from its score and dP dot products; 0 where masked or past the tile.
fn putDs(e: u32, j: u32, q0: u32, len: u32, s4: vec4f, dp4: vec4f) {
  if (e >= BQ * BK) { return; }
  let rr = e / BK;
  var ds = 0.0;
  if (j <= q0 + rr && q0 + rr < len) {
    let p = exp((s4.x + s4.y + s4.z + s4.w) * dims.scale - rowL[rr]);
    ds = p * ((dp4.x + dp4.y + dp4.z + dp4.w) - rowDelta[rr]);
  }
  ss[e] = ds;
}
