// Fused vocabulary head, forward pass 2 of 2: merges the nSplit online-softmax partials of each
// row (from lmhead.wgsl) into lse, entropy = lse - E_p[z], and logp = z_target - lse (0 when the
// target is >= V, an ignored row). One 64-thread workgroup per row.

struct Dims {
  N: u32,
  V: u32,
  nSplit: u32,
  rowsPerDispatchX: u32, // rows = wg.y * rowsPerDispatchX + wg.x
}

@group(0) @binding(0) var<storage, read> part: array<f32>;          // (N, nSplit, 4)
@group(0) @binding(1) var<storage, read> targets: array<u32>;       // (N)
@group(0) @binding(2) var<storage, read_write> logp: array<f32>;    // (N)
@group(0) @binding(3) var<storage, read_write> lse: array<f32>;     // (N)
@group(0) @binding(4) var<storage, read_write> entropy: array<f32>; // (N)
@group(0) @binding(5) var<uniform> dims: Dims;

const WG: u32 = 64u;
const NEG: f32 = -1.0e30;

var<workgroup> sm: array<vec4f, WG>; // (m, s, sum e^(z-m) z, z_target) per thread

fn merge(a: vec4f, b: vec4f) -> vec4f {
  let m = max(a.x, b.x);
  let ea = exp(a.x - m);
  let eb = exp(b.x - m);
  return vec4f(m, a.y * ea + b.y * eb, a.z * ea + b.z * eb, max(a.w, b.w));
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) li: u32) {
  let row = wg.y * dims.rowsPerDispatchX + wg.x;
  if (row >= dims.N) { return; } // uniform across the workgroup
  var acc = vec4f(NEG, 0.0, 0.0, NEG);
  for (var i = li; i < dims.nSplit; i += WG) {
    let base = (row * dims.nSplit + i) * 4u;
    acc = merge(acc, vec4f(part[base], part[base + 1u], part[base + 2u], part[base + 3u]));
  }
  sm[li] = acc;
  for (var stride = WG / 2u; stride > 0u; stride /= 2u) {
    workgroupBarrier();
    if (li < stride) { sm[li] = merge(sm[li], sm[li + stride]); }
  }
  if (li != 0u) { return; }
  let t = sm[0];
  let l = t.x + log(t.y);
  lse[row] = l;
  entropy[row] = l - t.z / t.y;
  logp[row] = select(0.0, t.w - l, targets[row] < dims.V);
}
