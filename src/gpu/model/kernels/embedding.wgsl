// Embedding gather from one row window of the table: out[n, c] = table[ids[n] - v0, c] for the rows whose
// id falls in [v0, v0 + Vc); other rows are left alone (another window writes them), so a vocabulary
// larger than one storage binding is gathered window by window. One thread per output element.
// Dimension letters: N rows (B*T tokens), H hidden, Vc vocabulary rows of this window.

struct Params {
  N: u32,
  H: u32,
  v0: u32,
  Vc: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;        // (N)
@group(0) @binding(1) var<storage, read> table: array<f32>;      // (Vc, H)
@group(0) @binding(2) var<storage, read_write> out: array<f32>;  // (N, H)
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 64u + gid.x;
  if (i >= p.N * p.H) { return; }
  let n = i / p.H;
  let c = i % p.H;
  let id = ids[n];
  if (id < p.v0 || id >= p.v0 + p.Vc) { return; }
  out[i] = table[(id - p.v0) * p.H + c];
}
