// The matmul micro-benchmark shown by the GPU cell and `rlvr gpu`: GFLOP/s of matmul.wgsl on a
// square problem, after a correctness check of a small odd-sized product against the reference.
import { Rng } from "../core/rng.ts";
import { poison, readF32, storageBuffer } from "./device.ts";
import { encodeMatmul, MATMUL_VARIANTS, matmulFlops } from "./kernels/matmul.ts";

export interface MatmulBenchResult {
  size: number;
  iterations: number;
  seconds: number;
  gflops: number;
  /** Largest |gpu - float64 reference| on a 67x45x33 check product, over every matmul kernel. */
  checkMaxAbsErr: number;
  checkPassed: boolean;
}

/** Runs the benchmark; `onProgress(fraction)` is called as iterations complete. */
export async function benchmarkMatmul(
  device: GPUDevice,
  opts: { size?: number; minSeconds?: number; maxIterations?: number; onProgress?: (f: number) => void } = {},
): Promise<MatmulBenchResult> {
  const { size = 1024, minSeconds = 1, maxIterations = 200, onProgress } = opts;
  const checkMaxAbsErr = await selfCheck(device);
  const rng = new Rng(1234);
  const a = storageBuffer(device, "bench-a", rng.uniformArray(size * size));
  const b = storageBuffer(device, "bench-b", rng.uniformArray(size * size));
  const c = storageBuffer(device, "bench-c", size * size * 4);
  const o = { M: size, N: size, K: size };
  const runOnce = async () => {
    const enc = device.createCommandEncoder({ label: "bench" });
    await encodeMatmul(device, enc, a, b, c, o);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
  };
  await runOnce(); // warm-up: pipeline compile and first dispatch
  let iterations = 0;
  const t0 = performance.now();
  while (iterations < maxIterations) {
    await runOnce();
    iterations++;
    const elapsed = (performance.now() - t0) / 1000;
    onProgress?.(Math.min(1, elapsed / minSeconds));
    if (elapsed >= minSeconds) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  for (const x of [a, b, c]) x.destroy();
  return {
    size,
    iterations,
    seconds,
    gflops: (matmulFlops(o) * iterations) / seconds / 1e9,
    checkMaxAbsErr,
    checkPassed: checkMaxAbsErr < 1e-3,
  };
}

async function selfCheck(device: GPUDevice): Promise<number> {
  const o = { M: 67, N: 45, K: 33 };
  const rng = new Rng(99);
  const a = rng.uniformArray(o.M * o.K);
  const b = rng.uniformArray(o.K * o.N);
  const ga = storageBuffer(device, "check-a", a);
  const gb = storageBuffer(device, "check-b", b);
  const gc = storageBuffer(device, "check-c", o.M * o.N * 4);
  const want = productF64(a, b, o.M, o.N, o.K);
  let err = 0;
  // Every matmul kernel, so that each browser's shader compiler is checked on all of them.
  for (const variant of MATMUL_VARIANTS) {
    poison(device, gc);
    const enc = device.createCommandEncoder({ label: "check" });
    await encodeMatmul(device, enc, ga, gb, gc, { ...o, variant });
    device.queue.submit([enc.finish()]);
    const got = await readF32(device, gc);
    for (let i = 0; i < got.length; i++) {
      err = Math.max(err, Number.isNaN(got[i]) ? Infinity : Math.abs(got[i] - want[i]));
    }
  }
  for (const x of [ga, gb, gc]) x.destroy();
  return err;
}

/** C (M, N) = A (M, K) @ B (K, N) in float64, the self-check's expected values (the kernels' own reference is
 * tests/gpu-ref/matmul.ref.ts, which the tests use). */
function productF64(a: ArrayLike<number>, b: ArrayLike<number>, M: number, N: number, K: number): Float64Array {
  const c = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let k = 0; k < K; k++) {
      for (let n = 0; n < N; n++) c[m * N + n] += a[m * K + k] * b[k * N + n];
    }
  }
  return c;
}
