// Rotary position embedding, Hugging Face rotate_half convention, one thread per pair (i, i + D/2):
//   y_i = x_i cos - x_{i+D/2} sin,  y_{i+D/2} = x_{i+D/2} cos + x_i sin,  angle = pos[n] * invFreq[i].
// BACKWARD rotates by -angle (the transpose of the rotation), which maps dy to dx.
// Dimension letters: N rows (batch*tokens), H heads, D head dim (even).

struct Params {
  N: u32,
  H: u32,
  D: u32,
  _pad: u32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;         // (N, H, D)
@group(0) @binding(1) var<storage, read> pos: array<u32>;       // (N) position of each row
@group(0) @binding(2) var<storage, read> invFreq: array<f32>;   // (D/2), scaling already applied
@group(0) @binding(3) var<storage, read_write> y: array<f32>;   // (N, H, D)
@group(0) @binding(4) var<uniform> p: Params;

override WG: u32 = 256u;
override BACKWARD: bool = false;

// 2*pi split in three so that k*A and k*B are exact for |k| < 2^16 (Cody-Waite reduction):
// sin and cos are then only evaluated on [-pi, pi], where WGSL implementations are accurate.
const INV_TWO_PI: f32 = 0.15915493667125702;
const TWO_PI_A: f32 = 6.28125;
const TWO_PI_B: f32 = 0.0019378662109375;
const TWO_PI_C: f32 = -0.000002559031372584286;

fn reduceAngle(a: f32) -> f32 {
  let k = round(a * INV_TWO_PI);
  return ((a - k * TWO_PI_A) - k * TWO_PI_B) - k * TWO_PI_C;
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let half = p.D / 2u;
  let g = (wg.y * nwg.x + wg.x) * WG + t; // flat index over (N, H, D/2)
  if (g >= p.N * p.H * half) { return; }
  let i = g % half;
  let nh = g / half;
  let n = nh / p.H;
  // f32 product, as Hugging Face computes inv_freq @ position_ids in float32.
  let r = reduceAngle(f32(pos[n]) * invFreq[i]);
  let c = cos(r);
  var s = sin(r);
  if (BACKWARD) { s = -s; }
  let lo = nh * p.D + i;
  let a = x[lo];
  let b = x[lo + half];
  y[lo] = a * c - b * s;
  y[lo + half] = b * c + a * s;
}
