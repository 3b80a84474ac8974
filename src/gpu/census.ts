// A count of the GPU objects a device has made, for benchmarks and leak tests: it wraps the device's create* methods (on
// that device object only) and every buffer's destroy(), and registers each object with a FinalizationRegistry so
// objects the garbage collector reclaimed are counted too (under Deno an object stays in the driver until its JS wrapper
// is collected, destroy() or not; WebGPU has no destroy() for bind groups, encoders or passes).
//
// GPU memory: WebGPU has no memory query, so live buffer bytes are this census's own accounting: a buffer counts with
// its requested size from createBuffer until destroy() or the collection of its wrapper (textures are not counted: the
// trainer makes none); the peak is the high-water mark since install or resetPeak().

const KINDS = ["buffer", "bindGroup", "commandEncoder", "computePass", "shaderModule", "pipeline", "querySet"] as const;

/** Kinds of object counted. */
export type CensusKind = (typeof KINDS)[number];

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
  /** Highest liveBufferBytes since install or the last resetPeak(). */
  peakBufferBytes: number;
  /** Live buffers by label (only with `byLabel`). */
  liveByLabel?: Record<string, number>;
}

/** Options of a census. */
export interface CensusOptions {
  /** Wrap createBuffer only: buffer counts and bytes, no other kinds (default false; what a long-running trainer keeps). */
  buffersOnly?: boolean;
}

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
  private liveBytes = 0;
  private peakBytes = 0;
  private readonly registry = new FinalizationRegistry<{ kind: CensusKind; token?: number }>((h) => {
    this.collected[h.kind]++;
    if (h.token !== undefined) this.forget(h.token);
  });
  /** Per wrapped method: its name, the device's own property before (undefined: the prototype's), and the wrapper. */
  private readonly saved: [string, unknown, unknown][] = [];
  /** False after uninstall: a wrapper another census wrapped over stays in the chain but only passes through. */
  private active = false;

  constructor(private readonly device: GPUDevice, private readonly opts: CensusOptions = {}) {}

  private forget(token: number): void {
    const b = this.live.get(token);
    if (!b) return;
    this.live.delete(token);
    this.liveBytes -= b.size;
  }

  /** Bytes of the live buffers now. */
  get liveBufferBytes(): number {
    return this.liveBytes;
  }

  /** The high-water mark of live buffer bytes since install or the last resetPeak(). */
  get peakBufferBytes(): number {
    return this.peakBytes;
  }

  /** Starts a new high-water mark at the bytes live now; returns the previous peak. */
  resetPeak(): number {
    const p = this.peakBytes;
    this.peakBytes = this.liveBytes;
    return p;
  }

  install(): this {
    if (this.saved.length) return this;
    this.active = true;
    this.peakBytes = this.liveBytes;
    const d = this.device as unknown as Record<string, (...a: unknown[]) => unknown>;
    const wrap = (name: string, kind: CensusKind, after?: (o: object, args: unknown[]) => number | undefined) => {
      const original = d[name];
      const own = Object.prototype.hasOwnProperty.call(d, name) ? original : undefined;
      const wrapper = (...args: unknown[]) => {
        const r = original.apply(this.device, args);
        if (!this.active) return r;
        const count = (o: object) => {
          this.made[kind]++;
          const token = after?.(o, args);
          this.registry.register(o, { kind, token });
          return o;
        };
        return r instanceof Promise ? r.then(count) : count(r as object);
      };
      d[name] = wrapper;
      this.saved.push([name, own, wrapper]);
    };
    wrap("createBuffer", "buffer", (o, args) => {
      const b = o as GPUBuffer;
      const token = this.next++;
      const desc = args[0] as GPUBufferDescriptor;
      const label = desc.label ?? "";
      this.live.set(token, { label, size: desc.size });
      this.liveBytes += desc.size;
      if (this.liveBytes > this.peakBytes) this.peakBytes = this.liveBytes;
      const destroy = b.destroy;
      let done = false;
      (b as unknown as { destroy: () => void }).destroy = () => {
        if (!done) {
          done = true;
          this.destroyed++;
          this.forget(token);
        }
        return destroy.call(b);
      };
      return token;
    });
    if (this.opts.buffersOnly) return this;
    wrap("createBindGroup", "bindGroup");
    wrap("createCommandEncoder", "commandEncoder", (o) => {
      const enc = o as GPUCommandEncoder;
      const begin = enc.beginComputePass;
      // deno-lint-ignore no-this-alias
      const self = this;
      (enc as { beginComputePass: GPUCommandEncoder["beginComputePass"] }).beginComputePass = function (
        this: GPUCommandEncoder,
        desc?: GPUComputePassDescriptor,
      ) {
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

  /**
   * Puts the device's own methods back and stops counting (objects made meanwhile keep their wrapped
   * destroy). Where another census installed over this one, its wrappers stay and this one's pass through.
   */
  uninstall(): void {
    const d = this.device as unknown as Record<string, unknown>;
    this.active = false;
    for (const [name, own, wrapper] of this.saved) {
      if (d[name] !== wrapper) continue;
      if (own === undefined) delete d[name];
      else d[name] = own;
    }
    this.saved.length = 0;
  }

  /** The counts now; `byLabel` adds the live buffers grouped by label. */
  counts(byLabel = false): CensusCounts {
    const labels: Record<string, number> = {};
    if (byLabel) { for (const { label } of this.live.values()) labels[label] = (labels[label] ?? 0) + 1; }
    return {
      made: { ...this.made },
      collected: { ...this.collected },
      buffersDestroyed: this.destroyed,
      liveBuffers: this.live.size,
      liveBufferBytes: this.liveBytes,
      peakBufferBytes: this.peakBytes,
      ...(byLabel ? { liveByLabel: labels } : {}),
    };
  }
}
