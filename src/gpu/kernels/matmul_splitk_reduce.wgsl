// Split-K reduction: C[i] = alpha * sum over s of P[s, i] (+ C[i] when ACCUMULATE), i < MN.
struct Params {
  MN: u32,
  S: u32,
  alpha: f32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> p: array<f32>;        // (S, MN) partial products
@group(0) @binding(1) var<storage, read_write> c: array<f32>;  // (MN)
@group(0) @binding(2) var<uniform> prm: Params;

override ACCUMULATE: bool = false;

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 256u + gid.x;
  if (i >= prm.MN) { return; }
  var s = 0.0;
  for (var z = 0u; z < prm.S; z++) { s += p[z * prm.MN + i]; }
  var x = prm.alpha * s;
  if (ACCUMULATE) { x += c[i]; }
  c[i] = x;
}
