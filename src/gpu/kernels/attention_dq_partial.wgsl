// The fused dq's part of attention_bwd_dkv_rb.wgsl (attention.ts appends it, with attention_dqp_layout.wgsl,
// and the kernel calls dqPartial in its DQ_PARTIAL block): after a query tile's dk / dv sums, the tile's dS
// (in dst) times the workgroup's key block (in ks) is this block's share of the tile's dq, written to the scratch dqp;
// attention_dq_reduce.wgsl sums the shares of every block and scales them. The dq kernel's recomputation of S and dP
// is saved; the cost is one more product per tile here and the scratch's writes and reads.

@group(0) @binding(10) var<storage, read_write> dqp: array<vec4f>; // partials (attention_dqp_layout.wgsl)

// Query rows q0 .. q0 + BQ - 1 (those below T) of head h: thread e owns row e / D4, vec4 column e % D4 (consecutive
// threads write consecutive columns of a row), summing dS over the block's keys four at a time (one dst vec4, four
// ks rows).
fn dqPartial(tid: u32, b: u32, h: u32, q0: u32, kb: u32) {
  for (var e = tid; e < BQ * D4; e += NT) {
    let r = e / D4;
    let c = e % D4;
    let t = q0 + r;
    if (t < dims.T) {
      var acc = vec4f(0.0);
      for (var kg = 0u; kg < BK4; kg++) {
        let d4 = dst[r * BK4 + kg];
        let k4 = 4u * kg * DS4 + c;
        acc = fma(vec4f(d4.x), ks[k4], acc);
        acc = fma(vec4f(d4.y), ks[k4 + DS4], acc);
        acc = fma(vec4f(d4.z), ks[k4 + 2u * DS4], acc);
        acc = fma(vec4f(d4.w), ks[k4 + 3u * DS4], acc);
      }
      dqp[dqpAt(kb, b, t, h) + c] = acc;
    }
  }
}
