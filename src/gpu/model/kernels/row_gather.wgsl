// Row gather: out[i, :] = src[rows[i], :], words copied as u32 (f32 values bit for bit, u32 ids too).
// The vocabulary head runs on the rows a loss reads: their hidden states gathered into (R, C).
// Dimension letters: R gathered rows, C words per row.

struct Params {
  R: u32,
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> rows: array<u32>;       // (R) source row of each output row
@group(0) @binding(1) var<storage, read> src: array<u32>;        // (any rows, C)
@group(0) @binding(2) var<storage, read_write> out: array<u32>;  // (R, C)
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 64u + gid.x;
  if (i >= p.R * p.C) { return; }
  out[i] = src[rows[i / p.C] * p.C + i % p.C];
}
