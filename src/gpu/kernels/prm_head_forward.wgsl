// PRM scalar head, forward: z[n] = h[n] . w + b over every row, one workgroup per row.
// Dimension letters: N rows (tokens), C channels (hidden size). The head's parameters live in one
// (C + 1) buffer: w in [0, C), the bias at C.

struct Params {
  N: u32,
  C: u32,
  _pad0: u32,
  _pad1: u32,
}

@group(0) @binding(0) var<storage, read> h: array<f32>;         // (N, C) last hidden state (after model.norm)
@group(0) @binding(1) var<storage, read> wb: array<f32>;        // (C + 1) head weight, then bias
@group(0) @binding(2) var<storage, read_write> z: array<f32>;   // (N) logits of the step score
@group(0) @binding(3) var<uniform> p: Params;

override WG: u32 = 64u; // threads per row, a power of two

var<workgroup> partial: array<f32, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let row = wg.y * nwg.x + wg.x;
  if (row >= p.N) { return; }
  let base = row * p.C;
  var s = 0.0;
  for (var c = t; c < p.C; c += WG) { s = fma(h[base + c], wb[c], s); }
  partial[t] = s;
  workgroupBarrier();
  for (var k = WG / 2u; k > 0u; k >>= 1u) {
    if (t < k) { partial[t] += partial[t + k]; }
    workgroupBarrier();
  }
  if (t == 0u) { z[row] = partial[0] + wb[p.C]; }
}
