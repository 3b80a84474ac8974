// Benchmark helper (not a test): counts WebGPU API calls and the wall time spent inside them by
// wrapping the methods on the GPU* prototypes (every device in the process, ORT's included).
// Where the "GPU" is a CPU (lavapipe), queue.submit runs the work itself, so its time is GPU
// time; the time inside the other calls is host-side API overhead, which is what a fast GPU
// cannot hide: a decoding step is bounded below by its call count times the per-call cost.

/** Calls and milliseconds per API method ("GPUQueue.submit", ...). */
export type CallCounts = Record<string, { calls: number; ms: number }>;

const METHODS: Record<string, readonly string[]> = {
  GPUDevice: [
    "createBuffer",
    "createBindGroup",
    "createCommandEncoder",
    "createComputePipeline",
    "createComputePipelineAsync",
    "createShaderModule",
  ],
  GPUQueue: ["submit", "writeBuffer", "onSubmittedWorkDone"],
  GPUCommandEncoder: ["beginComputePass", "copyBufferToBuffer", "finish", "clearBuffer", "resolveQuerySet"],
  GPUComputePassEncoder: ["setPipeline", "setBindGroup", "dispatchWorkgroups", "dispatchWorkgroupsIndirect", "end"],
  GPUBuffer: ["mapAsync", "getMappedRange", "unmap", "destroy"],
};

/** Wraps the methods once; returns the live counters (reset with `resetCalls`). */
export function installCallCounter(): CallCounts {
  const counts: CallCounts = {};
  const g = globalThis as unknown as Record<string, { prototype: Record<string, unknown> } | undefined>;
  for (const [cls, methods] of Object.entries(METHODS)) {
    const proto = g[cls]?.prototype;
    if (!proto) continue;
    for (const m of methods) {
      const orig = proto[m];
      if (typeof orig !== "function") continue;
      const key = `${cls}.${m}`;
      counts[key] = { calls: 0, ms: 0 };
      proto[m] = function (this: unknown, ...args: unknown[]) {
        const c = counts[key];
        c.calls++;
        const t0 = performance.now();
        try {
          return orig.apply(this, args);
        } finally {
          c.ms += performance.now() - t0;
        }
      };
    }
  }
  return counts;
}

/** A copy of the counters (for differences between two moments). */
export function snapshotCalls(c: CallCounts): CallCounts {
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [k, { ...v }]));
}

/** b - a, methods with no calls left out. */
export function diffCalls(a: CallCounts, b: CallCounts): CallCounts {
  const out: CallCounts = {};
  for (const [k, v] of Object.entries(b)) {
    const calls = v.calls - (a[k]?.calls ?? 0);
    if (calls > 0) out[k] = { calls, ms: v.ms - (a[k]?.ms ?? 0) };
  }
  return out;
}
