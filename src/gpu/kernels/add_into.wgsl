// In-place accumulate y = alpha * x + beta * y (y += alpha * x with beta = 1; gradient
// accumulation, residual add into the stream). Any shape, flattened to `count` elements.

struct Params {
  count: u32,
  alpha: f32,
  beta: f32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;        // (count)
@group(0) @binding(1) var<storage, read_write> y: array<f32>;  // (count)
@group(0) @binding(2) var<uniform> p: Params;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t;
  if (i >= p.count) { return; }
  y[i] = p.alpha * x[i] + p.beta * y[i];
}
