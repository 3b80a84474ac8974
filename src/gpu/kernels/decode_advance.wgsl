// The state a captured decoding step reads, moved on by one token on the GPU (no upload per step):
// the chosen tokens become the next input ids, and every row's position and key count grow by one.
// int64 tensors are u32 pairs, low word first; positions stay far below 2^31, the high words zero.
// Dimension letters: B rows.

struct Params {
  B: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> chosen: array<u32>;         // (B, 2) token, log-probability bits (sample.wgsl)
@group(0) @binding(1) var<storage, read_write> ids: array<u32>;      // (B, 1) int64: the next step's input_ids
@group(0) @binding(2) var<storage, read_write> pos: array<u32>;      // (B, 1) int64: position_ids
@group(0) @binding(3) var<storage, read_write> seqlens: array<u32>;  // (B) int32: keys after the step, minus one
@group(0) @binding(4) var<storage, read_write> total: array<u32>;    // (1) int32: the longest row's key count
@group(0) @binding(5) var<uniform> p: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let b = gid.x;
  if (b >= p.B) { return; }
  ids[2u * b] = chosen[2u * b];
  ids[2u * b + 1u] = 0u;
  pos[2u * b] = pos[2u * b] + 1u;
  seqlens[b] = seqlens[b] + 1u;
  if (b == 0u) { total[0] = total[0] + 1u; }
}
