// Reproduction: dawn.node's wait loop under Deno. One compute pass of fixed work, submitted and
// awaited (mapAsync) 8 times; prints each wait and how often dawn.node called setImmediate.
//   deno run -A bench/repro/dawn-deno-polling.mjs [spin|timeout]   (spin: as shipped; timeout:
//   setImmediate routed through setTimeout(0)). Compare: node bench/repro/dawn-deno-polling.mjs
// On a machine without a GPU: VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json
import { create, globals } from "../../node_modules/webgpu/index.js";

const args = globalThis.Deno ? globalThis.Deno.args : globalThis.process.argv.slice(2);
let calls = 0;
const real = globalThis.setImmediate;
globalThis.setImmediate = args[0] === "timeout"
  ? (f, ...a) => (calls++, setTimeout(f, 0, ...a))
  : (f, ...a) => (calls++, real(f, ...a));
Object.assign(globalThis, globals);
// Keep the GPU object referenced: dawn.node's instance goes with it when it is collected.
const gpu = create(["backend=vulkan"]);
const adapter = await gpu.requestAdapter();
const d = await adapter.requestDevice();
const code = `@group(0) @binding(0) var<storage, read_write> x: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) {
  var a = x[g.x]; for (var i = 0u; i < 65536u; i++) { a = a * 1.0001 + 0.5; } x[g.x] = a; }`;
const p = d.createComputePipeline({
  layout: "auto",
  compute: { module: d.createShaderModule({ code }), entryPoint: "main" },
});
const b = d.createBuffer({ size: 65536 * 4, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
const st = d.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
const bg = d.createBindGroup({ layout: p.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: b } }] });
const ms = [];
const t0 = performance.now();
for (let r = 0; r < 8; r++) {
  const t = performance.now();
  const e = d.createCommandEncoder();
  const pass = e.beginComputePass();
  pass.setPipeline(p);
  pass.setBindGroup(0, bg);
  pass.dispatchWorkgroups(64);
  pass.end();
  e.copyBufferToBuffer(b, 0, st, 0, 4);
  d.queue.submit([e.finish()]);
  await st.mapAsync(GPUMapMode.READ);
  st.unmap();
  ms.push(Math.round(performance.now() - t));
}
console.log(
  `${globalThis.Deno ? "deno" : "node"} ${args[0] ?? "spin"}: waits ${ms.join(" ")} ms, total ${
    Math.round(performance.now() - t0)
  } ms, setImmediate calls ${calls}`,
);
if (globalThis.Deno) globalThis.Deno.exit(0);
else globalThis.process.exit(0);
