// PRM scalar head, backward to its input: dh[n, c] (+)= dz[n] * w[c], one thread per element.
// Dimension letters: N rows, C channels.

struct Params {
  N: u32,
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> dz: array<f32>;          // (N) dL/dz
@group(0) @binding(1) var<storage, read> wb: array<f32>;          // (C + 1) head weight, then bias
@group(0) @binding(2) var<storage, read_write> dh: array<f32>;    // (N, C) dL/dh
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 256u;
override ACCUMULATE: bool = false;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t;
  if (i >= p.N * p.C) { return; }
  let g = dz[i / p.C] * wb[i % p.C];
  if (ACCUMULATE) { dh[i] += g; } else { dh[i] = g; }
}
