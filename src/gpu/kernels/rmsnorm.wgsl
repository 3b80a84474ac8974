// RMSNorm, one workgroup per row; a template (wgsl-template.ts):
//   forward   y = x * rsqrt(mean(x^2) + eps) * w; saves rstd per row.
//   BACKWARD  dx = rstd * (dy*w - x * rstd^2 * mean(dy*w*x)) to the input, added to dx when ACCUMULATE (residual
//             stream).
//   SUBGROUPS the row's sum with subgroup operations (devices with the `subgroups` feature): one barrier instead of
//             log2(WG): subgroupAdd within each subgroup, one partial per subgroup, and every thread sums the partials
//             in the same order (so every thread, and every run, gets the same value). The subgroup size is read, never
//             assumed (4 on SwiftShader, 32 on NVIDIA, up to 128); subgroups are taken to be consecutive ranges of
//             local_invocation_index, as the drivers lay them out. Otherwise a tree through workgroup memory.
// Dimension letters: R rows (N tokens, or N*H for Qwen3's per-head q/k norms), C channels per row.
// #if SUBGROUPS
enable subgroups;
// #endif

// #if BACKWARD
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
// #else
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
// #endif

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
    // #if BACKWARD
    s = fma(dy[base + c] * w[c], x[base + c], s);
    // #else
    let v = x[base + c];
    s = fma(v, v, s);
    // #endif
  }
  // The sum of every thread's `s` over the row, as `total` in every thread.
  // #if SUBGROUPS
  let sg = subgroupAdd(s);
  if (lane == 0u) { partial[t / sgSize] = sg; }
  workgroupBarrier();
  var total = 0.0;
  for (var i = 0u; i < (WG + sgSize - 1u) / sgSize; i++) { total += partial[i]; }
  // #else
  partial[t] = s;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (t < k) { partial[t] += partial[t + k]; }
    workgroupBarrier();
  }
  let total = partial[0];
  // #endif
  // #if BACKWARD
  let r = rstd[row];
  let coef = r * r * total / f32(p.C);
  for (var c = t; c < p.C; c += WG) {
    var v = r * (dy[base + c] * w[c] - x[base + c] * coef);
    if (ACCUMULATE) { v += dx[base + c]; }
    dx[base + c] = v;
  }
  // #else
  let r = 1.0 / sqrt(total / f32(p.C) + p.eps);
  for (var c = t; c < p.C; c += WG) {
    y[base + c] = x[base + c] * r * w[c];
  }
  if (t == 0u) { rstd[row] = r; }
  // #endif
}
