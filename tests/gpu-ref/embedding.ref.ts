// Float64 CPU reference of embedding.wgsl and the embedding backward (embedding_links.wgsl +
// embedding_backward.wgsl). Dimension letters: N rows, V vocabulary, C channels.
import type { EmbeddingDims } from "../../src/gpu/kernels/embedding.ts";
export type { EmbeddingDims };

/** out (N, C) = table[ids], zeros for ids >= V. */
export function embeddingForwardRef(ids: ArrayLike<number>, table: ArrayLike<number>, d: EmbeddingDims): Float64Array {
  const { N, C, V } = d;
  const out = new Float64Array(N * C);
  for (let n = 0; n < N; n++) {
    if (ids[n] >= V) continue;
    for (let c = 0; c < C; c++) out[n * C + c] = table[ids[n] * C + c];
  }
  return out;
}

/** dtable (V, C) = dtable0 (zeros when absent) + the scatter-add of dy (N, C) by ids; ids >= V ignored. */
export function embeddingBackwardRef(
  ids: ArrayLike<number>,
  dy: ArrayLike<number>,
  d: EmbeddingDims,
  dtable0?: ArrayLike<number>,
): Float64Array {
  const { N, C, V } = d;
  const dtable = dtable0 ? Float64Array.from(dtable0) : new Float64Array(V * C);
  for (let n = 0; n < N; n++) {
    if (ids[n] >= V) continue;
    for (let c = 0; c < C; c++) dtable[ids[n] * C + c] += dy[n * C + c];
  }
  return dtable;
}
