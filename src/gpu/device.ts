// Device acquisition and the small set of helpers every kernel wrapper uses: labelled buffers,
// uploads, read-backs, and pipeline creation inside an error scope. Dispatches are recorded by
// recorder.ts (re-exported here).
import { advanceBindCache, bindGroupLayout } from "./recorder.ts";

export { beginPass, bindGroupLayout, commandEncoder, dispatch, endPass } from "./recorder.ts";

/** Features this project can use when the adapter offers them. */
export const WANTED_FEATURES = ["shader-f16", "subgroups", "timestamp-query"] as const;

/** Limits requested at the adapter's largest and shown in GpuInfo. */
const LIMITS = [
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupStorageSize",
  "maxComputeInvocationsPerWorkgroup",
  "maxStorageBuffersPerShaderStage",
] as const;

/** What the page and `rlvr gpu` show about the adapter. */
export interface GpuInfo {
  vendor: string;
  architecture: string;
  device: string;
  description: string;
  features: Record<(typeof WANTED_FEATURES)[number], boolean>;
  /** Subgroup sizes the adapter reports (0 where it reports none). */
  subgroupMinSize: number;
  subgroupMaxSize: number;
  /**
   * Subgroup matrix shapes and types the adapter offers (Dawn's chromium-experimental-subgroup-matrix;
   * empty elsewhere), as "componentType/resultComponentType MxNxK".
   */
  subgroupMatrixConfigs: string[];
  limits: Record<(typeof LIMITS)[number], number>;
}

/** A device together with what was enabled on it. */
export interface Gpu {
  device: GPUDevice;
  adapter: GPUAdapter;
  info: GpuInfo;
  f16: boolean;
}

/** Why WebGPU is unavailable, with what the user can do about it. */
export class WebGpuUnavailableError extends Error {
  /** The short reason, without the advice. */
  readonly reason: string;

  constructor(reason: string) {
    super(
      `WebGPU is not available: ${reason}. Use a recent Chrome or Edge (113+) with hardware ` +
        `acceleration on; on Linux start Chrome with --enable-unsafe-webgpu --enable-features=Vulkan, ` +
        `or check chrome://gpu. Headless: Deno with a Vulkan driver (Mesa's lavapipe works on CPU).`,
    );
    this.name = "WebGpuUnavailableError";
    this.reason = reason;
  }
}

/** Requests an adapter and a device with every wanted feature the adapter has, and its largest buffer limits. */
export async function requestGpu(opts: { forceF32?: boolean } = {}): Promise<Gpu> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (!nav?.gpu) throw new WebGpuUnavailableError("navigator.gpu is missing");
  const adapter = await nav.gpu.requestAdapter({ powerPreference: "high-performance" });
  if (!adapter) throw new WebGpuUnavailableError("no GPU adapter was found");
  const features = WANTED_FEATURES.filter((f) => adapter.features.has(f) && !(opts.forceF32 && f === "shader-f16"));
  const device = await adapter.requestDevice({
    label: "rlvr-device",
    requiredFeatures: features as GPUFeatureName[],
    requiredLimits: limitsOf(adapter.limits),
  });
  const ai = adapter.info;
  const ext = ai as unknown as {
    subgroupMinSize?: number;
    subgroupMaxSize?: number;
    subgroupMatrixConfigs?: ArrayLike<Record<string, unknown>>;
  };
  const info: GpuInfo = {
    vendor: ai?.vendor ?? "",
    architecture: ai?.architecture ?? "",
    device: ai?.device ?? "",
    description: ai?.description ?? "",
    features: Object.fromEntries(WANTED_FEATURES.map((f) => [f, device.features.has(f)])) as GpuInfo["features"],
    subgroupMinSize: ext?.subgroupMinSize ?? 0,
    subgroupMaxSize: ext?.subgroupMaxSize ?? 0,
    subgroupMatrixConfigs: Array.from(
      ext?.subgroupMatrixConfigs ?? [],
      (c) => `${c.componentType}/${c.resultComponentType} ${c.M}x${c.N}x${c.K}`,
    ),
    limits: limitsOf(device.limits),
  };
  return { device, adapter, info, f16: info.features["shader-f16"] };
}

function limitsOf(l: GPUSupportedLimits): GpuInfo["limits"] {
  return Object.fromEntries(LIMITS.map((k) => [k, l[k]])) as GpuInfo["limits"];
}

const STORAGE = 0x0080; // GPUBufferUsage.STORAGE (the constant objects are absent in some runtimes' workers)
const COPY_SRC = 0x0004;
const COPY_DST = 0x0008;
const MAP_READ = 0x0001;
const UNIFORM = 0x0040;

/** A storage buffer holding `data` (or `byteLength` zero bytes), usable as copy source and target. */
export function storageBuffer(device: GPUDevice, label: string, data: ArrayBufferView | number): GPUBuffer {
  const size = typeof data === "number" ? data : data.byteLength;
  const buf = device.createBuffer({ label, size: align4(Math.max(size, 4)), usage: STORAGE | COPY_SRC | COPY_DST });
  if (typeof data !== "number") writeBuffer(device, buf, data);
  return buf;
}

/**
 * Per-device bookkeeping of short-lived buffers. Uniform buffers (one per dispatch: thousands per
 * training step) come from a free list and go back to it at releaseTransients instead of being
 * destroyed: a destroyed buffer's object lives in the WebGPU implementation until the garbage
 * collector reclaims its wrapper, and tens of thousands of them slowed every dispatch
 * (docs/trainer.md, "Long runs").
 */
interface Transients {
  /** Uniform buffers handed out since the last releaseTransients, and the same by content (one buffer per content and step). */
  inUse: GPUBuffer[];
  inUseByWords: Map<string, GPUBuffer>;
  /** Released uniform buffers by byte size, by content, and by the label and size they last served, ready for reuse. */
  freeBySize: Map<number, Set<GPUBuffer>>;
  freeByWords: Map<string, Set<GPUBuffer>>;
  freeBySlot: Map<string, Set<GPUBuffer>>;
  freeCount: number;
  /** What each pooled uniform buffer holds, and the label and size ("slot") it last served. */
  words: WeakMap<GPUBuffer, string>;
  slots: WeakMap<GPUBuffer, string>;
  /** Buffers to destroy at the next releaseTransients. */
  retired: GPUBuffer[];
  /** Uniform buffers created, reused with a new write, and reused as they were from an earlier step (for tests). */
  created: number;
  rewritten: number;
  unchanged: number;
}

/** Most released uniform buffers kept for reuse per device (the rest are destroyed). */
const MAX_FREE_UNIFORMS = 1 << 15;

const transients = new WeakMap<GPUDevice, Transients>();

function transientsOf(device: GPUDevice): Transients {
  let t = transients.get(device);
  if (!t) {
    t = {
      inUse: [],
      inUseByWords: new Map(),
      freeBySize: new Map(),
      freeByWords: new Map(),
      freeBySlot: new Map(),
      freeCount: 0,
      words: new WeakMap(),
      slots: new WeakMap(),
      retired: [],
      created: 0,
      rewritten: 0,
      unchanged: 0,
    };
    transients.set(device, t);
  }
  return t;
}

function first<K, T>(map: Map<K, Set<T>>, key: K): T | undefined {
  const set = map.get(key);
  if (!set) return undefined;
  for (const v of set) return v;
  return undefined;
}

/** Takes `buf` off every free list. */
function unfree(t: Transients, buf: GPUBuffer): void {
  drop(t.freeBySize, buf.size, buf);
  drop(t.freeByWords, t.words.get(buf)!, buf);
  drop(t.freeBySlot, t.slots.get(buf)!, buf);
  t.freeCount--;
}

/** Removes `v` from the set at `key`, and the key once its set is empty (contents vary from step to step: AdamW's learning rate). */
function drop<K, T>(map: Map<K, Set<T>>, key: K, v: T): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(v);
  if (set.size === 0) map.delete(key);
}

/**
 * A uniform buffer holding 32-bit words (u32 or f32 packed by the caller): one dispatch's
 * parameters. It stays valid until the next releaseTransients, which recycles it: release only once
 * every encoder that used it has been submitted (a step's end), and never while another task on the
 * same device is still recording, since a recycled buffer may be rewritten by the next request.
 * A recycled buffer keeps the label it was made with. Requests for the same words between two
 * releases get the same buffer (callers never write into it), so a step holds one buffer per
 * distinct parameter set. Across steps a request takes, in this order, a free buffer holding its
 * words, one that last served the same label (rewritten: AdamW's step-dependent terms), any of its
 * size, or a new one; a step that repeats the previous one's requests so gets the same buffers
 * back, and the bind groups naming them hit recorder.ts's cache.
 */
export function uniformBuffer(device: GPUDevice, label: string, words: ArrayBufferView): GPUBuffer {
  const t = transientsOf(device);
  const size = align16(words.byteLength);
  const padded = new Uint32Array(size / 4);
  new Uint8Array(padded.buffer).set(new Uint8Array(words.buffer, words.byteOffset, words.byteLength));
  const key = padded.join(",");
  const same = t.inUseByWords.get(key);
  if (same) return same;
  const slot = `${label}|${size}`;
  let buf = first(t.freeByWords, key);
  if (buf) {
    unfree(t, buf);
    t.unchanged++;
  } else {
    buf = first(t.freeBySlot, slot) ?? first(t.freeBySize, size);
    if (buf) {
      unfree(t, buf);
      t.rewritten++;
    } else {
      buf = device.createBuffer({ label, size, usage: UNIFORM | COPY_DST });
      t.created++;
    }
    device.queue.writeBuffer(buf, 0, padded);
    t.words.set(buf, key);
  }
  t.slots.set(buf, slot);
  t.inUse.push(buf);
  t.inUseByWords.set(key, buf);
  return buf;
}

/** Hands `buf` to the transient list: destroyed at the next releaseTransients, after the work recorded with it was submitted. */
export function retireBuffer(device: GPUDevice, buf: GPUBuffer): void {
  transientsOf(device).retired.push(buf);
}

/**
 * Ends a step's transient buffers: the uniform buffers handed out since the last call go back to
 * the free list (reused by later dispatches: a write to one is queued after the work already
 * submitted, so that work still reads the old values), retired buffers are destroyed. Call it once
 * the work that used them has been submitted.
 */
export function releaseTransients(device: GPUDevice): void {
  const t = transients.get(device);
  if (!t) {
    advanceBindCache(device);
    return;
  }
  for (const b of t.retired) b.destroy();
  t.retired = [];
  for (const b of t.inUse) {
    if (t.freeCount >= MAX_FREE_UNIFORMS) {
      b.destroy();
      continue;
    }
    const key = t.words.get(b)!;
    const slot = t.slots.get(b)!;
    let bySize = t.freeBySize.get(b.size);
    if (!bySize) t.freeBySize.set(b.size, bySize = new Set());
    let byWords = t.freeByWords.get(key);
    if (!byWords) t.freeByWords.set(key, byWords = new Set());
    let bySlot = t.freeBySlot.get(slot);
    if (!bySlot) t.freeBySlot.set(slot, bySlot = new Set());
    bySize.add(b);
    byWords.add(b);
    bySlot.add(b);
    t.freeCount++;
  }
  t.inUse = [];
  t.inUseByWords.clear();
  advanceBindCache(device);
}

/** Counts of the uniform buffers made and reused (rewritten, as they were) on `device` so far, and how many are in use (tests). */
export function transientStats(
  device: GPUDevice,
): { created: number; rewritten: number; unchanged: number; inUse: number } {
  const t = transientsOf(device);
  return { created: t.created, rewritten: t.rewritten, unchanged: t.unchanged, inUse: t.inUse.length };
}

const scratches = new WeakMap<GPUDevice, Map<string, GPUBuffer>>();

/**
 * The sharedScratch name of the kernels whose scratch is large and lives within one call: the attention backward's dq
 * partials and the q4 weights dequantised for the f32 kernels (knob q4deq). One buffer, the larger need, serves both;
 * a step that knows both sizes can ask for the larger first (grpo-step.ts), so that it never grows mid-step.
 */
export const CALL_SCRATCH = "call-scratch";

/**
 * The device's grow-only scratch buffer of this name, at least `bytes` long: for kernels whose
 * scratch lives within one call (written by one dispatch, read by the next). Dispatches run in
 * queue order, so every call can share it; a larger request replaces it (the old one is destroyed
 * at the next releaseTransients, after the work recorded with it was submitted).
 */
export function sharedScratch(device: GPUDevice, name: string, bytes: number): GPUBuffer {
  let byName = scratches.get(device);
  if (!byName) scratches.set(device, byName = new Map());
  let buf = byName.get(name);
  if (!buf || buf.size < bytes) {
    if (buf) retireBuffer(device, buf);
    buf = storageBuffer(device, name, bytes);
    byName.set(name, buf);
  }
  return buf;
}

/** The device's shared scratch of this name as it is now (undefined before any sharedScratch call made it); never grows it. */
export function existingScratch(device: GPUDevice, name: string): GPUBuffer | undefined {
  return scratches.get(device)?.get(name);
}

/** Writes `data` at `offset`, padding to a multiple of four bytes as WebGPU requires. */
export function writeBuffer(device: GPUDevice, buf: GPUBuffer, data: ArrayBufferView, offset = 0): void {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  if (bytes.byteLength % 4 === 0) {
    device.queue.writeBuffer(buf, offset, bytes);
  } else {
    const padded = new Uint8Array(align4(bytes.byteLength));
    padded.set(bytes);
    device.queue.writeBuffer(buf, offset, padded);
  }
}

/** Copies `byteLength` bytes of `buf` back to the CPU. */
export async function readBuffer(device: GPUDevice, buf: GPUBuffer, byteLength = buf.size): Promise<ArrayBuffer> {
  return (await readBuffers(device, [{ buffer: buf, bytes: byteLength }]))[0];
}

/**
 * Copies several buffers' leading bytes back to the CPU in one submit and one map of all staging
 * buffers (a step's figures, or a checkpoint's hundreds of adapter and moment buffers, read together
 * instead of a round trip each). The copies are submitted before this returns, so work submitted later
 * (the next training step) does not change what it reads. Parts are packed into staging buffers of at
 * most `maxBytes` (by default the device's largest buffer, at most 256 MiB; a larger part gets one of its own).
 */
export async function readBuffers(
  device: GPUDevice,
  parts: readonly { buffer: GPUBuffer; bytes: number }[],
  maxBytes = Math.min(device.limits.maxBufferSize, 256 * 1024 * 1024),
): Promise<ArrayBuffer[]> {
  const groups: { size: number; members: { part: number; offset: number }[] }[] = [];
  parts.forEach((p, i) => {
    if (p.bytes <= 0) return;
    const bytes = align4(p.bytes);
    let g = groups.at(-1);
    if (!g || (g.size > 0 && g.size + bytes > maxBytes)) groups.push(g = { size: 0, members: [] });
    g.members.push({ part: i, offset: g.size });
    g.size += bytes;
  });
  const out = parts.map(() => new ArrayBuffer(0));
  if (groups.length === 0) return out;
  const enc = device.createCommandEncoder({ label: "readback" });
  const staging = groups.map((g, n) => {
    const s = device.createBuffer({ label: `step-readback-${n}`, size: g.size, usage: MAP_READ | COPY_DST });
    for (const m of g.members) {
      enc.copyBufferToBuffer(parts[m.part].buffer, 0, s, m.offset, align4(parts[m.part].bytes));
    }
    return s;
  });
  device.queue.submit([enc.finish()]);
  try {
    await Promise.all(staging.map((s) => s.mapAsync(MAP_READ)));
    groups.forEach((g, n) => {
      const all = staging[n].getMappedRange();
      for (const m of g.members) out[m.part] = all.slice(m.offset, m.offset + parts[m.part].bytes);
      staging[n].unmap();
    });
  } finally {
    for (const s of staging) s.destroy();
  }
  return out;
}

/** Reads a buffer as float32 values. */
export async function readF32(device: GPUDevice, buf: GPUBuffer, count?: number): Promise<Float32Array> {
  return new Float32Array(await readBuffer(device, buf, (count ?? buf.size / 4) * 4));
}

/** Fills a buffer with NaN so that elements a kernel forgot to write show up in tests. */
export function poison(device: GPUDevice, buf: GPUBuffer): void {
  writeBuffer(device, buf, new Float32Array(buf.size / 4).fill(NaN));
}

const pipelineCache = new WeakMap<GPUDevice, Map<string, Map<string, GPUComputePipeline>>>();

/**
 * A compute pipeline for `code` with `constants` as override values, compiled inside an error
 * scope so a WGSL error throws with the kernel's name. Cached per device, source and constants
 * (keyed first by the source string itself, whose hash the engine keeps, so a lookup does not
 * rehash kilobytes of WGSL on every dispatch).
 */
export async function computePipeline(
  device: GPUDevice,
  name: string,
  code: string,
  constants: Record<string, number> = {},
  entryPoint = "main",
): Promise<GPUComputePipeline> {
  let cache = pipelineCache.get(device);
  if (!cache) pipelineCache.set(device, cache = new Map());
  let byCode = cache.get(code);
  if (!byCode) cache.set(code, byCode = new Map());
  const key = `${name}\u0000${entryPoint}\u0000${JSON.stringify(constants)}`;
  const hit = byCode.get(key);
  if (hit) return hit;
  device.pushErrorScope("validation");
  const module = device.createShaderModule({ label: name, code });
  const pipeline = await device.createComputePipelineAsync({
    label: name,
    layout: "auto",
    compute: { module, entryPoint, constants },
  }).catch(async (e: unknown) => {
    const info = await module.getCompilationInfo();
    const msgs = info.messages.map((m) => `${m.type} ${m.lineNum}:${m.linePos} ${m.message}`).join("\n");
    throw new Error(`kernel ${name}: pipeline creation failed: ${e instanceof Error ? e.message : String(e)}\n${msgs}`);
  });
  const err = await device.popErrorScope();
  if (err) throw new Error(`kernel ${name}: ${err.message}`);
  byCode.set(key, pipeline);
  return pipeline;
}

/**
 * A kernel bound once to fixed buffers and a parameter uniform of its own (captured decoding: the same buffers every
 * step), recorded by `encode` as one pass of one dispatch.
 */
export class BoundKernel {
  private constructor(private pipeline: GPUComputePipeline, private bind: GPUBindGroup, private params: GPUBuffer) {}

  /** `code`'s pipeline, labelled `name`, bound to `buffers` and then a uniform holding `params`. */
  static async create(device: GPUDevice, name: string, code: string, buffers: GPUBuffer[], params: Uint32Array) {
    const pipeline = await computePipeline(device, name, code);
    const size = align16(params.byteLength);
    const uniform = device.createBuffer({ label: `${name}-params`, size, usage: UNIFORM | COPY_DST });
    device.queue.writeBuffer(uniform, 0, params);
    const bind = device.createBindGroup({
      label: `${name}-bind`,
      layout: bindGroupLayout(pipeline),
      entries: [...buffers, uniform].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    return new BoundKernel(pipeline, bind, uniform);
  }

  /** Records the dispatch of `x` (by `y`) workgroups. */
  encode(enc: GPUCommandEncoder, x: number, y = 1): void {
    const pass = enc.beginComputePass({ label: this.pipeline.label });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bind);
    pass.dispatchWorkgroups(x, y);
    pass.end();
  }

  /** Frees the parameter uniform (the caller owns the other buffers). */
  destroy(): void {
    this.params.destroy();
  }
}

function align4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

function align16(n: number): number {
  return Math.ceil(n / 16) * 16;
}
