// The part the register-blocked attention kernels share; attention.ts appends it to each: attention_rb.wgsl (forward)
// gets the part above the BACKWARD line, attention_bwd_dq_rb.wgsl and attention_bwd_dkv_rb.wgsl the whole file.
// The column lanes, the tile loads and the backward's block of S and dP (Dims and the row addresses qRow, kvRow, statAt:
// attention_dims.wgsl, appended before this file). The loads and the block use module-scope names each kernel declares: the bindings q, k, v (and dout), dims; the overrides D4,
// DS4, QR, KR, BQ (rows of the Q tile), BK (rows of the K/V tile; one of the two is the rows a workgroup owns, the
// other the streamed tile's, by the kernel) and NT (threads); the workgroup tiles qs (BQ, DS4), ks, vs (BK, DS4)
// (and dos (BQ, DS4)). WGSL takes no pointers to override-sized workgroup arrays as parameters, so the functions name
// them. Appended, not prepended, and the overrides stay in the kernels: Deno's naga (29) panics at pipeline creation
// when a named override comes after a workgroup array of override size in its lowering order (declarations in
// source order, each after what it uses), which a prepended function reading the tiles causes.
// Glossary as attention_rb.wgsl: B batch, T tokens, H query heads, Hkv kv heads, D head dim.

const LANES: u32 = 16u;          // column lanes of the sums: lane c owns vec4 columns c and c + LANES

// K and V rows j0 .. j0 + BK - 1 of kv head hk into ks and vs; zeros from row `end` on.
fn loadKV(tid: u32, b: u32, hk: u32, j0: u32, end: u32) {
  for (var e = tid; e < BK * D4; e += NT) {
    let j = j0 + e / D4;
    var kx = vec4f(0.0);
    var vx = vec4f(0.0);
    if (j < end) {
      let at = kvRow(b, j, hk) + e % D4;
      kx = k[at];
      vx = v[at];
    }
    ks[(e / D4) * DS4 + e % D4] = kx;
    vs[(e / D4) * DS4 + e % D4] = vx;
  }
}

// #if BACKWARD
// The rest only in attention_bwd_dq_rb.wgsl and attention_bwd_dkv_rb.wgsl (the forward has no dout, dos).

// q and dout rows t0 .. t0 + BQ - 1 of head h into qs and dos; zeros from row `len` on.
fn loadQDout(tid: u32, b: u32, h: u32, t0: u32, len: u32) {
  for (var e = tid; e < BQ * D4; e += NT) {
    let tt = t0 + e / D4;
    var qx = vec4f(0.0);
    var dx = vec4f(0.0);
    if (tt < len) {
      let at = qRow(b, tt, h) + e % D4;
      qx = q[at];
      dx = dout[at];
    }
    qs[(e / D4) * DS4 + e % D4] = qx;
    dos[(e / D4) * DS4 + e % D4] = dx;
  }
}

// One thread's block of the score phase: S = q . k (unscaled) and dP = dout . v.
struct Scores {
  s: vec4f,
  dp: vec4f,
}

// S and dP of query rows rq0, rq1 (of qs, dos) and key rows rk0, rk1 (of ks, vs) of the tiles; components x (rq0, rk0),
// y (rq0, rk1), z (rq1, rk0), w (rq1, rk1). Row rq1 counts where QR > 1, row rk1 where KR > 1 (the other components
// stay 0). Each vec4 read from workgroup memory feeds QR or KR dot products; the sums are named registers (no indexed
// arrays in the loop), each summed over the columns in order.
fn scoresSdP(rq0: u32, rq1: u32, rk0: u32, rk1: u32) -> Scores {
  var s00 = 0.0; var s01 = 0.0; var s10 = 0.0; var s11 = 0.0;
  var d00 = 0.0; var d01 = 0.0; var d10 = 0.0; var d11 = 0.0;
  let qr0 = rq0 * DS4;
  let qr1 = rq1 * DS4;
  let kr0 = rk0 * DS4;
  let kr1 = rk1 * DS4;
  for (var i4 = 0u; i4 < D4; i4++) {
    let qa = qs[qr0 + i4];
    let oa = dos[qr0 + i4];
    let ka = ks[kr0 + i4];
    let va = vs[kr0 + i4];
    s00 += dot(qa, ka);
    d00 += dot(oa, va);
    if (KR > 1u) {
      let kb = ks[kr1 + i4];
      let vb = vs[kr1 + i4];
      s01 += dot(qa, kb);
      d01 += dot(oa, vb);
      if (QR > 1u) {
        let qb = qs[qr1 + i4];
        let ob = dos[qr1 + i4];
        s10 += dot(qb, ka);
        d10 += dot(ob, va);
        s11 += dot(qb, kb);
        d11 += dot(ob, vb);
      }
    } else if (QR > 1u) {
      let qb = qs[qr1 + i4];
      let ob = dos[qr1 + i4];
      s10 += dot(qb, ka);
      d10 += dot(ob, va);
    }
  }
  return Scores(vec4f(s00, s01, s10, s11), vec4f(d00, d01, d10, d11));
}
// #endif
