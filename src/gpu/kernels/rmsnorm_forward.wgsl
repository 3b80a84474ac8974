// RMSNorm forward: y = x * rsqrt(mean(x^2) + eps) * w, one workgroup per row; saves rstd per row.
// Dimension letters: R rows (N tokens, or N*H for Qwen3's per-head q/k norms), C channels per row.

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

var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let row = wg.y * nwg.x + wg.x;
  if (row >= p.rows) { return; }
  let base = row * p.C;
  var s = 0.0;
  for (var c = t; c < p.C; c += WG) {
    let v = x[base + c];
    s = fma(v, v, s);
  }
  partial[t] = s;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (t < k) { partial[t] += partial[t + k]; }
    workgroupBarrier();
  }
  let r = 1.0 / sqrt(partial[0] / f32(p.C) + p.eps);
  for (var c = t; c < p.C; c += WG) {
    y[base + c] = x[base + c] * r * w[c];
  }
  if (t == 0u) { rstd[row] = r; }
}
