// Wrapper of matmul.wgsl: C (b, M, N) = alpha * op(A) @ op(B), optionally accumulating into C.
import { computePipeline, dispatch, uniformBuffer } from "../device.ts";
import type { MatmulOpts } from "./matmul.ref.ts";
import source from "./matmul.wgsl" with { type: "text" };

export type { MatmulOpts } from "./matmul.ref.ts";

/** Records the matmul into `enc`; A, B and C are f32 storage buffers laid out as in matmul.wgsl. */
export async function encodeMatmul(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  a: GPUBuffer,
  b: GPUBuffer,
  c: GPUBuffer,
  o: MatmulOpts & { accumulate?: boolean },
): Promise<void> {
  const { M, N, K, batch = 1, transA = false, transB = false, alpha = 1, accumulate = false } = o;
  const pipeline = await computePipeline(device, "matmul", source, {
    TRANS_A: transA ? 1 : 0,
    TRANS_B: transB ? 1 : 0,
    ACCUMULATE: accumulate ? 1 : 0,
  });
  const words = new ArrayBuffer(32);
  const u = new Uint32Array(words);
  u[0] = M;
  u[1] = N;
  u[2] = K;
  new Float32Array(words)[3] = alpha;
  u[4] = o.broadcastA ? 0 : M * K;
  u[5] = o.broadcastB ? 0 : K * N;
  u[6] = M * N;
  const dims = uniformBuffer(device, "matmul-dims", u);
  dispatch(device, enc, pipeline, [a, b, c, dims], [Math.ceil(N / 64), Math.ceil(M / 64), batch]);
}

/** Floating-point operations of one matmul, for throughput figures. */
export function matmulFlops(o: MatmulOpts): number {
  return 2 * o.M * o.N * o.K * (o.batch ?? 1);
}
