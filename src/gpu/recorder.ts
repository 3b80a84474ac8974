// How kernels are recorded: every dispatch of the project goes through dispatch() here, which keeps one compute pass
// open across consecutive dispatches of an encoder made by commandEncoder() (knob `passes`) and reuses bind groups made
// for the same pipeline and bindings (docs/trainer.md, "The host side of a step"). Encoders from
// device.createCommandEncoder() get a pass per dispatch.
import { perfSwitches } from "./switches.ts";

/** A resource of a bind group entry: a whole buffer, or a window of one. */
export type Bindable = GPUBuffer | GPUBufferBinding;

interface Recording {
  pass: GPUComputePassEncoder | null;
  pipeline: GPUComputePipeline | null;
}

const recordings = new WeakMap<GPUCommandEncoder, Recording>();

/** Encoder methods that cannot run while a compute pass is open: the open pass is ended first. */
const ENCODER_METHODS = [
  "finish",
  "copyBufferToBuffer",
  "clearBuffer",
  "beginComputePass",
  "beginRenderPass",
  "resolveQuerySet",
  "copyBufferToTexture",
  "copyTextureToBuffer",
  "copyTextureToTexture",
  "insertDebugMarker",
  "pushDebugGroup",
  "popDebugGroup",
] as const;

/**
 * A command encoder whose consecutive dispatches (through dispatch()) share one compute pass. Its
 * own methods that need the pass closed (copies, clears, finish, ...) close it first, so it is used
 * like any encoder.
 */
export function commandEncoder(device: GPUDevice, label: string): GPUCommandEncoder {
  const enc = device.createCommandEncoder({ label });
  const rec: Recording = { pass: null, pipeline: null };
  recordings.set(enc, rec);
  const own = enc as unknown as Record<string, unknown>;
  for (const name of ENCODER_METHODS) {
    const method = own[name];
    if (typeof method !== "function") continue;
    own[name] = (...args: unknown[]) => {
      endPass(enc);
      return (method as (...a: unknown[]) => unknown).apply(enc, args);
    };
  }
  return enc;
}

/**
 * Opens a compute pass on a commandEncoder() encoder with `desc` (e.g. timestamp writes), which the
 * next dispatches join until endPass or another command: benchmarks time a run of dispatches as
 * one pass.
 */
export function beginPass(enc: GPUCommandEncoder, desc: GPUComputePassDescriptor): void {
  const rec = recordings.get(enc);
  if (!rec) throw new Error("beginPass: not an encoder from commandEncoder()");
  endPass(enc);
  rec.pass = enc.beginComputePass(desc);
}

/** Ends the compute pass dispatch() left open on `enc`, if any. */
export function endPass(enc: GPUCommandEncoder): void {
  const rec = recordings.get(enc);
  if (rec?.pass) {
    const pass = rec.pass;
    rec.pass = null;
    rec.pipeline = null;
    pass.end();
  }
}

const layouts = new WeakMap<GPUComputePipeline, GPUBindGroupLayout>();

/**
 * The pipeline's group-0 layout, asked of the pipeline once: getBindGroupLayout makes a new layout
 * object at every call (its specification's "create" semantics), one more object per dispatch.
 */
export function bindGroupLayout(pipeline: GPUComputePipeline): GPUBindGroupLayout {
  let l = layouts.get(pipeline);
  if (!l) layouts.set(pipeline, l = pipeline.getBindGroupLayout(0));
  return l;
}

const ids = new WeakMap<object, number>();
let nextId = 1;

function idOf(o: object): number {
  let id = ids.get(o);
  if (id === undefined) ids.set(o, id = nextId++);
  return id;
}

function isBinding(r: Bindable): r is GPUBufferBinding {
  return (r as GPUBufferBinding).buffer !== undefined;
}

interface BindCache {
  groups: Map<string, { group: GPUBindGroup; gen: number }>;
  gen: number;
  made: number;
  hits: number;
}

/** More entries than this and the cache starts over (tests that never release transients). */
const MAX_BIND_GROUPS = 1 << 15;

const bindCaches = new WeakMap<GPUDevice, BindCache>();

function bindCacheOf(device: GPUDevice): BindCache {
  let c = bindCaches.get(device);
  if (!c) bindCaches.set(device, c = { groups: new Map(), gen: 0, made: 0, hits: 0 });
  return c;
}

/**
 * Ends a generation of the bind-group cache (device.ts releaseTransients, once per step): groups
 * not used since the last call are dropped, so groups of buffers that a step no longer uses (other
 * shapes, destroyed buffers) live one step at most.
 */
export function advanceBindCache(device: GPUDevice): void {
  const c = bindCaches.get(device);
  if (!c) return;
  for (const [k, v] of c.groups) if (v.gen < c.gen) c.groups.delete(k);
  c.gen++;
}

/** Bind groups made and reused on `device` so far (tests). */
export function bindGroupStats(device: GPUDevice): { made: number; hits: number } {
  const c = bindCacheOf(device);
  return { made: c.made, hits: c.hits };
}

function bindGroup(device: GPUDevice, pipeline: GPUComputePipeline, resources: Bindable[]): GPUBindGroup {
  const c = bindCacheOf(device);
  const make = () => {
    c.made++;
    return device.createBindGroup({
      label: `${pipeline.label}-bind`,
      layout: bindGroupLayout(pipeline),
      entries: resources.map((r, binding) => ({ binding, resource: isBinding(r) ? r : { buffer: r } })),
    });
  };
  let key = String(idOf(pipeline));
  for (const r of resources) {
    key += isBinding(r) ? `|${idOf(r.buffer)}:${r.offset ?? 0}:${r.size ?? -1}` : `|${idOf(r)}`;
  }
  const hit = c.groups.get(key);
  if (hit) {
    hit.gen = c.gen;
    c.hits++;
    return hit.group;
  }
  if (c.groups.size >= MAX_BIND_GROUPS) c.groups.clear();
  const group = make();
  c.groups.set(key, { group, gen: c.gen });
  return group;
}

/** Records one dispatch of `pipeline` with `resources` bound to group 0 in binding order. */
export function dispatch(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  pipeline: GPUComputePipeline,
  resources: Bindable[],
  groups: readonly [number, number?, number?],
): void {
  const group = bindGroup(device, pipeline, resources);
  const r = recordings.get(enc);
  // A pass opened by beginPass is joined whatever the knob passes says (a benchmark's timed run).
  const rec = r && (perfSwitches().passes === "merged" || r.pass) ? r : undefined;
  if (!rec) {
    const pass = enc.beginComputePass({ label: pipeline.label });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(groups[0], groups[1] ?? 1, groups[2] ?? 1);
    pass.end();
    return;
  }
  if (!rec.pass) rec.pass = enc.beginComputePass({ label: pipeline.label });
  if (rec.pipeline !== pipeline) {
    rec.pass.setPipeline(pipeline);
    rec.pipeline = pipeline;
  }
  rec.pass.setBindGroup(0, group);
  rec.pass.dispatchWorkgroups(groups[0], groups[1] ?? 1, groups[2] ?? 1);
}
