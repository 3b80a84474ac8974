// Rank products streamed for bandwidth (switch rank=stream; LoRA r <= 32): C[b] = alpha * op(A[b]) @ op(B[b])
// (+ C[b] when ACCUMULATE), the wide operand A read once, as vec4 where matmul.ts finds it aligned (VEC_A), never
// through workgroup tiles; the narrow operand B (r x K) read beside it from the caches. Same contract, bindings,
// operand prelude and split-K convention as the other matmul kernels (matmul_common.wgsl); TRANS_C as in
// matmul_narrow.wgsl. Two entry points, by A's layout:
//   rows  A (M, K), k-fastest (x A^T, dy B): a workgroup owns 4 RPT rows and 4 NQ columns of C;
//   cols  A (K, M), m-fastest (dB = dy^T xa; dA = (dyB)^T x transposed): a workgroup owns 16 rows m and 4 NQ columns.
// 256 threads t = l + 4 g + 16 s: l < 4 a lane and s < 16 a part of the contracted dimension (thread (l, s) takes
// k-steps 4 s + l + 64 j: four lanes read 64 contiguous bytes of one row; a 32-thread warp's load covers four whole
// 128-byte lines in the rows form, eight 64-byte halves in the cols form), g < 4 a slot of the outputs (rows: rows
// row0 + 4 i + g, i < RPT; cols: m = m0 + 4 g .. + 3). Each thread keeps NACC vec4 sums in registers (rows: one per
// row i and four columns q; cols: one per column, over its four m), then the workgroup adds them in a fixed order:
// the four lanes by laneSum ((0 + 1) + (2 + 3): subgroup shuffles where the device has subgroups, matmul.ts's
// prelude, else laneSumShared below; the same sums), then the 16 parts through workgroup memory, part 0 first. No
// second pass, except the split-K slices matmul.ts gives a cols product with a small grid (then alpha and ACCUMULATE
// are the reduce's).
// Dimension letters: M rows of C, N columns of C, K the contracted dimension, b the batch.

// Dims, bindings, TRANS_B, ACCUMULATE, rowK, sliceEnd: matmul_common.wgsl; VEC_A, VEC_B, elemX, quadX: the prelude.
override TRANS_C: bool = false;

// matmul.ts substitutes these two lines per product: rows per thread (4; 2 where NQ > 4; 4 in the cols form) and
// vec4 columns of C per workgroup (1 .. 8 in the rows form, 1 .. 4 in the cols form).
const RPT: u32 = 4u;
const NQ: u32 = 4u;
const NACC: u32 = RPT * NQ;
const PARTS: u32 = 16u;
const STEP: u32 = 64u; // k-steps a workgroup advances per iteration: 4 lanes x 16 parts

// The lane sums (256 vec4) and then the parts (PARTS x 4 slots x NACC vec4): 16 KiB at NACC = 16.
var<workgroup> red: array<vec4f, max(256u, PARTS * 4u * NACC)>;

// Sum over the four lanes 4 (t / 4) .. + 3 through workgroup memory, in laneSum's order (devices without subgroups).
fn laneSumShared(v: vec4f, t: u32) -> vec4f {
  red[t] = v;
  workgroupBarrier();
  let q = t & ~3u;
  let s = (red[q] + red[q + 1u]) + (red[q + 2u] + red[q + 3u]);
  workgroupBarrier();
  return s;
}

// A (M, K): elements 4 kq .. 4 kq + 3 of row m (zero outside C's rows and past K).
fn rowA(baseA: u32, m: u32, kq: u32) -> vec4f {
  if (m >= dims.M) { return vec4f(0.0); }
  let at = baseA + m * rowK();
  if (VEC_A) { return quadA(at / 4u + kq); }
  let k = 4u * kq;
  return vec4f(kAt(at, k), kAt(at, k + 1u), kAt(at, k + 2u), kAt(at, k + 3u));
}

fn kAt(at: u32, k: u32) -> f32 {
  if (k >= dims.K) { return 0.0; }
  return elemA(at + k);
}

// A (K, M): elements m .. m + 3 of row k.
fn colA(baseA: u32, k: u32, m: u32) -> vec4f {
  let at = baseA + k * dims.M + m;
  if (VEC_A) {
    if (m >= dims.M) { return vec4f(0.0); }
    return quadA(at / 4u);
  }
  return vec4f(mAt(at, m), mAt(at + 1u, m + 1u), mAt(at + 2u, m + 2u), mAt(at + 3u, m + 3u));
}

fn mAt(i: u32, m: u32) -> f32 {
  if (m >= dims.M) { return 0.0; }
  return elemA(i);
}

// op(B) at contracted index k, columns j .. j + 3 (zero past K or N): a row of B (K, N), or a column of B^T (N, K).
fn rowB(baseB: u32, k: u32, j: u32) -> vec4f {
  if (k >= dims.K) { return vec4f(0.0); }
  if (TRANS_B) { return vec4f(jAt(baseB, k, j), jAt(baseB, k, j + 1u), jAt(baseB, k, j + 2u), jAt(baseB, k, j + 3u)); }
  let at = baseB + k * dims.N + j;
  if (VEC_B) {
    if (j >= dims.N) { return vec4f(0.0); }
    return quadB(at / 4u);
  }
  return vec4f(nAt(at, j), nAt(at + 1u, j + 1u), nAt(at + 2u, j + 2u), nAt(at + 3u, j + 3u));
}

fn jAt(baseB: u32, k: u32, j: u32) -> f32 {
  if (j >= dims.N) { return 0.0; }
  return elemB(baseB + j * rowK() + k);
}

fn nAt(i: u32, j: u32) -> f32 {
  if (j >= dims.N) { return 0.0; }
  return elemB(i);
}

// op(B)'s 4 x 4 block at k-steps 4 kq .. + 3 and columns j .. j + 3: column c holds the four columns at k = 4 kq + c.
fn blockB(baseB: u32, kq: u32, j: u32) -> mat4x4f {
  let k = 4u * kq;
  if (TRANS_B && VEC_B) {
    // B (N, K) rows as vec4 along k, transposed in registers.
    var r: array<vec4f, 4>;
    for (var c = 0u; c < 4u; c++) {
      r[c] = vec4f(0.0);
      if (j + c < dims.N) { r[c] = quadB((baseB + (j + c) * rowK()) / 4u + kq); }
    }
    return transpose(mat4x4f(r[0], r[1], r[2], r[3]));
  }
  return mat4x4f(rowB(baseB, k, j), rowB(baseB, k + 1u, j), rowB(baseB, k + 2u, j), rowB(baseB, k + 3u, j));
}

// Writes element (m, n) of C (transposed when TRANS_C), inside C only.
fn put(z: u32, m: u32, n: u32, v: f32) {
  if (m >= dims.M || n >= dims.N) { return; }
  var idx = z * dims.strideC + m * dims.N + n;
  if (TRANS_C) { idx = z * dims.strideC + n * dims.M + m; }
  var x = dims.alpha * v;
  if (ACCUMULATE) { x += c[idx]; }
  c[idx] = x;
}

// The workgroup's sums: the lanes, then the parts in order; writes C. rowsForm: accumulator a = i NQ + q is row
// r0 + 4 i + g, columns c0 + 4 q .. + 3; else accumulator a is column c0 + a, rows r0 + 4 g .. + 3.
fn finish(acc: ptr<function, array<vec4f, NACC>>, t: u32, z: u32, r0: u32, c0: u32, rowsForm: bool) {
  for (var a = 0u; a < NACC; a++) { (*acc)[a] = laneSum((*acc)[a], t); }
  let l = t & 3u;
  let gs = t >> 2u; // g + 4 s
  for (var a = 0u; a < NACC; a++) {
    if ((a & 3u) == l) { red[gs * NACC + a] = (*acc)[a]; }
  }
  workgroupBarrier();
  if (t < 4u * NACC) {
    let g = t / NACC;
    let a = t % NACC;
    var v = red[g * NACC + a];
    for (var s = 1u; s < PARTS; s++) { v += red[(4u * s + g) * NACC + a]; }
    for (var e = 0u; e < 4u; e++) {
      if (rowsForm) {
        put(z, r0 + 4u * (a / NQ) + g, c0 + 4u * (a % NQ) + e, v[e]);
      } else {
        put(z, r0 + 4u * g + e, c0 + a, v[e]);
      }
    }
  }
}

@compute @workgroup_size(256)
fn rows(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  let g = (t >> 2u) & 3u;
  let row0 = wg.y * 4u * RPT;
  let col0 = wg.x * 4u * NQ;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  let K4 = (dims.K + 3u) / 4u;
  var acc: array<vec4f, NACC>;
  for (var kq = 4u * (t >> 4u) + (t & 3u); kq < K4; kq += STEP) {
    var x: array<vec4f, RPT>;
    for (var i = 0u; i < RPT; i++) { x[i] = rowA(baseA, row0 + 4u * i + g, kq); }
    for (var q = 0u; q < NQ; q++) {
      let b = blockB(baseB, kq, col0 + 4u * q);
      for (var i = 0u; i < RPT; i++) {
        var v = acc[i * NQ + q];
        v = fma(b[0], vec4f(x[i].x), v);
        v = fma(b[1], vec4f(x[i].y), v);
        v = fma(b[2], vec4f(x[i].z), v);
        v = fma(b[3], vec4f(x[i].w), v);
        acc[i * NQ + q] = v;
      }
    }
  }
  finish(&acc, t, wg.z, row0, col0, true);
}

@compute @workgroup_size(256)
fn cols(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_index) t: u32) {
  let m0 = wg.y * 16u;
  let m = m0 + 4u * ((t >> 2u) & 3u);
  let col0 = wg.x * 4u * NQ;
  let baseA = wg.z * dims.strideA;
  let baseB = wg.z * dims.strideB;
  let kEnd = sliceEnd(wg.z);
  var acc: array<vec4f, NACC>; // NACC = 4 NQ: acc[j], column col0 + j over rows m .. m + 3
  for (var k = 4u * (t >> 4u) + (t & 3u); k < kEnd; k += STEP) {
    let av = colA(baseA, k, m);
    for (var q = 0u; q < NQ; q++) {
      let bv = rowB(baseB, k, col0 + 4u * q);
      acc[4u * q] = fma(av, vec4f(bv.x), acc[4u * q]);
      acc[4u * q + 1u] = fma(av, vec4f(bv.y), acc[4u * q + 1u]);
      acc[4u * q + 2u] = fma(av, vec4f(bv.z), acc[4u * q + 2u]);
      acc[4u * q + 3u] = fma(av, vec4f(bv.w), acc[4u * q + 3u]);
    }
  }
  finish(&acc, t, wg.z, m0, col0, false);
}
