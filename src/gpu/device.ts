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

const transients = new WeakMap<GPUDevice, GPUBuffer[]>();

/**
 * A uniform buffer from 32-bit words (u32 or f32 packed by the caller). It is one dispatch's
 * parameters: it is kept on the device's transient list and destroyed by releaseTransients.
 */
export function uniformBuffer(device: GPUDevice, label: string, words: ArrayBufferView): GPUBuffer {
  const buf = device.createBuffer({ label, size: align16(words.byteLength), usage: UNIFORM | COPY_DST });
  writeBuffer(device, buf, words);
  let list = transients.get(device);
  if (!list) transients.set(device, (list = []));
  list.push(buf);
  return buf;
}

/** Hands `buf` to the transient list: destroyed at the next releaseTransients, after the work recorded with it was submitted. */
export function retireBuffer(device: GPUDevice, buf: GPUBuffer): void {
  let list = transients.get(device);
  if (!list) transients.set(device, (list = []));
  list.push(buf);
}

/**
 * Destroys the per-dispatch uniform buffers made so far. Call it once the work that used them has
 * been submitted (a step's end): thousands of them per training step otherwise wait for garbage
 * collection, and the driver's bookkeeping of live buffers slowed long runs down about 2.5x (H200).
 * Work already submitted still completes: destroy() waits for it.
 */
export function releaseTransients(device: GPUDevice): number {
  const list = transients.get(device);
  if (!list) return 0;
  for (const b of list) b.destroy();
  transients.delete(device);
  return list.length;
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

const pipelineCache = new WeakMap<GPUDevice, Map<string, GPUComputePipeline>>();

/**
 * A compute pipeline for `code` with `constants` as override values, compiled inside an error
 * scope so a WGSL error throws with the kernel's name. Cached per device, source and constants.
 */
export async function computePipeline(
  device: GPUDevice,
  name: string,
  code: string,
  constants: Record<string, number> = {},
  entryPoint = "main",
): Promise<GPUComputePipeline> {
  const key = `${name}\u0000${entryPoint}\u0000${JSON.stringify(constants)}\u0000${code}`;
  let cache = pipelineCache.get(device);
  if (!cache) pipelineCache.set(device, (cache = new Map()));
  const hit = cache.get(key);
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
  cache.set(key, pipeline);
  return pipeline;
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
    layout: pipeline.getBindGroupLayout(0),
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
