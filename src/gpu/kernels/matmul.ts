// Wrapper of matmul.wgsl: C (b, M, N) = alpha * op(A) @ op(B), optionally accumulating into C.
// Products with few output tiles and a long contracted dimension (the weight and LoRA gradients
// dW = dY^T X, where K is every token of the batch) are split along K: the slices run as the
// batches of one dispatch into a scratch buffer, and matmul_splitk_reduce.wgsl sums them into C.
import { computePipeline, dispatch, retireBuffer, storageBuffer, uniformBuffer } from "../device.ts";
import type { MatmulOpts } from "./matmul.ref.ts";
import source from "./matmul.wgsl" with { type: "text" };
import reduceSource from "./matmul_splitk_reduce.wgsl" with { type: "text" };

export type { MatmulOpts } from "./matmul.ref.ts";

/** Workgroups below which a long-K product is split (about two per multiprocessor of a big GPU). */
const SPLIT_TARGET_WORKGROUPS = 256;
/** Contracted length each split slice keeps at least. */
const SPLIT_MIN_K = 256;
/** Largest scratch buffer the split may use. */
const SPLIT_MAX_BYTES = 64 * 2 ** 20;

const scratch = new WeakMap<GPUDevice, GPUBuffer>();

/** One grow-only scratch buffer per device; passes run in queue order, so every split reuses it. */
function scratchBuffer(device: GPUDevice, bytes: number): GPUBuffer {
  let buf = scratch.get(device);
  if (!buf || buf.size < bytes) {
    // Passes recorded but not yet submitted may still use the old one: destroy it later.
    if (buf) retireBuffer(device, buf);
    buf = storageBuffer(device, "matmul-splitk-scratch", bytes);
    scratch.set(device, buf);
  }
  return buf;
}

/** Slices of K a product is split into (1: not split). Only transposed-A, plain-B, unbatched products split. */
export function splitKSlices(o: MatmulOpts): number {
  const { M, N, K, batch = 1, transA = false, transB = false } = o;
  if (batch !== 1 || !transA || transB) return 1;
  const tiles = Math.ceil(M / 64) * Math.ceil(N / 64);
  if (tiles >= SPLIT_TARGET_WORKGROUPS / 2) return 1;
  const byK = Math.floor(K / SPLIT_MIN_K);
  const byTiles = Math.ceil(SPLIT_TARGET_WORKGROUPS / tiles);
  const byMemory = Math.floor(SPLIT_MAX_BYTES / (4 * M * N));
  return Math.max(1, Math.min(byK, byTiles, byMemory));
}

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
  const S = splitKSlices(o);
  const words = new ArrayBuffer(32);
  const u = new Uint32Array(words);
  if (S > 1) {
    // Slice z of A^T (K, M) and of B (K, N) are contiguous: rows [z Kc, (z + 1) Kc).
    const Kc = Math.ceil(K / S / 16) * 16;
    const slices = Math.ceil(K / Kc);
    const part = scratchBuffer(device, 4 * slices * M * N);
    const pipeline = await computePipeline(device, "matmul", source, { TRANS_A: 1, TRANS_B: 0, ACCUMULATE: 0 });
    u.set([M, N, Kc]);
    new Float32Array(words)[3] = 1;
    u.set([Kc * M, Kc * N, M * N, K], 4);
    dispatch(device, enc, pipeline, [a, b, part, uniformBuffer(device, "matmul-dims", u)], [Math.ceil(N / 64), Math.ceil(M / 64), slices]);
    const reduce = await computePipeline(device, "matmul_splitk_reduce", reduceSource, { ACCUMULATE: accumulate ? 1 : 0 });
    const prm = new ArrayBuffer(16);
    new Uint32Array(prm).set([M * N, slices]);
    new Float32Array(prm)[2] = alpha;
    const groups = Math.ceil((M * N) / 256);
    const gx = Math.min(groups, 65535);
    dispatch(device, enc, reduce, [part, c, uniformBuffer(device, "matmul-splitk-params", new Uint32Array(prm))], [gx, Math.ceil(groups / gx)]);
    return;
  }
  const pipeline = await computePipeline(device, "matmul", source, {
    TRANS_A: transA ? 1 : 0,
    TRANS_B: transB ? 1 : 0,
    ACCUMULATE: accumulate ? 1 : 0,
  });
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
