// A count of the GPU objects a device has made, for benchmarks and leak tests: it wraps the
// device's create* methods (on that device object only) and every buffer's destroy(), and
// registers each object with a FinalizationRegistry so objects the JS garbage collector reclaimed
// are counted too. WebGPU has no destroy() for bind groups, encoders, command buffers or passes:
// under Deno (wgpu) they, and buffers never destroyed, stay alive in the driver until their JS
// wrapper is collected, which a run that allocates little JS memory may not do for a long time.

/** Kinds of object counted. */
export type CensusKind = "buffer" | "bindGroup" | "commandEncoder" | "computePass" | "shaderModule" | "pipeline" | "querySet";

/** Counts since install (or the last reset of `made`). */
export interface CensusCounts {
  /** Objects created, by kind. */
  made: Record<CensusKind, number>;
  /** Objects whose JS wrapper the garbage collector reclaimed, by kind. */
  collected: Record<CensusKind, number>;
  /** Buffers destroy()ed explicitly. */
  buffersDestroyed: number;
  /** Buffers neither destroyed nor collected, and their bytes. */
  liveBuffers: number;
  liveBufferBytes: number;
  /** Live buffers by label (only with `byLabel`). */
  liveByLabel?: Record<string, number>;
}

const KINDS: CensusKind[] = ["buffer", "bindGroup", "commandEncoder", "computePass", "shaderModule", "pipeline", "querySet"];

function zero(): Record<CensusKind, number> {
  return Object.fromEntries(KINDS.map((k) => [k, 0])) as Record<CensusKind, number>;
}

/** The census of one device: install() to start counting, uninstall() to restore its methods. */
export class GpuCensus {
  private made = zero();
  private collected = zero();
  private destroyed = 0;
  /** Live buffers: label and size (keyed by a token, as the registry cannot hold the buffer itself). */
  private readonly live = new Map<number, { label: string; size: number }>();
  private next = 0;
  private readonly registry = new FinalizationRegistry<{ kind: CensusKind; token?: number }>((h) => {
    this.collected[h.kind]++;
    if (h.token !== undefined) this.live.delete(h.token);
  });
  private readonly saved: [string, unknown][] = [];

  constructor(private readonly device: GPUDevice) {}

  install(): this {
    if (this.saved.length) return this;
    const d = this.device as unknown as Record<string, (...a: unknown[]) => unknown>;
    const wrap = (name: string, kind: CensusKind, after?: (o: object, args: unknown[]) => number | undefined) => {
      const original = d[name];
      this.saved.push([name, Object.prototype.hasOwnProperty.call(d, name) ? original : undefined]);
      d[name] = (...args: unknown[]) => {
        const r = original.apply(this.device, args);
        const count = (o: object) => {
          this.made[kind]++;
          const token = after?.(o, args);
          this.registry.register(o, { kind, token });
          return o;
        };
        return r instanceof Promise ? r.then(count) : count(r as object);
      };
    };
    wrap("createBuffer", "buffer", (o, args) => {
      const b = o as GPUBuffer;
      const token = this.next++;
      const desc = args[0] as GPUBufferDescriptor;
      this.live.set(token, { label: desc.label ?? "", size: desc.size });
      const destroy = b.destroy;
      let done = false;
      (b as { destroy: () => undefined }).destroy = () => {
        if (!done) {
          done = true;
          this.destroyed++;
          this.live.delete(token);
        }
        return destroy.call(b);
      };
      return token;
    });
    wrap("createBindGroup", "bindGroup");
    wrap("createCommandEncoder", "commandEncoder", (o) => {
      const enc = o as GPUCommandEncoder;
      const begin = enc.beginComputePass;
      // deno-lint-ignore no-this-alias
      const self = this;
      (enc as { beginComputePass: GPUCommandEncoder["beginComputePass"] }).beginComputePass = function (this: GPUCommandEncoder, desc?: GPUComputePassDescriptor) {
        const pass = begin.call(enc, desc);
        self.made.computePass++;
        self.registry.register(pass, { kind: "computePass" });
        return pass;
      };
      return undefined;
    });
    wrap("createShaderModule", "shaderModule");
    wrap("createComputePipeline", "pipeline");
    wrap("createComputePipelineAsync", "pipeline");
    wrap("createQuerySet", "querySet");
    return this;
  }

  /** Puts the device's own methods back (objects made meanwhile keep their wrapped destroy). */
  uninstall(): void {
    const d = this.device as unknown as Record<string, unknown>;
    for (const [name, own] of this.saved) {
      if (own === undefined) delete d[name];
      else d[name] = own;
    }
    this.saved.length = 0;
  }

  /** The counts now; `byLabel` adds the live buffers grouped by label. */
  counts(byLabel = false): CensusCounts {
    let bytes = 0;
    const labels: Record<string, number> = {};
    for (const { label, size } of this.live.values()) {
      bytes += size;
      if (byLabel) labels[label] = (labels[label] ?? 0) + 1;
    }
    return {
      made: { ...this.made },
      collected: { ...this.collected },
      buffersDestroyed: this.destroyed,
      liveBuffers: this.live.size,
      liveBufferBytes: bytes,
      ...(byLabel ? { liveByLabel: labels } : {}),
    };
  }
}
