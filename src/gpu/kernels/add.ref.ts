// Float64 CPU references of add.wgsl (out = alpha*a + beta*b) and add_into.wgsl
// (y = alpha*x + beta*y), with the backward rule of the linear combination.

/** out = alpha * a + beta * b, in float64. */
export function addRef(a: ArrayLike<number>, b: ArrayLike<number>, alpha = 1, beta = 1): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = alpha * a[i] + beta * b[i];
  return out;
}

/** Backward of out = alpha*a + beta*b: da = alpha * dout, db = beta * dout. */
export function addBackwardRef(dout: ArrayLike<number>, alpha = 1, beta = 1): { da: Float64Array; db: Float64Array } {
  const da = new Float64Array(dout.length);
  const db = new Float64Array(dout.length);
  for (let i = 0; i < dout.length; i++) {
    da[i] = alpha * dout[i];
    db[i] = beta * dout[i];
  }
  return { da, db };
}
