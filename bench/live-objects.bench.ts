// Benchmark (not a test): does a fixed piece of work get slower while many WebGPU objects are alive
// (not yet garbage-collected)? Holds K bind groups, K destroyed-but-referenced uniform buffers, or
// K bind-group-layout wrappers from getBindGroupLayout, then times a fixed batch of dispatches
// (createBindGroup + pass + submit, as device.ts dispatch() does) and a fixed batch of buffer
// creations. Usage: deno run -A --v8-flags=--expose-gc bench/live-objects.bench.ts [kinds=bindGroup,buffer,layout] [K=0,20000,80000] [reps=3]
import { args as benchArgs, webgpu } from "./engine.ts";
import { computePipeline, requestGpu } from "../src/gpu/device.ts";

const named = new Map(benchArgs.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
const kinds = (named.get("kinds") ?? "bindGroup,buffer,layout").split(",");
const Ks = (named.get("K") ?? "0,20000,80000").split(",").map(Number);
const reps = Number(named.get("reps") ?? 3);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
const gpu = await requestGpu();
const device = gpu.device;
const code = `@group(0) @binding(0) var<storage, read_write> a: array<f32>;
struct P { n: u32, s: f32, _a: u32, _b: u32 }
@group(0) @binding(1) var<uniform> p: P;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { if (g.x < p.n) { a[g.x] = a[g.x] * p.s; } }`;
const pipeline = await computePipeline(device, "live-objects", code);
const data = device.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE });
const uniform = () => device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });

/** 2,000 dispatches in 20 submits, each with a fresh uniform and bind group (destroyed at the end): ms. */
async function work(): Promise<number> {
  const t0 = performance.now();
  const made: GPUBuffer[] = [];
  for (let s = 0; s < 20; s++) {
    const enc = device.createCommandEncoder();
    for (let i = 0; i < 100; i++) {
      const u = uniform();
      device.queue.writeBuffer(u, 0, new Uint32Array([64, 0x3f800000, 0, 0]));
      made.push(u);
      const bg = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: data } }, { binding: 1, resource: { buffer: u } }] });
      const pass = enc.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bg);
      pass.dispatchWorkgroups(1);
      pass.end();
    }
    device.queue.submit([enc.finish()]);
  }
  await device.queue.onSubmittedWorkDone();
  for (const b of made) b.destroy();
  return performance.now() - t0;
}

const layout = pipeline.getBindGroupLayout(0);
const rows: Record<string, unknown>[] = [];
await work();
for (const kind of kinds) {
  for (const K of Ks) {
    const held: unknown[] = [];
    const u0 = uniform();
    for (let i = 0; i < K; i++) {
      if (kind === "bindGroup") held.push(device.createBindGroup({ layout, entries: [{ binding: 0, resource: { buffer: data } }, { binding: 1, resource: { buffer: u0 } }] }));
      else if (kind === "buffer") {
        const b = uniform();
        b.destroy();
        held.push(b);
      } else held.push(pipeline.getBindGroupLayout(0));
    }
    await device.queue.onSubmittedWorkDone();
    const ms: number[] = [];
    for (let r = 0; r < reps; r++) ms.push(await work());
    const best = Math.min(...ms);
    console.log(`${kind} x ${K} alive: 2000 dispatches in ${best.toFixed(0)} ms (best of ${reps}: ${ms.map((x) => x.toFixed(0)).join(", ")})`);
    rows.push({ kind, K, bestMs: best, ms });
    held.length = 0;
    u0.destroy();
    gc();
    await device.queue.onSubmittedWorkDone();
  }
}
const out = named.get("out");
if (out) await Deno.writeTextFile(out, JSON.stringify({ webgpu, rows }, null, 1));
