// RMSNorm forward with a subgroup reduction (devices with the `subgroups` feature):
// y = x * rsqrt(mean(x^2) + eps) * w, one workgroup per row; saves rstd per row. Same bindings and
// result as rmsnorm_forward.wgsl; the row's sum of squares takes one barrier instead of log2(WG):
// subgroupAdd within each subgroup, one partial per subgroup in workgroup memory, and every thread
// sums the partials in the same order (so every thread, and every run, gets the same value).
// The subgroup size is read, never assumed (4 on SwiftShader, 32 on NVIDIA, up to 128); subgroups
// are taken to be consecutive ranges of local_invocation_index, as the drivers lay them out.
// Dimension letters: R rows (N tokens, or N*H for Qwen3's per-head q/k norms), C channels per row.
enable subgroups;

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

var<workgroup> partial: array<f32, WG>; // one per subgroup (WG / size of them, at most WG)

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32,
        @builtin(subgroup_invocation_id) lane: u32, @builtin(subgroup_size) sgSize: u32) {
  let row = wg.y * nwg.x + wg.x;
  if (row >= p.rows) { return; }
  let base = row * p.C;
  var s = 0.0;
  for (var c = t; c < p.C; c += WG) {
    let v = x[base + c];
    s = fma(v, v, s);
  }
  let sg = subgroupAdd(s);
  if (lane == 0u) { partial[t / sgSize] = sg; }
  workgroupBarrier();
  var total = 0.0;
  for (var i = 0u; i < (WG + sgSize - 1u) / sgSize; i++) { total += partial[i]; }
  let r = 1.0 / sqrt(total / f32(p.C) + p.eps);
  for (var c = t; c < p.C; c += WG) {
    y[base + c] = x[base + c] * r * w[c];
  }
  if (t == 0u) { rstd[row] = r; }
}
