// GRPO-family policy loss over a batch of tokens, in one workgroup: per token the clipped surrogate
// with separate lower/upper clips and the optional k3 KL to a reference,
//   l = -min(r A, clip(r, 1 - epsLow, 1 + epsHigh) A) + beta * (exp(ref - new) - (ref - new) - 1),
// r = exp(new - old), its gradient w * dl/dlogpNew (w: the aggregation weights, mask folded in),
// and the batch sums of the loss parts and metrics. Formulas mirror src/core/grpo.ts.
// Dimension letters: N tokens (S sequences x T positions, flattened).

struct Params {
  N: u32,
  epsLow: f32,
  epsHigh: f32,
  beta: f32,
  hasRef: u32, // 1 when logpRef holds reference log-probs (KL metric, and the KL term when beta != 0)
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> logpNew: array<f32>;    // (N)
@group(0) @binding(1) var<storage, read> logpOld: array<f32>;    // (N)
@group(0) @binding(2) var<storage, read> logpRef: array<f32>;    // (N), or (1) unused when hasRef == 0
@group(0) @binding(3) var<storage, read> mask: array<f32>;       // (N) 1 for counted tokens
@group(0) @binding(4) var<storage, read> weight: array<f32>;     // (N) aggregation weights
@group(0) @binding(5) var<storage, read> adv: array<f32>;        // (N) advantage of each token
@group(0) @binding(6) var<storage, read> entropy: array<f32>;    // (N) per-token entropy (metric)
@group(0) @binding(7) var<storage, read_write> grad: array<f32>; // (N) dL/dlogpNew
@group(0) @binding(8) var<storage, read_write> stats: array<f32>; // (12) see below
@group(0) @binding(9) var<uniform> p: Params;

// stats: 0 pg loss, 1 KL loss (aggregated), 2 tokens, 3 clip-low tokens, 4 clip-high tokens,
// 5 sum k3(ratio), 6 sum k3 to ref, 7 sum ratio, 8 sum entropy, 9 min ratio, 10 max ratio, 11 0.
const WG: u32 = 256u;
const NSUM: u32 = 9u; // the additive statistics, slots 0..8

var<workgroup> sums: array<array<f32, NSUM>, WG>;
var<workgroup> mins: array<f32, WG>;
var<workgroup> maxs: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(local_invocation_index) t: u32) {
  var acc: array<f32, NSUM>;
  var rmin = 3.0e38;
  var rmax = -3.0e38;
  let lo = 1.0 - p.epsLow;
  let hi = 1.0 + p.epsHigh;
  for (var i = t; i < p.N; i += WG) {
    let m = mask[i];
    if (m == 0.0) { grad[i] = 0.0; continue; }
    let a = adv[i];
    let logRatio = logpNew[i] - logpOld[i];
    let r = exp(logRatio);
    let highActive = a > 0.0 && r > hi;
    let lowActive = a < 0.0 && r < lo;
    var surrogate = r * a;
    var dl = -a * r;
    if (highActive) { surrogate = hi * a; dl = 0.0; }
    if (lowActive) { surrogate = lo * a; dl = 0.0; }
    let w = weight[i];
    acc[0] += w * -surrogate;
    if (p.hasRef == 1u) {
      let d = logpRef[i] - logpNew[i];
      let e = exp(d);
      let k = e - d - 1.0;
      acc[6] += m * k;
      if (p.beta != 0.0) {
        acc[1] += w * k;
        dl += p.beta * (1.0 - e);
      }
    }
    grad[i] = w * dl;
    acc[2] += m;
    if (lowActive) { acc[3] += m; }
    if (highActive) { acc[4] += m; }
    acc[5] += m * (r - 1.0 - logRatio);
    acc[7] += m * r;
    acc[8] += m * entropy[i];
    rmin = min(rmin, r);
    rmax = max(rmax, r);
  }
  for (var j = 0u; j < NSUM; j++) { sums[t][j] = acc[j]; }
  mins[t] = rmin;
  maxs[t] = rmax;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (t < k) {
      for (var j = 0u; j < NSUM; j++) { sums[t][j] += sums[t + k][j]; }
      mins[t] = min(mins[t], mins[t + k]);
      maxs[t] = max(maxs[t], maxs[t + k]);
    }
    workgroupBarrier();
  }
  if (t == 0u) {
    for (var j = 0u; j < NSUM; j++) { stats[j] = sums[0][j]; }
    stats[9] = mins[0];
    stats[10] = maxs[0];
    stats[11] = 0.0;
  }
}
