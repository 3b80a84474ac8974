// Float64 CPU reference of scale.wgsl (y = alpha * y) and its backward rule.

/** alpha * y, in float64. */
export function scaleRef(y: ArrayLike<number>, alpha: number): Float64Array {
  const out = new Float64Array(y.length);
  for (let i = 0; i < y.length; i++) out[i] = alpha * y[i];
  return out;
}

/** Backward of alpha * y: dy = alpha * dout. */
export function scaleBackwardRef(dout: ArrayLike<number>, alpha: number): Float64Array {
  return scaleRef(dout, alpha);
}
