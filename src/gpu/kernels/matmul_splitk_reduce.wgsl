// Split-K reduction: C[i] = alpha * sum over s of P[s, i] (+ C[i] when ACCUMULATE), i < MN.
// Entry point main_bias also adds bias[i % N] (C (M, N) row-major; Qwen2's q/k/v biases) after the rest, in that
// order (the rounding of a separate bias pass after the product); with S = 0 and ACCUMULATE it is C += bias alone.
struct Params {
  MN: u32,
  S: u32,
  alpha: f32,
  N: u32,  // columns of C (main_bias only)
}

@group(0) @binding(0) var<storage, read> p: array<f32>;        // (S, MN) partial products
@group(0) @binding(1) var<storage, read_write> c: array<f32>;  // (MN)
@group(0) @binding(2) var<uniform> prm: Params;

@group(0) @binding(3) var<storage, read> bias: array<f32>;     // (N), main_bias only

override ACCUMULATE: bool = false;

fn reduced(i: u32) -> f32 {
  var s = 0.0;
  for (var z = 0u; z < prm.S; z++) { s += p[z * prm.MN + i]; }
  var x = prm.alpha * s;
  if (ACCUMULATE) { x += c[i]; }
  return x;
}

@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 256u + gid.x;
  if (i >= prm.MN) { return; }
  c[i] = reduced(i);
}

@compute @workgroup_size(256)
fn main_bias(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 256u + gid.x;
  if (i >= prm.MN) { return; }
  c[i] = reduced(i) + bias[i % prm.N];
}
