// Float64 plain-loop references of the kernels in ./kernels (through ops.ts).
// Dimension letters: N rows, H hidden, V vocabulary, O output features.

/** out (N, H) = table[ids] (rows of a (V, H) table). */
export function embeddingRef(ids: ArrayLike<number>, table: ArrayLike<number>, H: number): Float64Array {
  const out = new Float64Array(ids.length * H);
  for (let n = 0; n < ids.length; n++) for (let c = 0; c < H; c++) out[n * H + c] = table[ids[n] * H + c];
  return out;
}

/** dtable (V, H) = sum over rows n with ids[n] = v of dout[n]. */
export function embeddingBackwardRef(ids: ArrayLike<number>, dout: ArrayLike<number>, V: number, H: number): Float64Array {
  const d = new Float64Array(V * H);
  for (let n = 0; n < ids.length; n++) for (let c = 0; c < H; c++) d[ids[n] * H + c] += dout[n * H + c];
  return d;
}

/** y (N, O) + b broadcast over rows. */
export function biasAddRef(y: ArrayLike<number>, b: ArrayLike<number>): Float64Array {
  return Float64Array.from(y, (v, i) => v + b[i % b.length]);
}
