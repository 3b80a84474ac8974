// delta (B, H, T) = rowsum(dout * o), the dk/dv kernel's input, as its own pass: the first pass of the backward under
// the fused dq (attention.ts), where no dq kernel computes it. One thread a query row; the same sums in the
// same order as attention_bwd_dq_rb.wgsl's (four partials over the vec4 columns part, part + 4, ..., added as
// (p0 + p1) + (p2 + p3)), so delta, and with it dk and dv, are the dq kernel path's bits. Rows past the sequence's
// length get 0. Dims, qRow and statAt: attention_dims.wgsl (appended by attention.ts). Glossary as attention_rb.wgsl.

@group(0) @binding(0) var<storage, read> o: array<vec4f>;          // (B, T, H, D / 4)
@group(0) @binding(1) var<storage, read> dout: array<vec4f>;       // (B, T, H, D / 4)
@group(0) @binding(2) var<storage, read> lens: array<u32>;         // (B)
@group(0) @binding(3) var<storage, read_write> delta: array<f32>;  // (B, H, T)
@group(0) @binding(4) var<uniform> dims: Dims;

override D4: u32 = 16u; // vec4 columns of a row (D / 4)
const WG: u32 = 64u;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(num_workgroups) nwg: vec3u, @builtin(local_invocation_index) lid: u32) {
  let row = (wg.y * nwg.x + wg.x) * WG + lid; // (b, h, t) in delta's order: statAt(b, h, t) == row
  if (row >= dims.B * dims.H * dims.T) { return; }
  let t = row % dims.T;
  let h = (row / dims.T) % dims.H;
  let b = row / (dims.T * dims.H);
  var p = vec4f(0.0);
  if (t < min(lens[b], dims.T)) {
    let base = qRow(b, t, h);
    for (var c4 = 0u; c4 < D4; c4 += 4u) {
      p.x += dot(dout[base + c4], o[base + c4]);
      if (c4 + 1u < D4) { p.y += dot(dout[base + c4 + 1u], o[base + c4 + 1u]); }
      if (c4 + 2u < D4) { p.z += dot(dout[base + c4 + 2u], o[base + c4 + 2u]); }
      if (c4 + 3u < D4) { p.w += dot(dout[base + c4 + 3u], o[base + c4 + 3u]); }
    }
  }
  delta[row] = (p.x + p.y) + (p.z + p.w);
}
