// A refactoring guard for src/gpu: records every compute pipeline the GPU tests create (its label, the SHA-256 of its
// WGSL, entry point and override constants), so that a change meant to emit the same kernels can be checked to.
// Preload it after the engine's preload (two --preload flags run in order):
//
//   RLVR_WGSL_CENSUS=/tmp/before.jsonl VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json RLVR_WEBGPU=deno \
//     node_modules/deno/deno test -A --no-check --preload src/gpu/engine.preload.ts --preload scripts/wgsl-census.ts \
//     $(git ls-files 'src/gpu/*.gpu.test.ts' 'src/model/*.gpu.test.ts')
//   ... change the code, run again into /tmp/after.jsonl ...
//   node_modules/deno/deno run -A scripts/wgsl-census.ts /tmp/before.jsonl /tmp/after.jsonl
//
// Run as a script with two files it prints the pipelines in one and not the other (keyed by label, hash, entry point
// and constants) and exits 1 where they differ. Test processes' children (the CLI round trips) are not seen.

const out = Deno.env.get("RLVR_WGSL_CENSUS");

async function sha(text: string): Promise<string> {
  const d = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(d)].slice(0, 12).map((b) => b.toString(16).padStart(2, "0")).join("");
}

function patchDevice(device: GPUDevice) {
  const codes = new WeakMap<GPUShaderModule, string>();
  const make = device.createShaderModule.bind(device);
  device.createShaderModule = (d: GPUShaderModuleDescriptor) => {
    const m = make(d);
    codes.set(m, d.code);
    return m;
  };
  const record = async (d: GPUComputePipelineDescriptor) => {
    const code = codes.get(d.compute.module) ?? "";
    const line = JSON.stringify({
      label: d.label ?? "",
      sha: await sha(code),
      entry: d.compute.entryPoint ?? "",
      constants: d.compute.constants ?? {},
    });
    Deno.writeTextFileSync(out!, line + "\n", { append: true });
  };
  const sync = device.createComputePipeline.bind(device);
  device.createComputePipeline = (d: GPUComputePipelineDescriptor) => {
    void record(d);
    return sync(d);
  };
  const later = device.createComputePipelineAsync.bind(device);
  device.createComputePipelineAsync = async (d: GPUComputePipelineDescriptor) => {
    await record(d);
    return later(d);
  };
}

if (import.meta.main && Deno.args.length === 2) {
  // Keyed by what runs (hash, entry point, constants); the label is shown, not compared.
  const read = (p: string) => {
    const m = new Map<string, string>();
    for (const l of Deno.readTextFileSync(p).split("\n").filter(Boolean)) {
      const r = JSON.parse(l);
      m.set(JSON.stringify([r.sha, r.entry, Object.entries(r.constants).sort()]), r.label);
    }
    return m;
  };
  const [a, b] = Deno.args.map(read);
  const onlyA = [...a.keys()].filter((k) => !b.has(k)), onlyB = [...b.keys()].filter((k) => !a.has(k));
  for (const k of onlyA) console.log(`- ${a.get(k)} ${k}`);
  for (const k of onlyB) console.log(`+ ${b.get(k)} ${k}`);
  console.log(
    `${a.size} and ${b.size} distinct pipelines; ${onlyA.length} only in the first, ${onlyB.length} only in the second`,
  );
  Deno.exit(onlyA.length || onlyB.length ? 1 : 0);
} else if (out && navigator.gpu) {
  const gpu = navigator.gpu;
  const request = gpu.requestAdapter.bind(gpu);
  gpu.requestAdapter = async (o?: GPURequestAdapterOptions) => {
    const adapter = await request(o);
    if (!adapter) return adapter;
    const requestDevice = adapter.requestDevice.bind(adapter);
    adapter.requestDevice = async (d?: GPUDeviceDescriptor) => {
      const device = await requestDevice(d);
      patchDevice(device);
      return device;
    };
    return adapter;
  };
}
