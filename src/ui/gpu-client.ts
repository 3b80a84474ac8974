// The page's handle on workers/gpu.worker.ts (one worker, created on first use).
import * as Comlink from "comlink";
import type { GpuWorkerApi } from "../../workers/gpu.api.ts";

let remote: Comlink.Remote<GpuWorkerApi> | null = null;

/** The GPU worker's API. */
export function gpuWorker(): Comlink.Remote<GpuWorkerApi> {
  if (!remote) {
    const worker = new Worker(new URL("../../workers/gpu.worker.ts", import.meta.url), { type: "module", name: "gpu" });
    remote = Comlink.wrap<GpuWorkerApi>(worker);
  }
  return remote;
}

export { Comlink };
