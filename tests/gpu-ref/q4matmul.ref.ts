// Float64 CPU reference of the q4 matmuls, with its own dequantizer written from the
// onnxruntime MatMulNBits layout (bits 4, block 32), independent of src/model/quant.ts.
//
// Glossary: N rows of x, K input features, Nout output features, nb = ceil(K / 32) blocks.
//   packed (Nout, nb, 16) uint8: element 2j of a block in the LOW nibble of byte j, 2j+1 in the high;
//   scales (Nout, nb) f32; zeroPoints (Nout, ceil(nb / 2)) uint8, block 2i low nibble, 2i+1 high,
//   each row starting on a byte boundary; absent means 8. Value = (q - zp) * scale.

import { Q4_BLOCK, q4Geometry, type Q4Weight } from "../../src/gpu/kernels/q4matmul.ts";
export { q4Geometry, type Q4Weight };

/** The dense (Nout, K) float64 matrix a q4 weight stands for. */
export function dequantQ4Ref(w: Q4Weight): Float64Array {
  const { nb, zpBytes } = q4Geometry(w.K);
  const out = new Float64Array(w.Nout * w.K);
  for (let n = 0; n < w.Nout; n++) {
    for (let k = 0; k < w.K; k++) {
      const blk = Math.floor(k / Q4_BLOCK);
      const e = k % Q4_BLOCK;
      const byte = w.packed[(n * nb + blk) * 16 + (e >> 1)];
      const q = e % 2 === 0 ? byte & 15 : byte >> 4;
      let zp = 8;
      if (w.zeroPoints) {
        const zb = w.zeroPoints[n * zpBytes + (blk >> 1)];
        zp = blk % 2 === 0 ? zb & 15 : zb >> 4;
      }
      out[n * w.K + k] = (q - zp) * w.scales[n * nb + blk];
    }
  }
  return out;
}

/** y (N, Nout) = x (N, K) @ dequant(W)^T in float64. */
export function q4MatmulRef(x: ArrayLike<number>, w: Q4Weight, N: number): Float64Array {
  const d = dequantQ4Ref(w);
  const y = new Float64Array(N * w.Nout);
  for (let r = 0; r < N; r++) {
    for (let n = 0; n < w.Nout; n++) {
      let s = 0;
      for (let k = 0; k < w.K; k++) s += x[r * w.K + k] * d[n * w.K + k];
      y[r * w.Nout + n] = s;
    }
  }
  return y;
}

/** dx (N, K) = dy (N, Nout) @ dequant(W) in float64: the backward of q4MatmulRef with respect to x. */
export function q4MatmulTransposedRef(dy: ArrayLike<number>, w: Q4Weight, N: number): Float64Array {
  const d = dequantQ4Ref(w);
  const dx = new Float64Array(N * w.K);
  for (let r = 0; r < N; r++) {
    for (let k = 0; k < w.K; k++) {
      let s = 0;
      for (let n = 0; n < w.Nout; n++) s += dy[r * w.Nout + n] * d[n * w.K + k];
      dx[r * w.K + k] = s;
    }
  }
  return dx;
}
