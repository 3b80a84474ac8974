// The LoRA tail of tile96h (matmul_t96h.wgsl includes it after the main loop, where TAIL): adds scale * a2 op(b2) to
// the thread's accumulators in TK steps of r, in split-K slice 0 only (wg.z: the reduce sums the slices), through the
// kernel's own tiles. Its loads come from matmul_tail_prelude.wgsl: a quad at a time where QUADS (r, and N for b2 (r, N),
// multiples of 4), else one element at a time.
  if (wg.z == 0u) {
    for (var j0 = 0u; j0 < tail.r; j0 += TK) {
// #if QUADS
      for (var i = 0u; i < (TM * TK / 4u + NT - 1u) / NT; i++) {
        let q = tid + i * NT;
        if (q < TM * TK / 4u) {
          let kq = q % (TK / 4u); let mm = q / (TK / 4u);
          let v = tailA4(row0 + mm, j0 + 4u * kq);
          let t = 4u * kq * TSVA + mm / 4u; let l = mm % 4u;
          tileA[t][l] = v.x; tileA[t + TSVA][l] = v.y; tileA[t + 2u * TSVA][l] = v.z; tileA[t + 3u * TSVA][l] = v.w;
        }
      }
      for (var i = 0u; i < TS * TK / (4u * NT); i++) {
        let q = tid + i * NT;
        if (TAIL_TRANS_B) {
          let kq = q % (TK / 4u); let nn = q / (TK / 4u);
          let v = tailB4(j0 + 4u * kq, col0 + nn);
          let t = 4u * kq * TSV + nn / 4u; let l = nn % 4u;
          tileB[t][l] = v.x; tileB[t + TSV][l] = v.y; tileB[t + 2u * TSV][l] = v.z; tileB[t + 3u * TSV][l] = v.w;
        } else {
          let nq = q % (TS / 4u); let kb = q / (TS / 4u);
          tileB[kb * TSV + nq] = tailB4(j0 + kb, col0 + 4u * nq);
        }
      }
// #else
      for (var i = 0u; i < LOADS_A; i++) {
        let e = tid + i * NT;
        let ka = e % TK; let mm = e / TK;
        tileA[ka * TSVA + mm / 4u][mm % 4u] = tailA(row0 + mm, j0 + ka);
      }
      for (var i = 0u; i < LOADS; i++) {
        let e = tid + i * NT;
        var nn: u32; var kb: u32;
        if (TAIL_TRANS_B) { kb = e % TK; nn = e / TK; } else { nn = e % TS; kb = e / TS; }
        tileB[kb * TSV + nn / 4u][nn % 4u] = tailB(j0 + kb, col0 + nn);
      }
// #endif
      workgroupBarrier();
      for (var kk = 0u; kk < TK; kk++) {
        // #include matmul_t96h_fma.wgsl
      }
      workgroupBarrier();
    }
  }
