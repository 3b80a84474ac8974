// RMSNorm backward to the weight, pass 2 (when pass 1 split the rows into S > 1 slices):
// dw[c] = sum over s of partial[s, c], in slice order (+ dw[c] when ACCUMULATE).
// Dimension letters: C channels, S row slices.

struct Params {
  C: u32,
  S: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> partial: array<f32>;  // (S, C)
@group(0) @binding(1) var<storage, read_write> dw: array<f32>; // (C)
@group(0) @binding(2) var<uniform> p: Params;

override WG: u32 = 256u;
override ACCUMULATE: bool = false;

@compute @workgroup_size(WG)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let c = gid.x;
  if (c >= p.C) { return; }
  var v = 0.0;
  for (var s = 0u; s < p.S; s++) { v += partial[s * p.C + c]; }
  if (ACCUMULATE) { v += dw[c]; }
  dw[c] = v;
}
