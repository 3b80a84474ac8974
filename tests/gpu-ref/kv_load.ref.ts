// Reference of kv_load.wgsl on plain arrays (moves only: exact).

/**
 * `dst` (B, K, T, D) after loading: for r < rows.length, row r, head k, columns 0..len-1 = row rows[r].src's
 * head k, columns P-len..P-1 of `src` (R, K, P, D) (`from0`: columns 0..len-1); everything else as it was.
 */
export function kvLoadRef(
  src: Float32Array,
  dst: Float32Array,
  rows: readonly { src: number; len: number }[],
  K: number,
  P: number,
  T: number,
  D: number,
  from0 = false,
): Float32Array {
  const out = dst.slice();
  rows.forEach(({ src: s, len }, r) => {
    for (let k = 0; k < K; k++) {
      for (let c = 0; c < len; c++) {
        for (let d = 0; d < D; d++) {
          out[((r * K + k) * T + c) * D + d] = src[((s * K + k) * P + (from0 ? 0 : P - len) + c) * D + d];
        }
      }
    }
  });
  return out;
}
