// dk and dv (B, T, Hkv, D) with a workgroup per query head: the sums of the PARTS partial sums the register-blocked dk/dv
// kernel wrote, (B, T, Hkv, PARTS, D / 4) each (a part per workgroup sharing a key block: its share of the group's query
// heads), added in part order; dk times the softmax scale. Thread e owns vec4 e of dk and of dv. Dims:
// attention_dims.wgsl (appended by attention.ts). Glossary as attention_rb.wgsl.

@group(0) @binding(0) var<storage, read> dkp: array<vec4f>;      // (B, T, Hkv, PARTS, D / 4)
@group(0) @binding(1) var<storage, read> dvp: array<vec4f>;      // (B, T, Hkv, PARTS, D / 4)
@group(0) @binding(2) var<storage, read_write> dk: array<vec4f>; // (B, T, Hkv, D / 4)
@group(0) @binding(3) var<storage, read_write> dv: array<vec4f>; // (B, T, Hkv, D / 4)
@group(0) @binding(4) var<uniform> dims: Dims;

override D4: u32 = 16u;   // vec4 columns of a row (D / 4)
override PARTS: u32 = 7u; // partial sums per element
const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let e = (wg.y * nwg.x + wg.x) * WG + lid;
  if (e >= dims.B * dims.T * dims.Hkv * D4) { return; }
  let at = (e / D4) * PARTS * D4 + e % D4;
  var ka = vec4f(0.0);
  var va = vec4f(0.0);
  for (var p = 0u; p < PARTS; p++) {
    ka += dkp[at + p * D4];
    va += dvp[at + p * D4];
  }
  dk[e] = ka * dims.scale;
  dv[e] = va;
}
