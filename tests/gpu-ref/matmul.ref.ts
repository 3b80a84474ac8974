// Float64 CPU reference of matmul.wgsl, written as plain loops for clarity.
import type { MatmulOpts } from "../../src/gpu/kernels/matmul-plan.ts";
export type { MatmulOpts };

/** C = alpha * op(A) @ op(B) (+ c0 when given), in float64. */
export function matmulRef(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  o: MatmulOpts,
  c0?: ArrayLike<number>,
): Float64Array {
  const { M, N, K, transA = false, transB = false, alpha = 1 } = o;
  const c = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let k = 0; k < K; k++) {
        const av = transA ? a[k * M + m] : a[m * K + k];
        const bv = transB ? b[n * K + k] : b[k * N + n];
        s += av * bv;
      }
      c[m * N + n] = alpha * s + (c0 ? c0[m * N + n] : 0);
    }
  }
  return c;
}
