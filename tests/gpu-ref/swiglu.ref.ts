// Float64 CPU reference of swiglu.wgsl (elementwise, any shape).

/** sigmoid(z) without overflow for large |z|. */
export function sigmoidRef(z: number): number {
  const e = Math.exp(-Math.abs(z));
  return z >= 0 ? 1 / (1 + e) : e / (1 + e);
}

/** h = silu(gate) * up, in float64. */
export function swigluForwardRef(gate: ArrayLike<number>, up: ArrayLike<number>): Float64Array {
  const h = new Float64Array(gate.length);
  for (let i = 0; i < gate.length; i++) h[i] = gate[i] * sigmoidRef(gate[i]) * up[i];
  return h;
}

/** dgate and dup given dh, in float64. */
export function swigluBackwardRef(
  dh: ArrayLike<number>,
  gate: ArrayLike<number>,
  up: ArrayLike<number>,
): { dgate: Float64Array; dup: Float64Array } {
  const dgate = new Float64Array(gate.length);
  const dup = new Float64Array(gate.length);
  for (let i = 0; i < gate.length; i++) {
    const g = gate[i];
    const s = sigmoidRef(g);
    dgate[i] = dh[i] * up[i] * s * (1 + g * (1 - s));
    dup[i] = dh[i] * g * s;
  }
  return { dgate, dup };
}
