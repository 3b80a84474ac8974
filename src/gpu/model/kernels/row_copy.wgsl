// Row gather and scatter (a template: SCATTER), words copied as u32 (f32 values bit for bit, u32 ids too): the
// vocabulary head runs on the rows a loss reads, their hidden states gathered into (R, C), and its outputs and its
// input gradient go back to their rows of the batch.
//   gather   out[i, :] = src[rows[i], :]
//   SCATTER  dst[rows[i], :] = src[i, :]; rows of dst not in `rows` are left as they are (the caller clears dst
//            first). `rows` must not repeat.
// Dimension letters: R gathered (scattered) rows, C words per row.

struct Params {
  R: u32,
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

// #if SCATTER
@group(0) @binding(0) var<storage, read> rows: array<u32>;       // (R) destination row of each source row
@group(0) @binding(1) var<storage, read> src: array<u32>;        // (R, C)
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;  // (any rows, C)
// #else
@group(0) @binding(0) var<storage, read> rows: array<u32>;       // (R) source row of each output row
@group(0) @binding(1) var<storage, read> src: array<u32>;        // (any rows, C)
@group(0) @binding(2) var<storage, read_write> out: array<u32>;  // (R, C)
// #endif
@group(0) @binding(3) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u, @builtin(num_workgroups) nwg: vec3u) {
  let i = gid.y * nwg.x * 64u + gid.x;
  if (i >= p.R * p.C) { return; }
  // #if SCATTER
  dst[rows[i / p.C] * p.C + i % p.C] = src[i];
  // #else
  out[i] = src[rows[i / p.C] * p.C + i % p.C];
  // #endif
}
