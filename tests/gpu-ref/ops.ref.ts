// Float64 plain-loop references of the kernels in ./kernels (through ops.ts).
// Dimension letters: N rows, H hidden, V vocabulary, O output features.

/** out (N, H) = table[ids] (rows of a (V, H) table). */
export function embeddingRef(ids: ArrayLike<number>, table: ArrayLike<number>, H: number): Float64Array {
  const out = new Float64Array(ids.length * H);
  for (let n = 0; n < ids.length; n++) for (let c = 0; c < H; c++) out[n * H + c] = table[ids[n] * H + c];
  return out;
}

/** dtable (V, H) = sum over rows n with ids[n] = v of dout[n]. */
export function embeddingBackwardRef(
  ids: ArrayLike<number>,
  dout: ArrayLike<number>,
  V: number,
  H: number,
): Float64Array {
  const d = new Float64Array(V * H);
  for (let n = 0; n < ids.length; n++) for (let c = 0; c < H; c++) d[ids[n] * H + c] += dout[n * H + c];
  return d;
}

/** out (R, C) = src[rows] (rows of a (*, C) matrix). */
export function rowGatherRef(rows: ArrayLike<number>, src: ArrayLike<number>, C: number): Float64Array {
  const out = new Float64Array(rows.length * C);
  for (let i = 0; i < rows.length; i++) for (let c = 0; c < C; c++) out[i * C + c] = src[rows[i] * C + c];
  return out;
}

/** dst with dst[rows[i]] = src[i] (rows distinct), the other rows as they were. */
export function rowScatterRef(
  rows: ArrayLike<number>,
  src: ArrayLike<number>,
  dst: ArrayLike<number>,
  C: number,
): Float64Array {
  const out = Float64Array.from(dst);
  for (let i = 0; i < rows.length; i++) for (let c = 0; c < C; c++) out[rows[i] * C + c] = src[i * C + c];
  return out;
}
