// PRM binary cross-entropy on logits, per row: with p = sigmoid(z) and label y in [0, 1],
//   loss[n] = weight[n] * (softplus(z) - y z)      (= -weight (y log p + (1 - y) log(1 - p)))
//   dz[n]   = weight[n] * (p - y)
// Rows of weight 0 (not a step's last token, padding) get loss 0 and dz 0.
// Dimension letters: N rows.

struct Params {
  N: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> z: array<f32>;             // (N) head logits
@group(0) @binding(1) var<storage, read> labels: array<f32>;        // (N) targets y
@group(0) @binding(2) var<storage, read> weights: array<f32>;       // (N) loss weight per row (0: unlabelled)
@group(0) @binding(3) var<storage, read_write> dz: array<f32>;      // (N) dL/dz
@group(0) @binding(4) var<storage, read_write> loss: array<f32>;    // (N) weighted loss per row
@group(0) @binding(5) var<uniform> p: Params;

override WG: u32 = 256u;

// exp only ever sees -|x|: finite for any finite x.
fn sigmoid(x: f32) -> f32 {
  let e = exp(-abs(x));
  let s = 1.0 / (1.0 + e);
  return select(e * s, s, x >= 0.0);
}

fn softplus(x: f32) -> f32 {
  return max(x, 0.0) + log(1.0 + exp(-abs(x)));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) t: u32) {
  let i = (wg.y * nwg.x + wg.x) * WG + t;
  if (i >= p.N) { return; }
  let w = weights[i];
  if (w == 0.0) {
    dz[i] = 0.0;
    loss[i] = 0.0;
    return;
  }
  let x = z[i];
  let y = labels[i];
  dz[i] = w * (sigmoid(x) - y);
  loss[i] = w * (softplus(x) - y * x);
}
