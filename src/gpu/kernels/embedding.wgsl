// Embedding gather: out[n, c] = table[ids[n], c]; an id >= V gives a row of zeros.
// Dimension letters: N rows (batch*tokens), V vocabulary, C channels.

struct Params {
  N: u32,
  C: u32,
  V: u32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;       // (N)
@group(0) @binding(1) var<storage, read> table: array<f32>;     // (V, C)
@group(0) @binding(2) var<storage, read_write> out: array<f32>; // (N, C)
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t; // flat index over (N, C)
  if (i >= p.N * p.C) { return; }
  let n = i / p.C;
  let c = i % p.C;
  let id = ids[n];
  var v = 0.0;
  if (id < p.V) { v = table[id * p.C + c]; }
  out[i] = v;
}
