// Device acquisition and the small set of helpers every kernel wrapper uses: labelled buffers,
// uploads, read-backs, and pipeline creation inside an error scope.

/** Features this project can use when the adapter offers them. */
export const WANTED_FEATURES = ["shader-f16", "subgroups", "timestamp-query"] as const;

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
  limits: {
    maxStorageBufferBindingSize: number;
    maxBufferSize: number;
    maxComputeWorkgroupStorageSize: number;
    maxComputeInvocationsPerWorkgroup: number;
    maxStorageBuffersPerShaderStage: number;
  };
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
  const l = adapter.limits;
  const device = await adapter.requestDevice({
    label: "rlvr-device",
    requiredFeatures: features as GPUFeatureName[],
    requiredLimits: {
      maxStorageBufferBindingSize: l.maxStorageBufferBindingSize,
      maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage,
    },
  });
  const ai = adapter.info;
  const ext = ai as unknown as { subgroupMinSize?: number; subgroupMaxSize?: number; subgroupMatrixConfigs?: ArrayLike<Record<string, unknown>> };
  const info: GpuInfo = {
    vendor: ai?.vendor ?? "",
    architecture: ai?.architecture ?? "",
    device: ai?.device ?? "",
    description: ai?.description ?? "",
    features: {
      "shader-f16": device.features.has("shader-f16"),
      subgroups: device.features.has("subgroups"),
      "timestamp-query": device.features.has("timestamp-query"),
    },
    subgroupMinSize: ext?.subgroupMinSize ?? 0,
    subgroupMaxSize: ext?.subgroupMaxSize ?? 0,
    subgroupMatrixConfigs: Array.from(ext?.subgroupMatrixConfigs ?? [], (c) => `${c.componentType}/${c.resultComponentType} ${c.M}x${c.N}x${c.K}`),
    limits: {
      maxStorageBufferBindingSize: device.limits.maxStorageBufferBindingSize,
      maxBufferSize: device.limits.maxBufferSize,
      maxComputeWorkgroupStorageSize: device.limits.maxComputeWorkgroupStorageSize,
      maxComputeInvocationsPerWorkgroup: device.limits.maxComputeInvocationsPerWorkgroup,
      maxStorageBuffersPerShaderStage: device.limits.maxStorageBuffersPerShaderStage,
    },
  };
  return { device, adapter, info, f16: info.features["shader-f16"] };
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
 * destroyed: creating and destroying them every step left tens of thousands of buffer objects
 * alive in the WebGPU implementation until the garbage collector reclaimed their wrappers (Deno
 * frees a buffer's object only then, destroy() or not), and dispatches, creations and submits
 * slowed down with them (bench/live-objects.bench.ts, docs/trainer.md). A free buffer that already
 * holds the wanted words is taken first and not written again: steps of one shape repeat their
 * parameters, so they then upload none.
 */
interface Transients {
  /** Uniform buffers handed out since the last releaseTransients. */
  inUse: GPUBuffer[];
  /** Released uniform buffers by byte size, and the same buffers by content, ready for reuse. */
  freeBySize: Map<number, Set<GPUBuffer>>;
  freeByWords: Map<string, Set<GPUBuffer>>;
  freeCount: number;
  /** What each pooled uniform buffer holds. */
  words: WeakMap<GPUBuffer, string>;
  /** Buffers to destroy at the next releaseTransients. */
  retired: GPUBuffer[];
  /** Uniform buffers created, reused with a new write, and reused as they were (for benchmarks and tests). */
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
    t = { inUse: [], freeBySize: new Map(), freeByWords: new Map(), freeCount: 0, words: new WeakMap(), retired: [], created: 0, rewritten: 0, unchanged: 0 };
    transients.set(device, t);
  }
  return t;
}

function takeFirst<K, T>(map: Map<K, Set<T>>, key: K): T | undefined {
  const set = map.get(key);
  if (!set) return undefined;
  for (const v of set) {
    drop(map, key, v);
    return v;
  }
  return undefined;
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
 * A recycled buffer keeps the label it was made with.
 */
export function uniformBuffer(device: GPUDevice, label: string, words: ArrayBufferView): GPUBuffer {
  const t = transientsOf(device);
  const size = align16(words.byteLength);
  const padded = new Uint32Array(size / 4);
  new Uint8Array(padded.buffer).set(new Uint8Array(words.buffer, words.byteOffset, words.byteLength));
  const key = padded.join(",");
  let buf = takeFirst(t.freeByWords, key);
  if (buf) {
    drop(t.freeBySize, size, buf);
    t.freeCount--;
    t.unchanged++;
  } else {
    buf = takeFirst(t.freeBySize, size);
    if (buf) {
      drop(t.freeByWords, t.words.get(buf)!, buf);
      t.freeCount--;
      t.rewritten++;
    } else {
      buf = device.createBuffer({ label, size, usage: UNIFORM | COPY_DST });
      t.created++;
    }
    device.queue.writeBuffer(buf, 0, padded);
    t.words.set(buf, key);
  }
  t.inUse.push(buf);
  return buf;
}

/** Hands `buf` to the transient list: destroyed at the next releaseTransients, after the work recorded with it was submitted. */
export function retireBuffer(device: GPUDevice, buf: GPUBuffer): void {
  transientsOf(device).retired.push(buf);
}

/** A zeroed storage buffer of `bytes` bytes for one step's scratch: destroyed at the next releaseTransients. */
export function transientStorage(device: GPUDevice, label: string, bytes: number): GPUBuffer {
  const buf = storageBuffer(device, label, bytes);
  retireBuffer(device, buf);
  return buf;
}

/**
 * Ends a step's transient buffers: the uniform buffers handed out since the last call go back to
 * the free list (reused by later dispatches: a write to one is queued after the work already
 * submitted, so that work still reads the old values), retired buffers are destroyed. Call it once
 * the work that used them has been submitted. Returns how many buffers were released.
 */
export function releaseTransients(device: GPUDevice): number {
  const t = transients.get(device);
  if (!t) return 0;
  const n = t.inUse.length + t.retired.length;
  for (const b of t.retired) b.destroy();
  t.retired = [];
  for (const b of t.inUse) {
    if (t.freeCount >= MAX_FREE_UNIFORMS) {
      b.destroy();
      continue;
    }
    const key = t.words.get(b)!;
    let bySize = t.freeBySize.get(b.size);
    if (!bySize) t.freeBySize.set(b.size, (bySize = new Set()));
    let byWords = t.freeByWords.get(key);
    if (!byWords) t.freeByWords.set(key, (byWords = new Set()));
    bySize.add(b);
    byWords.add(b);
    t.freeCount++;
  }
  t.inUse = [];
  return n;
}

/** Counts of the uniform buffers made and reused (rewritten or as they were) on `device` so far, and how many are in use, free and retired. */
export function transientStats(device: GPUDevice): { created: number; rewritten: number; unchanged: number; inUse: number; free: number; retired: number } {
  const t = transientsOf(device);
  return { created: t.created, rewritten: t.rewritten, unchanged: t.unchanged, inUse: t.inUse.length, free: t.freeCount, retired: t.retired.length };
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
  const staging = device.createBuffer({ label: `${buf.label}-readback`, size: align4(byteLength), usage: MAP_READ | COPY_DST });
  const enc = device.createCommandEncoder({ label: "readback" });
  enc.copyBufferToBuffer(buf, 0, staging, 0, align4(byteLength));
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(MAP_READ);
  const out = staging.getMappedRange().slice(0, byteLength);
  staging.unmap();
  staging.destroy();
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
  if (!cache) pipelineCache.set(device, (cache = new Map()));
  let byCode = cache.get(code);
  if (!byCode) cache.set(code, (byCode = new Map()));
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

const layouts = new WeakMap<GPUComputePipeline, GPUBindGroupLayout>();

/**
 * The pipeline's group-0 layout, asked of the pipeline once: getBindGroupLayout makes a new layout
 * object at every call (its specification's "create" semantics), one more object per dispatch.
 */
export function bindGroupLayout(pipeline: GPUComputePipeline): GPUBindGroupLayout {
  let l = layouts.get(pipeline);
  if (!l) layouts.set(pipeline, (l = pipeline.getBindGroupLayout(0)));
  return l;
}

/** Records one dispatch of `pipeline` with `buffers` bound to group 0 in binding order. */
export function dispatch(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  pipeline: GPUComputePipeline,
  buffers: GPUBuffer[],
  groups: [number, number?, number?],
): void {
  const bindGroup = device.createBindGroup({
    label: `${pipeline.label}-bind`,
    layout: bindGroupLayout(pipeline),
    entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
  });
  const pass = enc.beginComputePass({ label: pipeline.label });
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(groups[0], groups[1] ?? 1, groups[2] ?? 1);
  pass.end();
}

function align4(n: number): number {
  return Math.ceil(n / 4) * 4;
}

function align16(n: number): number {
  return Math.ceil(n / 16) * 16;
}
