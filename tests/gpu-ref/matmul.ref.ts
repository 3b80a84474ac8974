// Float64 CPU reference of matmul.wgsl, written as plain loops for clarity.
import type { MatmulOpts } from "../../src/gpu/kernels/matmul-plan.ts";
export type { MatmulOpts };

/** C[b] = alpha * op(A[b]) @ op(B[b]) (+ c0[b] when given), in float64. */
export function matmulRef(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  o: MatmulOpts,
  c0?: ArrayLike<number>,
): Float64Array {
  const { M, N, K, batch = 1, transA = false, transB = false, alpha = 1 } = o;
  const c = new Float64Array(batch * M * N);
  for (let z = 0; z < batch; z++) {
    const ba = o.broadcastA ? 0 : z * M * K;
    const bb = o.broadcastB ? 0 : z * K * N;
    for (let m = 0; m < M; m++) {
      for (let n = 0; n < N; n++) {
        let s = 0;
        for (let k = 0; k < K; k++) {
          const av = transA ? a[ba + k * M + m] : a[ba + m * K + k];
          const bv = transB ? b[bb + n * K + k] : b[bb + k * N + n];
          s += av * bv;
        }
        const idx = z * M * N + m * N + n;
        c[idx] = alpha * s + (c0 ? c0[idx] : 0);
      }
    }
  }
  return c;
}
