// Global gradient norm, pass 1 of 2, run once per gradient buffer: each workgroup writes the sum
// of squares of its grid-stride share of g and whether any element was NaN or Inf into
// partials[offset + workgroup]. Dimension letters: n elements of this buffer, P partials in all.

struct Partial {
  sumsq: f32,
  nonfinite: u32, // 1 when an element of this share was NaN or +-Inf
}

struct Params {
  count: u32,  // n
  offset: u32, // first partial slot of this buffer
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> g: array<f32>;                   // (n)
@group(0) @binding(1) var<storage, read_write> partials: array<Partial>;  // (P)
@group(0) @binding(2) var<uniform> p: Params;

override WG: u32 = 256u; // a power of two

var<workgroup> sums: array<f32, WG>;
var<workgroup> flags: array<u32, WG>;

// Tested on the bits: implementations may assume floats are finite and fold x != x away.
fn isNonFinite(v: f32) -> bool {
  return (bitcast<u32>(v) & 0x7f800000u) == 0x7f800000u;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  var s = 0.0;
  var bad = 0u;
  for (var i = wg.x * WG + t; i < p.count; i += nwg.x * WG) {
    let v = g[i];
    if (isNonFinite(v)) { bad = 1u; }
    s = fma(v, v, s);
  }
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
  if (t == 0u) { partials[p.offset + wg.x] = Partial(sums[0], flags[0]); }
}
