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

/** Per row of logits (N, V): logp of the target, log-sum-exp and entropy of the softmax. */
export function logSoftmaxStatsRef(logits: ArrayLike<number>, tgt: ArrayLike<number>, V: number): { logp: Float64Array; lse: Float64Array; entropy: Float64Array } {
  const N = tgt.length;
  const logp = new Float64Array(N), lse = new Float64Array(N), entropy = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    let m = -Infinity;
    for (let v = 0; v < V; v++) m = Math.max(m, logits[n * V + v]);
    let z = 0, zs = 0;
    for (let v = 0; v < V; v++) {
      const e = Math.exp(logits[n * V + v] - m);
      z += e;
      zs += e * logits[n * V + v];
    }
    lse[n] = m + Math.log(z);
    logp[n] = logits[n * V + tgt[n]] - lse[n];
    entropy[n] = lse[n] - zs / z;
  }
  return { logp, lse, entropy };
}

/** dz (N, V) = g * (onehot(tgt) - softmax(z)): the gradient of g . logp with respect to the logits. */
export function logSoftmaxBackwardRef(logits: ArrayLike<number>, tgt: ArrayLike<number>, g: ArrayLike<number>, V: number): Float64Array {
  const { lse } = logSoftmaxStatsRef(logits, tgt, V);
  const dz = new Float64Array(logits.length);
  for (let n = 0; n < tgt.length; n++) {
    for (let v = 0; v < V; v++) dz[n * V + v] = g[n] * ((v === tgt[n] ? 1 : 0) - Math.exp(logits[n * V + v] - lse[n]));
  }
  return dz;
}
