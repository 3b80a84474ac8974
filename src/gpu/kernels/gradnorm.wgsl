// Global gradient norm in two passes (a template: FINAL).
//   pass 1  run once per gradient buffer: each workgroup writes the sum of squares of its grid-stride share of g and
//           whether any element was NaN or Inf into partials[offset + workgroup].
//   FINAL   one workgroup reduces the P partials of pass 1 into the stats the AdamW kernel reads, so clipping and
//           skipping need no CPU round trip: norm = sqrt(sum of squares), clip = min(1, maxNorm / (norm + 1e-6)) as
//           torch's clip_grad_norm_ (1 when maxNorm <= 0), nonfinite = 1 when any element or the sum is NaN/Inf.
// Dimension letters: n elements of one buffer, P partials in all.

struct Partial {
  sumsq: f32,
  nonfinite: u32, // 1 when an element of this share was NaN or +-Inf
}

// #if FINAL
struct Stats {
  sumsq: f32,
  norm: f32,
  clip: f32,
  nonfinite: u32,
}

struct Params {
  count: u32, // P
  maxNorm: f32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> partials: array<Partial>;  // (P)
@group(0) @binding(1) var<storage, read_write> stats: Stats;
@group(0) @binding(2) var<uniform> p: Params;
// #else
struct Params {
  count: u32,  // n
  offset: u32, // first partial slot of this buffer
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> g: array<f32>;                   // (n)
@group(0) @binding(1) var<storage, read_write> partials: array<Partial>;  // (P)
@group(0) @binding(2) var<uniform> p: Params;
// #endif

override WG: u32 = 256u; // a power of two

var<workgroup> sums: array<f32, WG>;
var<workgroup> flags: array<u32, WG>;

// Tested on the bits: implementations may assume floats are finite and fold x != x away.
fn isNonFinite(v: f32) -> bool {
  return (bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u;
}

@compute @workgroup_size(WG)
// #if FINAL
fn main(@builtin(local_invocation_index) t: u32) {
  var s = 0.0;
  var bad = 0u;
  for (var i = t; i < p.count; i += WG) {
    s += partials[i].sumsq;
    bad |= partials[i].nonfinite;
  }
// #else
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  var s = 0.0;
  var bad = 0u;
  for (var i = wg.x * WG + t; i < p.count; i += nwg.x * WG) {
    let v = g[i];
    if (isNonFinite(v)) { bad = 1u; }
    s = fma(v, v, s);
  }
// #endif
  sums[t] = s;
  flags[t] = bad;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (t < k) {
      sums[t] += sums[t + k];
      flags[t] |= flags[t + k];
    }
    workgroupBarrier();
  }
  // #if FINAL
  if (t == 0u) {
    let total = sums[0];
    let norm = sqrt(total);
    var clip = 1.0;
    if (p.maxNorm > 0.0) { clip = min(1.0, p.maxNorm / (norm + 1e-6)); }
    let nonfinite = select(flags[0], 1u, isNonFinite(total));
    stats = Stats(total, norm, clip, nonfinite);
  }
  // #else
  if (t == 0u) { partials[p.offset + wg.x] = Partial(sums[0], flags[0]); }
  // #endif
}
