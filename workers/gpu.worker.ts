// Owns the page's GPUDevice. The page talks to it through the comlink API in gpu.api.ts, never
// to the GPU directly; GPU jobs are serialised so one long job cannot interleave with another.
// It also hosts notebook runs (run-host.ts): the recipe runners with the browser environment,
// run folders in the Origin Private File System, SQL through nested sql.worker.ts workers.
import * as Comlink from "comlink";
import ortWasmUrl from "onnxruntime-web/ort-wasm-simd-threaded.asyncify.wasm?url";
import sqlWasmUrl from "sql.js/dist/sql-wasm-browser.wasm?url";
import { benchmarkMatmul } from "../src/gpu/bench.ts";
import { type Gpu, requestGpu, WebGpuUnavailableError } from "../src/gpu/device.ts";
import { ort } from "../src/model/onnx/ort.ts";
import { type ClearableCache, opfsCache } from "../src/model/source.web.ts";
import { type FileStore, MemoryStore, OpfsStore } from "../src/runtime/store.ts";
import type { GpuProbe, GpuWorkerApi, RunStorage } from "./gpu.api.ts";
import { RunHost } from "./run-host.ts";

// onnxruntime-web's WebGPU bundle loads this wasm at run time; Vite copies it from node_modules
// into the build (`?url`), nothing is vendored. One thread: the page need not be cross-origin
// isolated, and the heavy work is on the GPU.
ort.env.wasm.wasmPaths = { wasm: ortWasmUrl };
ort.env.wasm.numThreads = 1;

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

/** OPFS when the browser has it (runs survive a reload), else memory (they do not). */
async function runStore(): Promise<{ store: FileStore; storage: RunStorage; modelCache: ClearableCache | null }> {
  try {
    await navigator.storage.getDirectory();
    return { store: new OpfsStore(""), storage: { kind: "opfs" }, modelCache: opfsCache("rlvr-model-cache") };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return {
      store: new MemoryStore(),
      storage: {
        kind: "memory",
        note:
          `This browser gives the page no private file system (${why}): runs are kept in memory and do not survive a reload.`,
      },
      modelCache: null,
    };
  }
}

const stores = runStore();
const host = stores.then(({ store, modelCache }) =>
  new RunHost({
    store,
    modelCache: modelCache ?? undefined,
    gpuDevice: async () => (await getGpu()).device,
    sqlWasmUrl,
  })
);

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
  startRun: (req, events) => serial(async () => (await host).start(req, events)),
  // Not serialised: a stop must reach the run while it holds the queue.
  stopRun: async (reason) => (await host).stop(reason),
  listRuns: async () => (await host).list(),
  readRunFile: async (runId, name) => (await host).read(runId, name),
  readRunBytes: async (runId, name) => (await host).readBytes(runId, name),
  removeRun: async (runId) => (await host).remove(runId),
  storage: async () => (await stores).storage,
  modelCache: async () => (await (await stores).modelCache?.usage()) ?? null,
  // Serialised: a run in progress may be writing into the cache.
  clearModelCache: () => serial(async () => (await (await stores).modelCache?.clear()) ?? null),
};

Comlink.expose(api);
