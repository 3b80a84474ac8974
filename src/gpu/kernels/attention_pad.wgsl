// Rows of SRC_W floats copied into rows of DST_W floats, zeros past SRC_W: attention.ts widens head dims that are not a
// multiple of 4 for the register-blocked kernels (SRC_W = D, DST_W = D rounded up to 4) and narrows their results back
// (the other way round). Zero columns add nothing to a dot product or a sum, so the results are those of D columns.

@group(0) @binding(0) var<storage, read> src: array<f32>;        // (rows, SRC_W)
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;  // (rows, DST_W)
@group(0) @binding(2) var<uniform> count: vec4u;                 // x: elements of dst

override SRC_W: u32 = 1u;
override DST_W: u32 = 4u;
const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + lid;
  if (i >= count.x) { return; }
  let c = i % DST_W;
  var x = 0.0;
  if (c < SRC_W) { x = src[(i / DST_W) * SRC_W + c]; }
  dst[i] = x;
}
