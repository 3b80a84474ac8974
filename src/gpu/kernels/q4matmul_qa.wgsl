// Switch qa (q4matmul.ts withQuadA): the main-loop arithmetic of the q4 128-tile kernels (q4matmul_t128.wgsl,
// q4matmul_t_t128.wgsl) when the activations' tile is k-fastest in workgroup memory: element k of tile row m at
// tileA[m * TSKA + k / 4][k % 4] (TSKA = TK / 4 + 1 vec4 a row), each quad of the activations one vec4 load and one
// vec4 store. Per group of four contracted steps a thread reads W's eight vec4 (two per step, as the default loop)
// and then, row by row, one vec4 of the activations holding the row's four steps: eight reads per four steps, as
// the default's two a step. Every accumulator takes the same fmas in the same order: bitwise the same sums.
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
      let a4 = tileA[ra + 64u * TSKA];
      r4l = fma(vec4f(a4.x), b00, r4l); r4r = fma(vec4f(a4.x), b10, r4r);
      r4l = fma(vec4f(a4.y), b01, r4l); r4r = fma(vec4f(a4.y), b11, r4r);
      r4l = fma(vec4f(a4.z), b02, r4l); r4r = fma(vec4f(a4.z), b12, r4r);
      r4l = fma(vec4f(a4.w), b03, r4l); r4r = fma(vec4f(a4.w), b13, r4r);
      let a5 = tileA[ra + 65u * TSKA];
      r5l = fma(vec4f(a5.x), b00, r5l); r5r = fma(vec4f(a5.x), b10, r5r);
      r5l = fma(vec4f(a5.y), b01, r5l); r5r = fma(vec4f(a5.y), b11, r5r);
      r5l = fma(vec4f(a5.z), b02, r5l); r5r = fma(vec4f(a5.z), b12, r5r);
      r5l = fma(vec4f(a5.w), b03, r5l); r5r = fma(vec4f(a5.w), b13, r5r);
      let a6 = tileA[ra + 66u * TSKA];
      r6l = fma(vec4f(a6.x), b00, r6l); r6r = fma(vec4f(a6.x), b10, r6r);
      r6l = fma(vec4f(a6.y), b01, r6l); r6r = fma(vec4f(a6.y), b11, r6r);
      r6l = fma(vec4f(a6.z), b02, r6l); r6r = fma(vec4f(a6.z), b12, r6r);
      r6l = fma(vec4f(a6.w), b03, r6l); r6r = fma(vec4f(a6.w), b13, r6r);
      let a7 = tileA[ra + 67u * TSKA];
      r7l = fma(vec4f(a7.x), b00, r7l); r7r = fma(vec4f(a7.x), b10, r7r);
      r7l = fma(vec4f(a7.y), b01, r7l); r7r = fma(vec4f(a7.y), b11, r7r);
      r7l = fma(vec4f(a7.z), b02, r7l); r7r = fma(vec4f(a7.z), b12, r7r);
      r7l = fma(vec4f(a7.w), b03, r7l); r7r = fma(vec4f(a7.w), b13, r7r);
    }
