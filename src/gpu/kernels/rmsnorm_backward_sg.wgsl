// RMSNorm backward to the input with a subgroup reduction (devices with the `subgroups` feature),
// one workgroup per row: dx = rstd * (dy*w - x * rstd^2 * mean(dy*w*x)), added to dx when ACCUMULATE.
// Same bindings and result as rmsnorm_backward.wgsl; the reduction is rmsnorm_forward_sg.wgsl's
// (subgroupAdd, a partial per subgroup, every thread sums them in order; the subgroup size is read,
// subgroups taken as consecutive ranges of local_invocation_index).
// Dimension letters: R rows (N, or N*H for per-head norms), C channels per row.
enable subgroups;

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

var<workgroup> partial: array<f32, WG>; // one per subgroup

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgSize: u32) {
  let row = wg.y * nwg.x + wg.x;
  if (row >= p.rows) { return; }
  let base = row * p.C;
  var s = 0.0;
  for (var c = t; c < p.C; c += WG) {
    s = fma(dy[base + c] * w[c], x[base + c], s);
  }
  let sg = subgroupAdd(s);
  if (lane == 0u) { partial[t / sgSize] = sg; }
  workgroupBarrier();
  var total = 0.0;
  for (var i = 0u; i < (WG + sgSize - 1u) / sgSize; i++) { total += partial[i]; }
  let r = rstd[row];
  let coef = r * r * total / f32(p.C);
  for (var c = t; c < p.C; c += WG) {
    var v = r * (dy[base + c] * w[c] - x[base + c] * coef);
    if (ACCUMULATE) { v += dx[base + c]; }
    dx[base + c] = v;
  }
}
