// The comlink contract of workers/gpu.worker.ts, imported by both sides.
import type { MatmulBenchResult } from "../src/gpu/bench.ts";
import type { GpuInfo } from "../src/gpu/device.ts";

export type { GpuInfo, MatmulBenchResult };

/** What the GPU worker found: an adapter, or why there is none and how to get one. */
export type GpuProbe =
  | { available: true; info: GpuInfo }
  | { available: false; reason: string };

/** The API the GPU worker exposes. It owns the one GPUDevice of the page. */
export interface GpuWorkerApi {
  /** Requests the adapter and device (once) and describes them. */
  probe(): Promise<GpuProbe>;
  /** GFLOP/s of the tiled matmul kernel on a size^3 product; progress in [0, 1]. */
  benchmarkMatmul(size: number, onProgress?: (fraction: number) => void): Promise<MatmulBenchResult>;
}
