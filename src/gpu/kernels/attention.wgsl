// Causal grouped-query attention forward, flash style: one workgroup owns BQ query rows of one
// (batch, head) and streams key/value tiles of BK rows through workgroup memory with an online
// softmax, so no T x T score matrix exists. Tiles hold rows as vec4 (zero-padded past D, one spare
// vec4 per row so consecutive rows start in different banks). Thread (lane, y) owns rows
// y, y + BQ/RPT (RPT of them) and the vec4 columns lane, lane + 16; all threads share the
// BQ * BK scores of a tile, each computing ept() of them in one key column.
// Glossary: B batch, T tokens, H query heads, Hkv kv heads, D head dim; lens (B) valid lengths.

// Dims (B, T, H, Hkv, scale: usually 1 / sqrt(D)): attention_dims.wgsl, which attention.ts appends.

@group(0) @binding(0) var<storage, read> q: array<f32>;          // (B, T, H, D)
@group(0) @binding(1) var<storage, read> k: array<f32>;          // (B, T, Hkv, D)
@group(0) @binding(2) var<storage, read> v: array<f32>;          // (B, T, Hkv, D)
@group(0) @binding(3) var<storage, read> lens: array<u32>;       // (B)
@group(0) @binding(4) var<storage, read_write> o: array<f32>;    // (B, T, H, D)
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;  // (B, H, T)
@group(0) @binding(6) var<uniform> dims: Dims;

override D: u32 = 64u;           // head dim, at most 4 * LANES * JMAX
override BQ: u32 = 16u;          // query rows per workgroup
override RPT: u32 = 1u;          // query rows per thread (1 or 2): a V load then feeds RPT rows
override BK: u32 = 16u;          // keys per tile
override D4: u32 = (D + 3u) / 4u; // vec4 columns of a row
override DS4: u32 = D4 + 1u;     // vec4 row stride of the tiles
override NAMED_ACC: bool = false; // always false (attention.ts): named registers were tried and dropped
const LANES: u32 = 16u;
const JMAX: u32 = 2u;
const RPT_MAX: u32 = 2u;
// Scores per thread and tile: thread tid computes elements tid + nt i (nt = LANES BQ / RPT threads) of the (BQ, BK)
// tile, one key column (nt is a multiple of BK), so each key vec4 it reads feeds ept() (1 or 2) query rows.
fn ept() -> u32 { return (BK * RPT + LANES - 1u) / LANES; }
const NEG: f32 = -1.0e30; // score of a masked pair; real scores are far above NEG / 2

var<workgroup> qs: array<vec4f, BQ * DS4>; // (BQ, DS4)
var<workgroup> ks: array<vec4f, BK * DS4>; // (BK, DS4)
var<workgroup> vs: array<vec4f, BK * DS4>; // (BK, DS4)
var<workgroup> ss: array<f32, BQ * BK>;    // (BQ, BK) scores of the tile
var<workgroup> ps: array<f32, BQ * BK>;    // (BQ, BK) their probabilities (where BK = LANES)

// Four consecutive head-dim values of a row starting at `base`, zero past D (one function per
// buffer: pointers to storage cannot be passed to functions portably).
// #include attention_load.wgsl FN=loadQ BUF=q

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
    var x = vec4f(0.0);
    if (tt < len) { x = loadQ(((b * dims.T + tt) * dims.H + h) * D, e % D4); }
    qs[(e / D4) * DS4 + e % D4] = x;
  }
  var m: array<f32, RPT_MAX>;
  var l: array<f32, RPT_MAX>;
  var acc: array<vec4f, RPT_MAX * JMAX>; // acc[i * JMAX + j]: row lid.y + i * rs, vec4 column lane + LANES * j
  for (var i = 0u; i < RPT; i++) { m[i] = NEG; }
  // NAMED_ACC: the same state in named registers — row i's max mI, sum lI, columns aI0, aI1.
  var m0 = NEG; var m1 = NEG; var l0 = 0.0; var l1 = 0.0;
  var a00 = vec4f(0.0); var a01 = vec4f(0.0); var a10 = vec4f(0.0); var a11 = vec4f(0.0);
  let two = RPT > 1u;
  let r1 = lid.y + rs;
  let col0 = lane < D4;
  let col1 = JMAX > 1u && lane + LANES < D4;
  let kEnd = min(q0 + BQ, len); // causal: no key beyond the block's last valid query
  for (var k0 = 0u; k0 < kEnd; k0 += BK) {
    workgroupBarrier(); // the previous tile (and the query tile) are complete
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
      // Named accumulators, not an array: with a dynamically indexed one attention ran much slower on NVIDIA.
      let c = tid % BK;
      let j = k0 + c;
      let r0 = tid / BK;
      let rstep = nt / BK;
      let n = ept();
      var d0 = vec4f(0.0); var d1 = vec4f(0.0);
      for (var i4 = 0u; i4 < D4; i4++) {
        let kv = ks[c * DS4 + i4];
        d0 = fma(qs[r0 * DS4 + i4], kv, d0);
        if (n > 1u) { d1 = fma(qs[min(r0 + rstep, BQ - 1u) * DS4 + i4], kv, d1); }
      }
      putScore(tid, j, q0, len, d0);
      if (n > 1u) { putScore(tid + nt, j, q0, len, d1); }
    }
    workgroupBarrier();
    let own = BK == LANES;
    if (NAMED_ACC) {
      var t0 = m0;
      var t1 = m1;
      for (var c = 0u; c < BK; c++) {
        t0 = max(t0, ss[lid.y * BK + c]);
        if (two) { t1 = max(t1, ss[r1 * BK + c]); }
      }
      let al0 = exp(m0 - t0);
      l0 *= al0; a00 *= al0; a01 *= al0; m0 = t0;
      if (two) { let al1 = exp(m1 - t1); l1 *= al1; a10 *= al1; a11 *= al1; m1 = t1; }
      if (own) {
        let s0 = ss[lid.y * BK + lane];
        ps[lid.y * BK + lane] = select(0.0, exp(s0 - t0), s0 > NEG * 0.5);
        if (two) {
          let s1 = ss[r1 * BK + lane];
          ps[r1 * BK + lane] = select(0.0, exp(s1 - t1), s1 > NEG * 0.5);
        }
        workgroupBarrier();
      }
      for (var c = 0u; c < BK; c++) {
        var p0 = 0.0;
        var p1 = 0.0;
        if (own) {
          p0 = ps[lid.y * BK + c];
          if (two) { p1 = ps[r1 * BK + c]; }
        } else {
          let s0 = ss[lid.y * BK + c];
          p0 = select(0.0, exp(s0 - t0), s0 > NEG * 0.5);
          if (two) { let s1 = ss[r1 * BK + c]; p1 = select(0.0, exp(s1 - t1), s1 > NEG * 0.5); }
        }
        l0 += p0;
        if (two) { l1 += p1; }
        if (col0) {
          let vv = vs[c * DS4 + lane];
          a00 = fma(vec4f(p0), vv, a00);
          if (two) { a10 = fma(vec4f(p1), vv, a10); }
        }
        if (col1) {
          let vv = vs[c * DS4 + lane + LANES];
          a01 = fma(vec4f(p0), vv, a01);
          if (two) { a11 = fma(vec4f(p1), vv, a11); }
        }
      }
      continue;
    }
    var mt: array<f32, RPT_MAX>;
    for (var i = 0u; i < RPT; i++) {
      let row = lid.y + i * rs;
      mt[i] = m[i];
      for (var c = 0u; c < BK; c++) { mt[i] = max(mt[i], ss[row * BK + c]); }
      let alpha = exp(m[i] - mt[i]);
      l[i] *= alpha;
      for (var j = 0u; j < JMAX; j++) { acc[i * JMAX + j] *= alpha; }
      m[i] = mt[i];
    }
    // With BK = LANES the scores a thread wrote (putScore: key lane of its own rows) turn into probabilities once, in
    // ps, instead of in each of the row's 16 threads for every key.
    if (own) {
      for (var i = 0u; i < RPT; i++) {
        let e = (lid.y + i * rs) * BK + lane;
        let s = ss[e];
        ps[e] = select(0.0, exp(s - mt[i]), s > NEG * 0.5);
      }
      workgroupBarrier();
    }
    for (var c = 0u; c < BK; c++) {
      var p: array<f32, RPT_MAX>;
      for (var i = 0u; i < RPT; i++) {
        let e = (lid.y + i * rs) * BK + c;
        if (own) {
          p[i] = ps[e];
        } else {
          let s = ss[e];
          p[i] = select(0.0, exp(s - mt[i]), s > NEG * 0.5);
        }
        l[i] += p[i];
      }
      for (var j = 0u; j < JMAX; j++) {
        let c4 = lane + LANES * j;
        if (c4 < D4) {
          let vv = vs[c * DS4 + c4]; // one load feeds RPT rows
          for (var i = 0u; i < RPT; i++) { acc[i * JMAX + j] = fma(vec4f(p[i]), vv, acc[i * JMAX + j]); }
        }
      }
    }
  }
  if (NAMED_ACC) {
    storeO(q0 + lid.y, b, h, len, lane, m0, l0, a00, a01);
    if (two) { storeO(q0 + r1, b, h, len, lane, m1, l1, a10, a11); }
    return;
  }
  for (var i = 0u; i < RPT; i++) {
    let t = q0 + lid.y + i * rs;
    if (t >= dims.T) { continue; }
    let valid = t < len;
    let base = ((b * dims.T + t) * dims.H + h) * D;
    for (var j = 0u; j < JMAX; j++) {
      let c4 = lane + LANES * j;
      for (var k = 0u; k < 4u; k++) {
        let d = c4 * 4u + k;
        if (d < D) { o[base + d] = select(0.0, acc[i * JMAX + j][k] / l[i], valid); }
      }
    }
    if (lane == 0u) { lse[(b * dims.H + h) * dims.T + t] = select(0.0, m[i] + log(l[i]), valid); }
  }
}

// Score element e (row e / BK of the tile, key j) from its dot product, or NEG where masked; e past the tile is no element.
fn putScore(e: u32, j: u32, q0: u32, len: u32, d: vec4f) {
  if (e >= BQ * BK) { return; }
  var sc = NEG;
  if (j <= q0 + e / BK && j < len) { sc = (d.x + d.y + d.z + d.w) * dims.scale; }
  ss[e] = sc;
}

// Query row t's output (its vec4 columns lane and lane + LANES) and lse from its max, sum and accumulators (NAMED_ACC).
fn storeO(t: u32, b: u32, h: u32, len: u32, lane: u32, mx: f32, sm: f32, c0: vec4f, c1: vec4f) {
  if (t >= dims.T) { return; }
  let valid = t < len;
  let base = ((b * dims.T + t) * dims.H + h) * D;
  for (var k = 0u; k < 4u; k++) {
    let d0 = lane * 4u + k;
    if (d0 < D) { o[base + d0] = select(0.0, c0[k] / sm, valid); }
    let d1 = (lane + LANES) * 4u + k;
    if (JMAX > 1u && d1 < D) { o[base + d1] = select(0.0, c1[k] / sm, valid); }
  }
  if (lane == 0u) { lse[(b * dims.H + h) * dims.T + t] = select(0.0, mx + log(sm), valid); }
}
