// RMSNorm backward to the input, one workgroup per row:
// dx = rstd * (dy*w - x * rstd^2 * mean(dy*w*x)), added to dx when ACCUMULATE (residual stream).
// A template (wgsl-template.ts): SUBGROUPS reduces the row with subgroup operations (rmsnorm_row_sum.wgsl).
// Dimension letters: R rows (N, or N*H for per-head norms), C channels per row.
// #if SUBGROUPS
enable subgroups;
// #endif

struct Params {
  rows: u32, // R
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> dy: array<f32>;         // (R, C)
@group(0) @binding(1) var<storage, read> x: array<f32>;          // (R, C)
@group(0) @binding(2) var<storage, read> w: array<f32>;          // (C)
@group(0) @binding(3) var<storage, read> rstd: array<f32>;       // (R), saved by the forward
@group(0) @binding(4) var<storage, read_write> dx: array<f32>;   // (R, C)
@group(0) @binding(5) var<uniform> p: Params;

override WG: u32 = 256u; // threads per row, a power of two
override ACCUMULATE: bool = false;

var<workgroup> partial: array<f32, WG>; // one per thread, or (SUBGROUPS) one per subgroup

@compute @workgroup_size(WG)
// #if SUBGROUPS
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgSize: u32) {
// #else
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
// #endif
  let row = wg.y * nwg.x + wg.x;
  if (row >= p.rows) { return; }
  let base = row * p.C;
  var s = 0.0;
  for (var c = t; c < p.C; c += WG) {
    s = fma(dy[base + c] * w[c], x[base + c], s);
  }
  // #include rmsnorm_row_sum.wgsl
  let r = rstd[row];
  let coef = r * r * total / f32(p.C);
  for (var c = t; c < p.C; c += WG) {
    var v = r * (dy[base + c] * w[c] - x[base + c] * coef);
    if (ACCUMULATE) { v += dx[base + c]; }
    dx[base + c] = v;
  }
}
