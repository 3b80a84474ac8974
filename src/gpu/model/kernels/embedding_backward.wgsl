// Embedding backward for one row window of the table: dtable[v, c] += sum over rows n with ids[n] == v0 + v
// of dout[n, c]. One thread per (v, c) scanning the N ids: no atomics, deterministic, O(Vc H N)
// work, meant for the small models that full fine-tuning targets.
// Dimension letters: N rows, H hidden, Vc vocabulary rows of this window.

struct Params {
  N: u32,
  H: u32,
  v0: u32,
  Vc: u32,
}

@group(0) @binding(0) var<storage, read> ids: array<u32>;            // (N)
@group(0) @binding(1) var<storage, read> dout: array<f32>;           // (N, H)
@group(0) @binding(2) var<storage, read_write> dtable: array<f32>;   // (Vc, H), accumulated
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 64u + gid.x;
  if (i >= p.Vc * p.H) { return; }
  let v = p.v0 + i / p.H;
  let c = i % p.H;
  var s = 0.0;
  for (var n = 0u; n < p.N; n++) {
    if (ids[n] == v) { s += dout[n * p.H + c]; }
  }
  dtable[i] += s;
}
