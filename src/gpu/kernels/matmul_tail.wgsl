// The LoRA tail of the q4 128-tile kernels (q4matmul_t128.wgsl and q4matmul_t_t128.wgsl include it after the main
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
        let a0 = tileA[kk * TSV + ty];
        let a1 = tileA[kk * TSV + 16u + ty];
        let b0 = tileB[kk * TSV + tx];
        let b1 = tileB[kk * TSV + 16u + tx];
        r0l = fma(vec4f(a0.x), b0, r0l); r0r = fma(vec4f(a0.x), b1, r0r);
        r1l = fma(vec4f(a0.y), b0, r1l); r1r = fma(vec4f(a0.y), b1, r1r);
        r2l = fma(vec4f(a0.z), b0, r2l); r2r = fma(vec4f(a0.z), b1, r2r);
        r3l = fma(vec4f(a0.w), b0, r3l); r3r = fma(vec4f(a0.w), b1, r3r);
        r4l = fma(vec4f(a1.x), b0, r4l); r4r = fma(vec4f(a1.x), b1, r4r);
        r5l = fma(vec4f(a1.y), b0, r5l); r5r = fma(vec4f(a1.y), b1, r5r);
        r6l = fma(vec4f(a1.z), b0, r6l); r6r = fma(vec4f(a1.z), b1, r6r);
        r7l = fma(vec4f(a1.w), b0, r7l); r7r = fma(vec4f(a1.w), b1, r7r);
      }
      workgroupBarrier();
    }
  }
