// GPU time per compute pass, by pipeline label, through timestamp queries. While installed it
// switches recorder.ts to one pass per dispatch (`passes: "split"`; merged passes would hide the
// kernels inside one timed span), each labelled with its pipeline's label, so timing passes times
// kernels. For benchmarks only: it patches GPUCommandEncoder.prototype.beginComputePass while
// installed (one profiler at a time).
import { type PerfSwitches, setPerfSwitches } from "./switches.ts";

/** Time spent in one kernel label. */
export interface PassTiming {
  label: string;
  passes: number;
  ms: number;
}

/** What a profiled stretch of work did on the GPU. */
export interface PassProfile {
  /** Passes recorded (passes past the capacity are not timed and counted in `dropped`). */
  passes: number;
  dropped: number;
  /** Sum of the passes' own durations. */
  busyMs: number;
  /** From the first pass's start to the last pass's end (busy time plus the gaps between passes). */
  spanMs: number;
  byLabel: PassTiming[];
}

const QUERIES_PER_SET = 4096; // WebGPU's limit on a query set's count

/** Records timestamps around every compute pass begun between install() and read(). */
export class PassProfiler {
  private readonly sets: GPUQuerySet[] = [];
  private labels: string[] = [];
  private dropped = 0;
  private original: GPUCommandEncoder["beginComputePass"] | null = null;
  private originalDispatch: GPUComputePassEncoder["dispatchWorkgroups"] | null = null;
  private readonly passIndex = new WeakMap<GPUComputePassEncoder, number>();
  private savedPasses: PerfSwitches["passes"] | null = null;

  /** With `byGrid`, labels carry the dispatch's workgroup counts ("matmul [32,8,1]"), telling shapes apart. */
  byGrid = false;

  constructor(private readonly device: GPUDevice, private readonly capacity = 16384) {
    if (!device.features.has("timestamp-query")) throw new Error("PassProfiler: the device has no timestamp-query feature");
    for (let n = 0; n < capacity * 2; n += QUERIES_PER_SET) {
      this.sets.push(device.createQuerySet({ type: "timestamp", count: Math.min(QUERIES_PER_SET, capacity * 2 - n) }));
    }
  }

  install(): void {
    if (this.original) return;
    this.savedPasses = setPerfSwitches({ passes: "split" }).passes;
    const proto = GPUCommandEncoder.prototype;
    const original = proto.beginComputePass;
    this.original = original;
    // deno-lint-ignore no-this-alias
    const self = this;
    proto.beginComputePass = function (this: GPUCommandEncoder, desc?: GPUComputePassDescriptor): GPUComputePassEncoder {
      if (desc?.timestampWrites || self.labels.length >= self.capacity) {
        if (!desc?.timestampWrites) self.dropped++;
        return original.call(this, desc);
      }
      const i = self.labels.length;
      self.labels.push(desc?.label ?? "(unlabelled)");
      const set = self.sets[Math.floor((2 * i) / QUERIES_PER_SET)];
      const at = (2 * i) % QUERIES_PER_SET;
      const pass = original.call(this, { ...desc, timestampWrites: { querySet: set, beginningOfPassWriteIndex: at, endOfPassWriteIndex: at + 1 } });
      self.passIndex.set(pass, i);
      return pass;
    };
    const passProto = GPUComputePassEncoder.prototype;
    const dispatch = passProto.dispatchWorkgroups;
    this.originalDispatch = dispatch;
    passProto.dispatchWorkgroups = function (this: GPUComputePassEncoder, x: number, y?: number, z?: number): undefined {
      const i = self.passIndex.get(this);
      if (i !== undefined && self.byGrid) self.labels[i] += ` [${x},${y ?? 1},${z ?? 1}]`;
      return dispatch.call(this, x, y, z);
    };
  }

  uninstall(): void {
    if (this.original) GPUCommandEncoder.prototype.beginComputePass = this.original;
    if (this.originalDispatch) GPUComputePassEncoder.prototype.dispatchWorkgroups = this.originalDispatch;
    if (this.savedPasses) setPerfSwitches({ passes: this.savedPasses });
    this.savedPasses = null;
    this.original = null;
    this.originalDispatch = null;
  }

  /** Waits for the recorded work, reads the timestamps and starts a new recording. */
  async read(): Promise<PassProfile> {
    const n = this.labels.length;
    const stamps = new BigUint64Array(2 * n);
    if (n > 0) {
      const bytes = 2 * n * 8;
      const resolve = this.device.createBuffer({ size: Math.ceil(bytes / 256) * 256, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
      const read = this.device.createBuffer({ size: resolve.size, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
      const enc = this.device.createCommandEncoder({ label: "profile-resolve" });
      for (let q = 0; q < 2 * n; q += QUERIES_PER_SET) {
        enc.resolveQuerySet(this.sets[q / QUERIES_PER_SET], 0, Math.min(QUERIES_PER_SET, 2 * n - q), resolve, q * 8);
      }
      enc.copyBufferToBuffer(resolve, 0, read, 0, resolve.size);
      this.device.queue.submit([enc.finish()]);
      await read.mapAsync(GPUMapMode.READ);
      stamps.set(new BigUint64Array(read.getMappedRange(), 0, 2 * n));
      read.unmap();
      read.destroy();
      resolve.destroy();
    }
    const by = new Map<string, PassTiming>();
    let busy = 0, first = Infinity, last = -Infinity;
    for (let i = 0; i < n; i++) {
      const b = Number(stamps[2 * i]), e = Number(stamps[2 * i + 1]);
      const ms = Math.max(0, e - b) / 1e6;
      busy += ms;
      if (b > 0) first = Math.min(first, b);
      last = Math.max(last, e);
      const t = by.get(this.labels[i]) ?? { label: this.labels[i], passes: 0, ms: 0 };
      t.passes++;
      t.ms += ms;
      by.set(t.label, t);
    }
    const out: PassProfile = {
      passes: n,
      dropped: this.dropped,
      busyMs: busy,
      spanMs: n > 0 && Number.isFinite(first) ? (last - first) / 1e6 : 0,
      byLabel: [...by.values()].sort((a, b) => b.ms - a.ms),
    };
    this.labels = [];
    this.dropped = 0;
    return out;
  }

  destroy(): void {
    this.uninstall();
    for (const s of this.sets) s.destroy();
  }
}

/** A plain-text table of a profile's heaviest labels. */
export function formatProfile(p: PassProfile, top = 25): string {
  const lines = [`${p.passes} passes${p.dropped ? ` (+${p.dropped} untimed)` : ""}: GPU busy ${p.busyMs.toFixed(1)} ms, span ${p.spanMs.toFixed(1)} ms`];
  for (const t of p.byLabel.slice(0, top)) {
    lines.push(`  ${t.ms.toFixed(2).padStart(10)} ms ${((100 * t.ms) / Math.max(p.busyMs, 1e-9)).toFixed(1).padStart(5)}%  ${String(t.passes).padStart(6)} x  ${t.label}`);
  }
  return lines.join("\n");
}
