// Backward of logp = z_tgt - lse over one vocabulary chunk, in place on the chunk's logits:
// dz[n, j] = g[n] * ([v0 + j == tgt[n]] - exp(z[n, j] - lse[n])). One thread per element.
// Dimension letters: N rows, Vc columns of this chunk.

struct Params {
  N: u32,
  Vc: u32,
  v0: u32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read_write> z: array<f32>;    // (N, Vc): logits in, dz out
@group(0) @binding(1) var<storage, read> tgt: array<u32>;        // (N)
@group(0) @binding(2) var<storage, read> lse: array<f32>;        // (N)
@group(0) @binding(3) var<storage, read> g: array<f32>;          // (N) dL/dlogp
@group(0) @binding(4) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 64u + gid.x;
  if (i >= p.N * p.Vc) { return; }
  let n = i / p.Vc;
  let j = i % p.Vc;
  var onehot = 0.0;
  if (p.v0 + j == tgt[n]) { onehot = 1.0; }
  z[i] = g[n] * (onehot - exp(z[i] - lse[n]));
}
