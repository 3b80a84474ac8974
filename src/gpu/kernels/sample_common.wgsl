// Helpers of sample.wgsl (prepended to it by sample.ts): the workgroup size, the order-preserving
// float key, the counter-based mix, and workgroup reductions and prefix sums. Every reduction ends in
// workgroupUniformLoad, so binary searches on its result stay in uniform control flow.

const WG = 256u;
const NEG = -3.0e38;
var<workgroup> redF: array<f32, WG>;
var<workgroup> redU: array<u32, WG>;

// Order-preserving key of a float: a < b as floats iff key(a) < key(b) (-0 sorts below +0).
fn okey(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  return select(b | 0x80000000u, ~b, (b & 0x80000000u) != 0u);
}
fn ofloat(k: u32) -> f32 {
  return bitcast<f32>(select(~k, k & 0x7fffffffu, (k & 0x80000000u) != 0u));
}
// lowbias32 (Wellons): the draw's 32 bits from (seed, counter); sample.ref.ts mixes the same way.
fn mix(x0: u32) -> u32 {
  var x = x0;
  x ^= x >> 16u; x *= 0x7feb352du; x ^= x >> 15u; x *= 0x846ca68bu; x ^= x >> 16u;
  return x;
}

fn sumF(t: u32, v: f32) -> f32 {
  redF[t] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) { redF[t] += redF[t + s]; }
    workgroupBarrier();
  }
  let r = workgroupUniformLoad(&redF[0]);
  workgroupBarrier();
  return r;
}
fn sumU(t: u32, v: u32) -> u32 {
  redU[t] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) { redU[t] += redU[t + s]; }
    workgroupBarrier();
  }
  let r = workgroupUniformLoad(&redU[0]);
  workgroupBarrier();
  return r;
}
fn maxU(t: u32, v: u32) -> u32 {
  redU[t] = v;
  workgroupBarrier();
  for (var s = WG / 2u; s > 0u; s >>= 1u) {
    if (t < s) { redU[t] = max(redU[t], redU[t + s]); }
    workgroupBarrier();
  }
  let r = workgroupUniformLoad(&redU[0]);
  workgroupBarrier();
  return r;
}
// Inclusive prefix sums over threads (Hillis-Steele), left in redF; the caller reads neighbours.
fn scanF(t: u32, v: f32) {
  redF[t] = v;
  workgroupBarrier();
  for (var off = 1u; off < WG; off <<= 1u) {
    var add = 0.0;
    if (t >= off) { add = redF[t - off]; }
    workgroupBarrier();
    redF[t] += add;
    workgroupBarrier();
  }
}
fn scanU(t: u32, v: u32) {
  redU[t] = v;
  workgroupBarrier();
  for (var off = 1u; off < WG; off <<= 1u) {
    var add = 0u;
    if (t >= off) { add = redU[t - off]; }
    workgroupBarrier();
    redU[t] += add;
    workgroupBarrier();
  }
}
