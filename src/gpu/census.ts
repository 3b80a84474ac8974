// A count of the GPU buffers a device has made, for the recipe's memory figures, benchmarks and leak tests: it wraps the
// device's createBuffer (on that device object only) and every buffer's destroy(), and registers each buffer with a
// FinalizationRegistry so buffers the garbage collector reclaimed are counted too (under Deno an object stays in the
// driver until its JS wrapper is collected, destroy() or not).
//
// GPU memory: WebGPU has no memory query, so live buffer bytes are this census's own accounting: a buffer counts with
// its requested size from createBuffer until destroy() or the collection of its wrapper (textures are not counted: the
// trainer makes none); the peak is the high-water mark since install or resetPeak().

/** Counts since install. */
export interface CensusCounts {
  /** Buffers created. */
  made: { buffer: number };
  /** Buffers neither destroyed nor collected, and their bytes. */
  liveBuffers: number;
  liveBufferBytes: number;
  /** Highest liveBufferBytes since install or the last resetPeak(). */
  peakBufferBytes: number;
  /** Live buffers by label (only with `byLabel`). */
  liveByLabel?: Record<string, number>;
}

/** The census of one device: install() to start counting, uninstall() to restore its createBuffer. */
export class GpuCensus {
  private made = 0;
  /** Live buffers: label and size (keyed by a token, as the registry cannot hold the buffer itself). */
  private readonly live = new Map<number, { label: string; size: number }>();
  private next = 0;
  private liveBytes = 0;
  private peakBytes = 0;
  private readonly registry = new FinalizationRegistry<number>((token) => this.forget(token));
  /** The device's own createBuffer property before install (undefined: the prototype's), and the wrapper. */
  private saved: { own: unknown; wrapper: unknown } | null = null;
  /** False after uninstall: a wrapper another census wrapped over stays in the chain but only passes through. */
  private active = false;

  constructor(private readonly device: GPUDevice) {}

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
    if (this.saved) return this;
    this.active = true;
    this.peakBytes = this.liveBytes;
    const d = this.device as unknown as Record<string, unknown>;
    const original = this.device.createBuffer;
    const wrapper = (desc: GPUBufferDescriptor): GPUBuffer => {
      const b = original.call(this.device, desc);
      if (!this.active) return b;
      this.made++;
      const token = this.next++;
      this.registry.register(b, token);
      this.live.set(token, { label: desc.label ?? "", size: desc.size });
      this.liveBytes += desc.size;
      if (this.liveBytes > this.peakBytes) this.peakBytes = this.liveBytes;
      const destroy = b.destroy;
      let done = false;
      b.destroy = () => {
        if (!done) {
          done = true;
          this.forget(token);
        }
        return destroy.call(b);
      };
      return b;
    };
    this.saved = { own: Object.prototype.hasOwnProperty.call(d, "createBuffer") ? original : undefined, wrapper };
    d.createBuffer = wrapper;
    return this;
  }

  /**
   * Puts the device's own createBuffer back and stops counting (buffers made meanwhile keep their wrapped
   * destroy). Where another census installed over this one, its wrapper stays and this one's passes through.
   */
  uninstall(): void {
    const d = this.device as unknown as Record<string, unknown>;
    this.active = false;
    if (this.saved && d.createBuffer === this.saved.wrapper) {
      if (this.saved.own === undefined) delete d.createBuffer;
      else d.createBuffer = this.saved.own;
    }
    this.saved = null;
  }

  /** The counts now; `byLabel` adds the live buffers grouped by label. */
  counts(byLabel = false): CensusCounts {
    const labels: Record<string, number> = {};
    if (byLabel) { for (const { label } of this.live.values()) labels[label] = (labels[label] ?? 0) + 1; }
    return {
      made: { buffer: this.made },
      liveBuffers: this.live.size,
      liveBufferBytes: this.liveBytes,
      peakBufferBytes: this.peakBytes,
      ...(byLabel ? { liveByLabel: labels } : {}),
    };
  }
}
