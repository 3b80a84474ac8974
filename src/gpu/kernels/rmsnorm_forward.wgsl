// RMSNorm forward: y = x * rsqrt(mean(x^2) + eps) * w, one workgroup per row; saves rstd per row.
// A template (wgsl-template.ts): SUBGROUPS reduces the row with subgroup operations (rmsnorm_row_sum.wgsl).
// Dimension letters: R rows (N tokens, or N*H for Qwen3's per-head q/k norms), C channels per row.
// #if SUBGROUPS
enable subgroups;
// #endif

struct Params {
  rows: u32, // R
  C: u32,
  eps: f32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;          // (R, C)
@group(0) @binding(1) var<storage, read> w: array<f32>;          // (C)
@group(0) @binding(2) var<storage, read_write> y: array<f32>;    // (R, C)
@group(0) @binding(3) var<storage, read_write> rstd: array<f32>; // (R)
@group(0) @binding(4) var<uniform> p: Params;

override WG: u32 = 256u; // threads per row, a power of two

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
    let v = x[base + c];
    s = fma(v, v, s);
  }
  // #include rmsnorm_row_sum.wgsl
  let r = 1.0 / sqrt(total / f32(p.C) + p.eps);
  for (var c = t; c < p.C; c += WG) {
    y[base + c] = x[base + c] * r * w[c];
  }
  if (t == 0u) { rstd[row] = r; }
}
