// Elementwise linear combination out = alpha * a + beta * b (the residual add with alpha = beta = 1).
// Any shape, flattened to `count` elements; out must be a different buffer from a and b.

struct Params {
  count: u32,
  alpha: f32,
  beta: f32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> a: array<f32>;          // (count)
@group(0) @binding(1) var<storage, read> b: array<f32>;          // (count)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // (count)
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t;
  if (i >= p.count) { return; }
  out[i] = p.alpha * a[i] + p.beta * b[i];
}
