// 4-bit block quantisation in com.microsoft MatMulNBits' layout (block 32, asymmetric with packed
// zero points), used when the model-format module's q4 weights are not supplied.

/** Packed q4 weights of an (N, K) matrix: blobs (N, ceil(K/32), 16), scales (N*nb), zero points (N*ceil(nb/2)). */
export interface Q4Matrix {
  packed: Uint8Array;
  scales: Float32Array;
  zeroPoints: Uint8Array;
}

/** Quantises row-major w (N rows of K) per 32-element block of each row: q = round(x/s) + z in [0, 15]. */
export function quantizeQ4Block32(w: Float32Array, N: number, K: number): Q4Matrix {
  const nb = Math.ceil(K / 32);
  const zpPerRow = Math.ceil(nb / 2);
  const packed = new Uint8Array(N * nb * 16);
  const scales = new Float32Array(N * nb);
  const zeroPoints = new Uint8Array(N * zpPerRow);
  for (let n = 0; n < N; n++) {
    for (let b = 0; b < nb; b++) {
      const k0 = b * 32, k1 = Math.min(K, k0 + 32);
      let lo = 0, hi = 0; // zero always representable, as ORT's quantiser does
      for (let k = k0; k < k1; k++) {
        lo = Math.min(lo, w[n * K + k]);
        hi = Math.max(hi, w[n * K + k]);
      }
      const s = hi > lo ? (hi - lo) / 15 : 1;
      const z = Math.min(15, Math.max(0, Math.round(-lo / s)));
      scales[n * nb + b] = s;
      zeroPoints[n * zpPerRow + (b >> 1)] |= z << ((b & 1) * 4);
      for (let k = k0; k < k1; k++) {
        const q = Math.min(15, Math.max(0, Math.round(w[n * K + k] / s) + z));
        const j = k - k0;
        packed[(n * nb + b) * 16 + (j >> 1)] |= q << ((j & 1) * 4);
      }
      // Padding elements past K stay 0 in the blob; MatMulNBits ignores them.
    }
  }
  return { packed, scales, zeroPoints };
}

/** Float32 values the q4 matrix stands for (N, K), for error measurements. */
export function dequantizeQ4Block32(q: Q4Matrix, N: number, K: number): Float32Array {
  const nb = Math.ceil(K / 32);
  const zpPerRow = Math.ceil(nb / 2);
  const out = new Float32Array(N * K);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const b = k >> 5, j = k & 31;
      const v = (q.packed[(n * nb + b) * 16 + (j >> 1)] >> ((j & 1) * 4)) & 15;
      const z = (q.zeroPoints[n * zpPerRow + (b >> 1)] >> ((b & 1) * 4)) & 15;
      out[n * K + k] = (v - z) * q.scales[n * nb + b];
    }
  }
  return out;
}
