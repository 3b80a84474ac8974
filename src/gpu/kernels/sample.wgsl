// Token choice on the GPU, one workgroup per row: greedy, or a draw from softmax(logits / T) after
// top-k, top-p and min-p (transformers' order, as src/model/sampler.ts samplingDistribution keeps them:
// tokens below e^-40 of the best dropped first), in id order by the inverse CDF of a counter-based
// uniform; and the chosen token's log-probability under softmax(logits) (temperature 1, no filter).
// Thresholds are found by binary search over the order-preserving u32 key of the logits, so nothing is
// sorted; ties at a threshold keep the lowest ids. sample.ref.ts is the float64 reference.
// Dimension letters: R logits rows, B output rows, V vocabulary.

struct Params {
  V: u32,
  rowStride: u32,   // floats between logits rows
  greedy: u32,      // 1: argmax (lowest id among equal maxima)
  topK: u32,        // 0: off
  temperature: f32,
  topP: f32,        // 1: off
  minP: f32,        // 0: off
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> logits: array<f32>;          // (R, rowStride)
@group(0) @binding(1) var<storage, read> src: array<u32>;             // (B) logits row of output row b
@group(0) @binding(2) var<storage, read> seeds: array<u32>;           // (B) the row's RNG seed
@group(0) @binding(3) var<storage, read_write> counters: array<u32>;  // (B) draws made so far; +1 per call
@group(0) @binding(4) var<storage, read_write> out: array<u32>;       // (B, 2) token, bitcast(log-probability)
@group(0) @binding(5) var<uniform> p: Params;

// WG, NEG, okey / ofloat, mix, the reductions and scans: sample_common.wgsl (prepended by sample.ts).

// How many candidates (x >= lo) have key >= k.
fn countGe(t: u32, base: u32, k: u32, lo: f32) -> u32 {
  var c = 0u;
  for (var v = t; v < p.V; v += WG) {
    let x = logits[base + v];
    if (x >= lo && okey(x) >= k) { c += 1u; }
  }
  return sumU(t, c);
}
// Mass exp((x - mx) / T) of candidates with key > k (strict) or >= k.
fn massAbove(t: u32, base: u32, k: u32, strict: bool, lo: f32, mx: f32) -> f32 {
  var s = 0.0;
  for (var v = t; v < p.V; v += WG) {
    let x = logits[base + v];
    let kx = okey(x);
    if (x >= lo && (kx > k || (!strict && kx == k))) { s += exp((x - mx) / p.temperature); }
  }
  return sumF(t, s);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  let b = wg.x;
  let base = src[b] * p.rowStride;
  let V = p.V;
  // Max and its lowest id: each thread sees its ids in ascending order, so its first maximum is its lowest.
  var m = NEG;
  var mi = 0u;
  for (var v = t; v < V; v += WG) {
    let x = logits[base + v];
    if (x > m) { m = x; mi = v; }
  }
  let mk = maxU(t, okey(m));
  let mx = ofloat(mk);
  // Lowest id holding the maximum: reduce 0xffffffff - id by max.
  let amax = 0xffffffffu - maxU(t, select(0u, 0xffffffffu - mi, okey(m) == mk));
  var z = 0.0;
  for (var v = t; v < V; v += WG) { z += exp(logits[base + v] - mx); }
  let lse = mx + log(sumF(t, z));
  let counter = counters[b];
  var token = amax;
  if (p.greedy == 0u) {
    let T = p.temperature;
    let floorX = mx - 40.0 * T;
    // Top-k: the k-th largest key among candidates; ties at it keep the lowest ids.
    var tau = okey(floorX);
    var nT = 0xffffffffu;
    if (p.topK > 0u) {
      let k = p.topK;
      if (countGe(t, base, tau, floorX) > k) {
        var lo = tau;
        var hi = mk;
        while (lo < hi) {
          let mid = lo + (hi - lo + 1u) / 2u;
          if (countGe(t, base, mid, floorX) >= k) { lo = mid; } else { hi = mid - 1u; }
        }
        tau = lo;
        nT = k - countGe(t, base, tau + 1u, floorX);
      }
    }
    // Top-p over what top-k kept: the largest key whose mass at and above it reaches topP of the total.
    if (p.topP < 1.0) {
      let ties0 = countGe(t, base, tau, floorX) - countGe(t, base, tau + 1u, floorX);
      let wTau0 = exp((ofloat(tau) - mx) / T);
      let total = massAbove(t, base, tau, true, floorX, mx) + f32(min(nT, ties0)) * wTau0;
      let goal = p.topP * total;
      var lo = tau;
      var hi = mk;
      while (lo < hi) {
        let mid = lo + (hi - lo + 1u) / 2u;
        // mid > tau here, so every key at or above it is one top-k kept.
        if (massAbove(t, base, mid, false, floorX, mx) >= goal) { lo = mid; } else { hi = mid - 1u; }
      }
      let above = massAbove(t, base, lo, true, floorX, mx);
      var avail = countGe(t, base, lo, floorX) - countGe(t, base, lo + 1u, floorX);
      if (lo == tau) { avail = min(avail, nT); }
      let need = u32(max(1.0, ceil((goal - above) / exp((ofloat(lo) - mx) / T))));
      tau = lo;
      nT = max(1u, min(need, avail));
    }
    let minX = select(NEG, mx + T * log(p.minP), p.minP > 0.0);
    // The draw, in id order: each thread owns a contiguous chunk of ids.
    let C = (V + WG - 1u) / WG;
    let v0 = min(V, t * C);
    let v1 = min(V, v0 + C);
    var ties = 0u;
    for (var v = v0; v < v1; v++) { if (okey(logits[base + v]) == tau) { ties += 1u; } }
    scanU(t, ties);
    let tieBase = redU[t] - ties;
    workgroupBarrier();
    var w = 0.0;
    var rank = tieBase;
    var last = 0u;
    for (var v = v0; v < v1; v++) {
      let x = logits[base + v];
      let kx = okey(x);
      var keep = x >= floorX && x >= minX && kx >= tau;
      if (kx == tau) { keep = keep && rank < nT; rank += 1u; }
      if (keep) { w += exp((x - mx) / T); last = v + 1u; }
    }
    scanF(t, w);
    let hiT = redF[t];
    let Z = workgroupUniformLoad(&redF[WG - 1u]);
    let pre = select(0.0, redF[max(t, 1u) - 1u], t > 0u);
    workgroupBarrier();
    let u = f32(mix(seeds[b] ^ mix(counter + 0x9e3779b9u)) >> 8u) * (1.0 / 16777216.0);
    let aim = u * Z;
    var pick = 0u;
    if (w > 0.0 && aim >= pre && aim < hiT) {
      // Walk the chunk again from zero against the local target: the same sums as above, so it lands.
      let local = aim - pre;
      var acc = 0.0;
      rank = tieBase;
      pick = last;
      for (var v = v0; v < v1; v++) {
        let x = logits[base + v];
        let kx = okey(x);
        var keep = x >= floorX && x >= minX && kx >= tau;
        if (kx == tau) { keep = keep && rank < nT; rank += 1u; }
        if (keep) {
          acc += exp((x - mx) / T);
          if (local < acc) { pick = v + 1u; break; }
        }
      }
    }
    // One thread holds the target (0 when rounding put it past the total: the last kept id then).
    let picked = maxU(t, pick);
    let lastAll = maxU(t, last);
    token = select(lastAll, picked, picked > 0u) - 1u;
  }
  if (t == 0u) {
    out[2u * b] = token;
    out[2u * b + 1u] = bitcast<u32>(logits[base + token] - lse);
    counters[b] = counter + 1u;
  }
}
