// PRM scalar head, backward to its parameters: dwb[c] (+)= sum_n dz[n] h[n, c] for c < C and
// dwb[C] (+)= sum_n dz[n] (the bias). One thread per parameter, looping over the rows in order:
// consecutive threads read consecutive channels of one row, and the sum is deterministic.
// Dimension letters: N rows, C channels.

struct Params {
  N: u32,
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> dz: array<f32>;          // (N) dL/dz
@group(0) @binding(1) var<storage, read> h: array<f32>;           // (N, C) the forward's input
@group(0) @binding(2) var<storage, read_write> dwb: array<f32>;   // (C + 1) dL/dw, then dL/db
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 64u;
override ACCUMULATE: bool = false;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  let c = wg.x * WG + t;
  if (c > p.C) { return; }
  var s = 0.0;
  if (c == p.C) {
    for (var n = 0u; n < p.N; n++) { s += dz[n]; }
  } else {
    for (var n = 0u; n < p.N; n++) { s = fma(dz[n], h[n * p.C + c], s); }
  }
  if (ACCUMULATE) { dwb[c] += s; } else { dwb[c] = s; }
}
