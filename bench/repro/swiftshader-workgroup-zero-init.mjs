// Minimal reproduction: on SwiftShader (Vulkan), a compute pipeline's compile time grows with the
// size of its workgroup arrays when Dawn zero-initializes them through
// VK_KHR_zero_initialize_workgroup_memory (OpConstantNull initializers, Dawn's default where the
// driver has the extension); with Dawn's toggle off, Tint zeroes them in the shader itself (a loop
// over the elements, strided by the invocations) and the compile time stays flat.
//   VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json node bench/repro/swiftshader-workgroup-zero-init.mjs [extension|tint]
//   (or deno run -A ...)
import { create, globals } from "../../node_modules/webgpu/index.js";

Object.assign(globalThis, globals);
const args = globalThis.Deno ? globalThis.Deno.args : globalThis.process.argv.slice(2);
const mode = args[0] ?? "extension";
const options = ["backend=vulkan"];
if (mode === "tint") options.push("disable-dawn-features=use_vulkan_zero_initialize_workgroup_memory_extension");
// Keep the GPU object referenced: dawn.node's instance goes with it when it is collected.
const gpu = create(options);
const adapter = await gpu.requestAdapter();
if (!adapter) throw new Error("no adapter: set VK_DRIVER_FILES to a Vulkan driver");
const device = await adapter.requestDevice();
console.log(
  `${adapter.info.vendor} ${adapter.info.description}, workgroup memory zeroed by ${
    mode === "tint" ? "Tint (toggle off)" : "the driver (extension)"
  }`,
);
for (const n of [64, 256, 1024]) {
  const code = `var<workgroup> a: array<vec4f, ${n}>;
@group(0) @binding(0) var<storage, read_write> o: array<vec4f>;
@compute @workgroup_size(64) fn main(@builtin(local_invocation_index) i: u32) {
  a[i] = vec4f(f32(i));
  workgroupBarrier();
  o[i] = a[(i * 7u) % ${n}u];
}`;
  const t = performance.now();
  await device.createComputePipelineAsync({
    layout: "auto",
    compute: { module: device.createShaderModule({ code }), entryPoint: "main" },
  });
  console.log(`array<vec4f, ${n}> (${n * 16} bytes): pipeline in ${(performance.now() - t).toFixed(0)} ms`);
}
