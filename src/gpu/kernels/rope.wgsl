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

// 2*pi split in three so that k*A and k*B are exact for |k| < 2^16 (Cody-Waite reduction) to
// [-pi, pi]; then by pi/2 to [-pi/4, pi/4] and Cephes' sinf/cosf polynomials (about 1 ulp there).
// Not the builtin sin/cos: WGSL only promises 2^-11 absolute error for them on [-pi, pi], and
// SwiftShader through Dawn (Chrome's CPU fallback) is off by 5e-5 at small angles, which moved the
// whole model's log-probabilities by 1e-3.
const INV_TWO_PI: f32 = 0.15915493667125702;
const TWO_PI_A: f32 = 6.28125;
const TWO_PI_B: f32 = 0.0019378662109375;
const TWO_PI_C: f32 = -0.000002559031372584286;
const TWO_OVER_PI: f32 = 0.6366197723675814;
const PI_2_HI: f32 = 1.5707963705062866; // f32(pi/2); q * PI_2_HI is exact for |q| <= 2
const PI_2_LO: f32 = -4.371139000186243e-8; // pi/2 - PI_2_HI

fn reduceAngle(a: f32) -> f32 {
  let k = round(a * INV_TWO_PI);
  return ((a - k * TWO_PI_A) - k * TWO_PI_B) - k * TWO_PI_C;
}

/** (sin r, cos r) for r in [-pi, pi]. */
fn sinCos(r: f32) -> vec2f {
  let q = round(r * TWO_OVER_PI); // quadrant, -2..2
  let x = (r - q * PI_2_HI) - q * PI_2_LO; // [-pi/4, pi/4]
  let z = x * x;
  let s = x + x * z * (-1.6666654611e-1 + z * (8.3321608736e-3 + z * -1.9515295891e-4));
  let c = 1.0 - 0.5 * z + z * z * (4.166664568298827e-2 + z * (-1.388731625493765e-3 + z * 2.443315711809948e-5));
  switch ((i32(q) + 4) % 4) {
    case 1: { return vec2f(c, -s); }
    case 2: { return vec2f(-s, -c); }
    case 3: { return vec2f(-c, s); }
    default: { return vec2f(s, c); }
  }
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
  let sc = sinCos(reduceAngle(f32(pos[n]) * invFreq[i]));
  let c = sc.y;
  var s = sc.x;
  if (BACKWARD) { s = -s; }
  let lo = nh * p.D + i;
  let a = x[lo];
  let b = x[lo + half];
  y[lo] = a * c - b * s;
  y[lo + half] = b * c + a * s;
}
