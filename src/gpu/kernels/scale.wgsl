// In-place scale y = alpha * y (e.g. dividing accumulated gradients by the micro-batch count).
// Any shape, flattened to `count` elements.

struct Params {
  count: u32,
  alpha: f32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read_write> y: array<f32>; // (count)
@group(0) @binding(1) var<uniform> p: Params;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t;
  if (i >= p.count) { return; }
  y[i] = p.alpha * y[i];
}
