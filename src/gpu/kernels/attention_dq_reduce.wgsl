// dq (B, T, H, D) with dq fused into the dk/dv kernel: the sum of the key blocks' partials that the dk/dv kernel wrote
// (attention_dq_partial.wgsl; layout in attention_dqp_layout.wgsl, appended by attention.ts), in block order, times the
// softmax scale. Thread e owns vec4 e of dq; rows past the sequence's length get 0 (no block wrote them). Dims:
// attention_dims.wgsl (appended by attention.ts). Glossary as attention_rb.wgsl.

@group(0) @binding(0) var<storage, read> dqp: array<vec4f>;      // partials
@group(0) @binding(1) var<storage, read> lens: array<u32>;       // (B)
@group(0) @binding(2) var<storage, read_write> dq: array<vec4f>; // (B, T, H, D / 4)
@group(0) @binding(3) var<uniform> dims: Dims;

override D4: u32 = 16u; // vec4 columns of a row (D / 4)
override BK: u32 = 32u; // keys per block: the dk/dv kernel's rows per workgroup
const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let e = (wg.y * nwg.x + wg.x) * WG + lid;
  if (e >= dims.B * dims.T * dims.H * D4) { return; }
  let c = e % D4;
  let h = (e / D4) % dims.H;
  let t = (e / (D4 * dims.H)) % dims.T;
  let b = e / (D4 * dims.H * dims.T);
  var acc = vec4f(0.0);
  if (t < min(lens[b], dims.T)) {
    for (var kb = 0u; kb <= t / BK; kb++) { acc += dqp[dqpAt(kb, b, t, h) + c]; }
  }
  dq[e] = acc * dims.scale;
}
