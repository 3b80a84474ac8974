// Minimal reproduction for dawn.node (npm "webgpu" 0.6.2): GPUQueue.writeBuffer with a view of a
// SharedArrayBuffer crashes the process (segmentation fault under Deno 2.9 and Node 20), where a
// view of a plain ArrayBuffer works. Chrome accepts both (AllowSharedBufferSource). Hit by
// onnxruntime-web, whose threaded WebAssembly heap is a SharedArrayBuffer.
//   node bench/repro/dawn-shared-array-buffer.mjs [plain|shared]
//   deno run -A bench/repro/dawn-shared-array-buffer.mjs [plain|shared]
// On a machine without a GPU: VK_DRIVER_FILES=/usr/lib/chromium/vk_swiftshader_icd.json
import { create, globals } from "../../node_modules/webgpu/index.js";

Object.assign(globalThis, globals);
const args = globalThis.Deno ? globalThis.Deno.args : globalThis.process.argv.slice(2);
const mode = args[0] ?? "shared";
// Keep the GPU object referenced: dawn.node's instance goes with it when it is collected.
const gpu = create(["backend=vulkan"]);
const adapter = await gpu.requestAdapter();
if (!adapter) throw new Error("no adapter: set VK_DRIVER_FILES to a Vulkan driver");
const device = await adapter.requestDevice();
const buf = device.createBuffer({ size: 16, usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ });
const view = new Uint8Array(mode === "shared" ? new SharedArrayBuffer(16) : new ArrayBuffer(16));
view[0] = 7;
console.log(`writeBuffer from a view of ${mode === "shared" ? "a SharedArrayBuffer" : "an ArrayBuffer"}...`);
device.queue.writeBuffer(buf, 0, view); // shared: the process dies here
await buf.mapAsync(GPUMapMode.READ);
console.log("read back", new Uint8Array(buf.getMappedRange())[0], "(expected 7)");
