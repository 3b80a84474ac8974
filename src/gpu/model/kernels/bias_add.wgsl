// Broadcast bias: y[n, o] += b[o]. One thread per element.
// Dimension letters: N rows, O output features.

struct Params {
  N: u32,
  O: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> b: array<f32>;          // (O)
@group(0) @binding(1) var<storage, read_write> y: array<f32>;    // (N, O)
@group(0) @binding(2) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 64u + gid.x;
  if (i >= p.N * p.O) { return; }
  y[i] += b[i % p.O];
}
