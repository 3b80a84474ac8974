// Switch ka (matmul.ts withKFastA): matmul_t256.wgsl's (tile256, tile128h) main-loop arithmetic where A is k-fastest
// (A (M, K), not transposed) and its tile is kept k-fastest in workgroup memory: element k of tile row m at
// tileA[m * TSKA + k / 4][k % 4] (TSKA = TK / 4 + 1 vec4 a row, one spare against bank conflicts), so each quad
// loaded from A is one vec4 store instead of four scalar stores to four tile rows. Per group of four contracted
// steps a thread reads B's eight vec4 (two per step, as the default loop) and then, row by row, one vec4 of A holding
// the row's four steps: sixteen A reads per four steps, as the default's four a step. Every accumulator takes the same
// fmas in the same order (k ascending) as the default loop: bitwise the same sums.
    for (var kg = 0u; kg < TK / 4u; kg++) {
      let kb = 4u * kg * TSV;
      let b00 = tileB[kb + tx]; let b01 = tileB[kb + TSV + tx]; let b02 = tileB[kb + 2u * TSV + tx]; let b03 = tileB[kb + 3u * TSV + tx];
      let b10 = tileB[kb + 16u + tx]; let b11 = tileB[kb + TSV + 16u + tx]; let b12 = tileB[kb + 2u * TSV + 16u + tx]; let b13 = tileB[kb + 3u * TSV + 16u + tx];
      let ra = 4u * ty * TSKA + kg;
      let a0 = tileA[ra];
      r0l = fma(vec4f(a0.x), b00, r0l); r0r = fma(vec4f(a0.x), b10, r0r);
      r0l = fma(vec4f(a0.y), b01, r0l); r0r = fma(vec4f(a0.y), b11, r0r);
      r0l = fma(vec4f(a0.z), b02, r0l); r0r = fma(vec4f(a0.z), b12, r0r);
      r0l = fma(vec4f(a0.w), b03, r0l); r0r = fma(vec4f(a0.w), b13, r0r);
      let a1 = tileA[ra + TSKA];
      r1l = fma(vec4f(a1.x), b00, r1l); r1r = fma(vec4f(a1.x), b10, r1r);
      r1l = fma(vec4f(a1.y), b01, r1l); r1r = fma(vec4f(a1.y), b11, r1r);
      r1l = fma(vec4f(a1.z), b02, r1l); r1r = fma(vec4f(a1.z), b12, r1r);
      r1l = fma(vec4f(a1.w), b03, r1l); r1r = fma(vec4f(a1.w), b13, r1r);
      let a2 = tileA[ra + 2u * TSKA];
      r2l = fma(vec4f(a2.x), b00, r2l); r2r = fma(vec4f(a2.x), b10, r2r);
      r2l = fma(vec4f(a2.y), b01, r2l); r2r = fma(vec4f(a2.y), b11, r2r);
      r2l = fma(vec4f(a2.z), b02, r2l); r2r = fma(vec4f(a2.z), b12, r2r);
      r2l = fma(vec4f(a2.w), b03, r2l); r2r = fma(vec4f(a2.w), b13, r2r);
      let a3 = tileA[ra + 3u * TSKA];
      r3l = fma(vec4f(a3.x), b00, r3l); r3r = fma(vec4f(a3.x), b10, r3r);
      r3l = fma(vec4f(a3.y), b01, r3l); r3r = fma(vec4f(a3.y), b11, r3r);
      r3l = fma(vec4f(a3.z), b02, r3l); r3r = fma(vec4f(a3.z), b12, r3r);
      r3l = fma(vec4f(a3.w), b03, r3l); r3r = fma(vec4f(a3.w), b13, r3r);
      let a4 = tileA[ra + (4u * TY) * TSKA];
      r4l = fma(vec4f(a4.x), b00, r4l); r4r = fma(vec4f(a4.x), b10, r4r);
      r4l = fma(vec4f(a4.y), b01, r4l); r4r = fma(vec4f(a4.y), b11, r4r);
      r4l = fma(vec4f(a4.z), b02, r4l); r4r = fma(vec4f(a4.z), b12, r4r);
      r4l = fma(vec4f(a4.w), b03, r4l); r4r = fma(vec4f(a4.w), b13, r4r);
      let a5 = tileA[ra + (4u * TY + 1u) * TSKA];
      r5l = fma(vec4f(a5.x), b00, r5l); r5r = fma(vec4f(a5.x), b10, r5r);
      r5l = fma(vec4f(a5.y), b01, r5l); r5r = fma(vec4f(a5.y), b11, r5r);
      r5l = fma(vec4f(a5.z), b02, r5l); r5r = fma(vec4f(a5.z), b12, r5r);
      r5l = fma(vec4f(a5.w), b03, r5l); r5r = fma(vec4f(a5.w), b13, r5r);
      let a6 = tileA[ra + (4u * TY + 2u) * TSKA];
      r6l = fma(vec4f(a6.x), b00, r6l); r6r = fma(vec4f(a6.x), b10, r6r);
      r6l = fma(vec4f(a6.y), b01, r6l); r6r = fma(vec4f(a6.y), b11, r6r);
      r6l = fma(vec4f(a6.z), b02, r6l); r6r = fma(vec4f(a6.z), b12, r6r);
      r6l = fma(vec4f(a6.w), b03, r6l); r6r = fma(vec4f(a6.w), b13, r6r);
      let a7 = tileA[ra + (4u * TY + 3u) * TSKA];
      r7l = fma(vec4f(a7.x), b00, r7l); r7r = fma(vec4f(a7.x), b10, r7r);
      r7l = fma(vec4f(a7.y), b01, r7l); r7r = fma(vec4f(a7.y), b11, r7r);
      r7l = fma(vec4f(a7.z), b02, r7l); r7r = fma(vec4f(a7.z), b12, r7r);
      r7l = fma(vec4f(a7.w), b03, r7l); r7r = fma(vec4f(a7.w), b13, r7r);
      let a8 = tileA[ra + (8u * TY) * TSKA];
      r8l = fma(vec4f(a8.x), b00, r8l); r8r = fma(vec4f(a8.x), b10, r8r);
      r8l = fma(vec4f(a8.y), b01, r8l); r8r = fma(vec4f(a8.y), b11, r8r);
      r8l = fma(vec4f(a8.z), b02, r8l); r8r = fma(vec4f(a8.z), b12, r8r);
      r8l = fma(vec4f(a8.w), b03, r8l); r8r = fma(vec4f(a8.w), b13, r8r);
      let a9 = tileA[ra + (8u * TY + 1u) * TSKA];
      r9l = fma(vec4f(a9.x), b00, r9l); r9r = fma(vec4f(a9.x), b10, r9r);
      r9l = fma(vec4f(a9.y), b01, r9l); r9r = fma(vec4f(a9.y), b11, r9r);
      r9l = fma(vec4f(a9.z), b02, r9l); r9r = fma(vec4f(a9.z), b12, r9r);
      r9l = fma(vec4f(a9.w), b03, r9l); r9r = fma(vec4f(a9.w), b13, r9r);
      let a10 = tileA[ra + (8u * TY + 2u) * TSKA];
      r10l = fma(vec4f(a10.x), b00, r10l); r10r = fma(vec4f(a10.x), b10, r10r);
      r10l = fma(vec4f(a10.y), b01, r10l); r10r = fma(vec4f(a10.y), b11, r10r);
      r10l = fma(vec4f(a10.z), b02, r10l); r10r = fma(vec4f(a10.z), b12, r10r);
      r10l = fma(vec4f(a10.w), b03, r10l); r10r = fma(vec4f(a10.w), b13, r10r);
      let a11 = tileA[ra + (8u * TY + 3u) * TSKA];
      r11l = fma(vec4f(a11.x), b00, r11l); r11r = fma(vec4f(a11.x), b10, r11r);
      r11l = fma(vec4f(a11.y), b01, r11l); r11r = fma(vec4f(a11.y), b11, r11r);
      r11l = fma(vec4f(a11.z), b02, r11l); r11r = fma(vec4f(a11.z), b12, r11r);
      r11l = fma(vec4f(a11.w), b03, r11l); r11r = fma(vec4f(a11.w), b13, r11r);
      let a12 = tileA[ra + (12u * TY) * TSKA];
      r12l = fma(vec4f(a12.x), b00, r12l); r12r = fma(vec4f(a12.x), b10, r12r);
      r12l = fma(vec4f(a12.y), b01, r12l); r12r = fma(vec4f(a12.y), b11, r12r);
      r12l = fma(vec4f(a12.z), b02, r12l); r12r = fma(vec4f(a12.z), b12, r12r);
      r12l = fma(vec4f(a12.w), b03, r12l); r12r = fma(vec4f(a12.w), b13, r12r);
      let a13 = tileA[ra + (12u * TY + 1u) * TSKA];
      r13l = fma(vec4f(a13.x), b00, r13l); r13r = fma(vec4f(a13.x), b10, r13r);
      r13l = fma(vec4f(a13.y), b01, r13l); r13r = fma(vec4f(a13.y), b11, r13r);
      r13l = fma(vec4f(a13.z), b02, r13l); r13r = fma(vec4f(a13.z), b12, r13r);
      r13l = fma(vec4f(a13.w), b03, r13l); r13r = fma(vec4f(a13.w), b13, r13r);
      let a14 = tileA[ra + (12u * TY + 2u) * TSKA];
      r14l = fma(vec4f(a14.x), b00, r14l); r14r = fma(vec4f(a14.x), b10, r14r);
      r14l = fma(vec4f(a14.y), b01, r14l); r14r = fma(vec4f(a14.y), b11, r14r);
      r14l = fma(vec4f(a14.z), b02, r14l); r14r = fma(vec4f(a14.z), b12, r14r);
      r14l = fma(vec4f(a14.w), b03, r14l); r14r = fma(vec4f(a14.w), b13, r14r);
      let a15 = tileA[ra + (12u * TY + 3u) * TSKA];
      r15l = fma(vec4f(a15.x), b00, r15l); r15r = fma(vec4f(a15.x), b10, r15r);
      r15l = fma(vec4f(a15.y), b01, r15l); r15r = fma(vec4f(a15.y), b11, r15r);
      r15l = fma(vec4f(a15.z), b02, r15l); r15r = fma(vec4f(a15.z), b12, r15r);
      r15l = fma(vec4f(a15.w), b03, r15l); r15r = fma(vec4f(a15.w), b13, r15r);
    }
