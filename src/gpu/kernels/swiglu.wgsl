// SwiGLU, elementwise (a template: BACKWARD). Forward h = silu(gate) * up; backward, with
// s = sigmoid(gate), dgate = dh * up * s * (1 + gate * (1 - s)), dup = dh * gate * s.
// Dimension letters: N rows, F hidden features.

struct Params {
  count: u32, // N * F
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

// #if BACKWARD
@group(0) @binding(0) var<storage, read> dh: array<f32>;          // (N, F)
@group(0) @binding(1) var<storage, read> gate: array<f32>;        // (N, F)
@group(0) @binding(2) var<storage, read> up: array<f32>;          // (N, F)
@group(0) @binding(3) var<storage, read_write> dgate: array<f32>; // (N, F)
@group(0) @binding(4) var<storage, read_write> dup: array<f32>;   // (N, F)
@group(0) @binding(5) var<uniform> p: Params;
// #else
@group(0) @binding(0) var<storage, read> gate: array<f32>;     // (N, F)
@group(0) @binding(1) var<storage, read> up: array<f32>;       // (N, F)
@group(0) @binding(2) var<storage, read_write> h: array<f32>;  // (N, F)
@group(0) @binding(3) var<uniform> p: Params;
// #endif

override WG: u32 = 256u;

// exp only ever sees -|z|, so it cannot overflow for any finite z.
fn sigmoid(z: f32) -> f32 {
  let e = exp(-abs(z));
  let s = 1.0 / (1.0 + e);
  return select(e * s, s, z >= 0.0);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t;
  if (i >= p.count) { return; }
  let g = gate[i];
  // #if BACKWARD
  let s = sigmoid(g);
  let d = dh[i];
  dgate[i] = d * up[i] * (s * (1.0 + g * (1.0 - s)));
  dup[i] = d * g * s;
  // #else
  h[i] = g * sigmoid(g) * up[i];
  // #endif
}
