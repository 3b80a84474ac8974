// The LoRA tail of the q4 128-tile kernels (q4matmul_t128.wgsl, both ways, include it after the main
// contracted loop, before the store, where TAIL), with matmul_tail_prelude.wgsl's bindings and loads tailA / tailB. It
// adds scale * a2 op(b2) to the thread's sixteen accumulators in TK steps of r, in split-K slice 0 only (wg.z: the
// reduce sums the slices). It reads the kernel's TS, TK, TSV, LOADS, tid, row0, col0, tx, ty, tileA, tileB and
// r0l .. r7r.
  if (wg.z == 0u) {
    for (var j0 = 0u; j0 < tail.r; j0 += TK) {
      for (var i = 0u; i < LOADS; i++) {
        let e = tid + i * 256u;
        let ka = e % TK; let mm = e / TK;
        tileA[ka * TSV + mm / 4u][mm % 4u] = tailA(row0 + mm, j0 + ka);
        var nn: u32; var kb: u32;
        if (TAIL_TRANS_B) { kb = e % TK; nn = e / TK; } else { nn = e % TS; kb = e / TS; }
        tileB[kb * TSV + nn / 4u][nn % 4u] = tailB(j0 + kb, col0 + nn);
      }
      workgroupBarrier();
      for (var kk = 0u; kk < TK; kk++) {
        // #include matmul_fma8x8.wgsl
      }
      workgroupBarrier();
    }
  }
