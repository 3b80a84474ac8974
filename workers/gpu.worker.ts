// Owns the page's GPUDevice. The page talks to it through the comlink API in gpu.api.ts, never
// to the GPU directly; calls are serialised so one long job cannot interleave with another.
import * as Comlink from "comlink";
import { benchmarkMatmul } from "../src/gpu/bench.ts";
import { type Gpu, requestGpu, WebGpuUnavailableError } from "../src/gpu/device.ts";
import type { GpuProbe, GpuWorkerApi } from "./gpu.api.ts";

let gpu: Promise<Gpu> | null = null;
let queue: Promise<unknown> = Promise.resolve();

function getGpu(): Promise<Gpu> {
  if (!gpu) {
    gpu = requestGpu();
    gpu.then((g) => g.device.lost.then(() => (gpu = null))).catch(() => (gpu = null));
  }
  return gpu;
}

function serial<T>(job: () => Promise<T>): Promise<T> {
  const next = queue.then(job, job);
  queue = next.catch(() => undefined);
  return next;
}

const api: GpuWorkerApi = {
  probe: () =>
    serial(async (): Promise<GpuProbe> => {
      try {
        return { available: true, info: (await getGpu()).info };
      } catch (e) {
        const reason = e instanceof WebGpuUnavailableError ? e.reason : e instanceof Error ? e.message : String(e);
        return { available: false, reason };
      }
    }),
  benchmarkMatmul: (size, onProgress) =>
    serial(async () => benchmarkMatmul((await getGpu()).device, { size, minSeconds: 1, onProgress })),
};

Comlink.expose(api);
