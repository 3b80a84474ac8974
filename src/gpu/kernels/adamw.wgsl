// AdamW step over a flat parameter buffer, torch.optim.AdamW's arithmetic:
//   g = grad * clip;  p *= 1 - lr*wd;  m = lerp(m, g, 1-beta1);  v = beta2*v + (1-beta2)*g^2;
//   p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps),  bc_k = 1 - beta_k^t.
// clip and the non-finite flag come from gradnorm.wgsl's final pass (or a constant "no clip" stats buffer);
// when the flag is set nothing is written, so the step is skipped on the GPU side.
// Dimension letters: n parameters.

struct Stats {
  sumsq: f32,
  norm: f32,
  clip: f32,
  nonfinite: u32,
}

struct Params {
  count: u32,      // n
  lr: f32,
  beta1: f32,
  beta2: f32,
  eps: f32,
  weightDecay: f32,
  stepSize: f32,   // lr / (1 - beta1^t)
  bc2Sqrt: f32,    // sqrt(1 - beta2^t)
}

@group(0) @binding(0) var<storage, read_write> param: array<f32>; // (n)
@group(0) @binding(1) var<storage, read> grad: array<f32>;        // (n)
@group(0) @binding(2) var<storage, read_write> m: array<f32>;     // (n) first moment
@group(0) @binding(3) var<storage, read_write> v: array<f32>;     // (n) second moment
@group(0) @binding(4) var<storage, read> stats: Stats;
@group(0) @binding(5) var<uniform> p: Params;

override WG: u32 = 256u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t;
  if (i >= p.count || stats.nonfinite != 0u) { return; }
  let g = grad[i] * stats.clip;
  let mi = m[i] + (1.0 - p.beta1) * (g - m[i]);
  let vi = p.beta2 * v[i] + (1.0 - p.beta2) * g * g;
  let denom = sqrt(vi) / p.bc2Sqrt + p.eps;
  param[i] = param[i] * (1.0 - p.lr * p.weightDecay) - p.stepSize * (mi / denom);
  m[i] = mi;
  v[i] = vi;
}
