// The LoRA tail of matmul_t256.wgsl (tile256 and tile128h; switch loraTail): matmul_tail.wgsl for its 16x8 block.
// matmul.ts withTail inserts it after the kernel's main loop, with the same prelude (a2, b2, the Tail uniform, tailA /
// tailB). It adds scale * a2 op(b2) to the thread's thirty-two accumulators in TK steps of r, in split-K slice 0 only.
// It reads the kernel's TM, TS, TK, TY, NT, TSVA, TSV, LOADS_A, LOADS, tid, row0, col0, tx, ty, tileA, tileB and
// r0l .. r15r.
  if (wg.z == 0u) {
    for (var j0 = 0u; j0 < tail.r; j0 += TK) {
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
      workgroupBarrier();
      for (var kk = 0u; kk < TK; kk++) {
        let b0 = tileB[kk * TSV + tx];
        let b1 = tileB[kk * TSV + 16u + tx];
        let a0 = tileA[kk * TSVA + ty];
        r0l = fma(vec4f(a0.x), b0, r0l); r0r = fma(vec4f(a0.x), b1, r0r);
        r1l = fma(vec4f(a0.y), b0, r1l); r1r = fma(vec4f(a0.y), b1, r1r);
        r2l = fma(vec4f(a0.z), b0, r2l); r2r = fma(vec4f(a0.z), b1, r2r);
        r3l = fma(vec4f(a0.w), b0, r3l); r3r = fma(vec4f(a0.w), b1, r3r);
        let a1 = tileA[kk * TSVA + TY * 1u + ty];
        r4l = fma(vec4f(a1.x), b0, r4l); r4r = fma(vec4f(a1.x), b1, r4r);
        r5l = fma(vec4f(a1.y), b0, r5l); r5r = fma(vec4f(a1.y), b1, r5r);
        r6l = fma(vec4f(a1.z), b0, r6l); r6r = fma(vec4f(a1.z), b1, r6r);
        r7l = fma(vec4f(a1.w), b0, r7l); r7r = fma(vec4f(a1.w), b1, r7r);
        let a2 = tileA[kk * TSVA + TY * 2u + ty];
        r8l = fma(vec4f(a2.x), b0, r8l); r8r = fma(vec4f(a2.x), b1, r8r);
        r9l = fma(vec4f(a2.y), b0, r9l); r9r = fma(vec4f(a2.y), b1, r9r);
        r10l = fma(vec4f(a2.z), b0, r10l); r10r = fma(vec4f(a2.z), b1, r10r);
        r11l = fma(vec4f(a2.w), b0, r11l); r11r = fma(vec4f(a2.w), b1, r11r);
        let a3 = tileA[kk * TSVA + TY * 3u + ty];
        r12l = fma(vec4f(a3.x), b0, r12l); r12r = fma(vec4f(a3.x), b1, r12r);
        r13l = fma(vec4f(a3.y), b0, r13l); r13r = fma(vec4f(a3.y), b1, r13r);
        r14l = fma(vec4f(a3.z), b0, r14l); r14r = fma(vec4f(a3.z), b1, r14r);
        r15l = fma(vec4f(a3.w), b0, r15l); r15r = fma(vec4f(a3.w), b1, r15r);
      }
      workgroupBarrier();
    }
  }
