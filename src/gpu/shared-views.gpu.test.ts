// Writing from shared memory (onnxruntime-web's threaded WebAssembly heap) on the engine in use. On
// Dawn that needs the guard engine.deno.ts installs (shared-views.ts): dawn.node's writeBuffer kills
// the process on a view of a SharedArrayBuffer (bench/repro/dawn-shared-array-buffer.mjs).
import { assert, assertEquals } from "../../tests/assert.ts";
import { readBuffer, requestGpu } from "./device.ts";
import { currentEngine } from "./engine.deno.ts";

const gpu = await requestGpu();

Deno.test(`writeBuffer from views of a SharedArrayBuffer lands like a plain one (typed array with element offsets, DataView, raw buffer) on ${currentEngine()?.engine ?? "deno"}`, async () => {
  const { device } = gpu;
  const buf = device.createBuffer({
    label: "sab-target",
    size: 64,
    usage: GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
  });
  const sab = new SharedArrayBuffer(64);
  const f = new Float32Array(sab);
  for (let i = 0; i < 16; i++) f[i] = i + 0.5;
  device.queue.writeBuffer(buf, 0, new Float32Array(16).fill(-1));
  device.queue.writeBuffer(buf, 16, f, 2, 4); // elements 2..5 at byte 16
  device.queue.writeBuffer(buf, 32, new DataView(sab, 40, 8)); // floats 10, 11 at byte 32
  // A raw SharedArrayBuffer (counted in bytes): WebGPU allows it, Deno's wgpu refuses it with a
  // TypeError (ORT passes views), the guard takes it on Dawn.
  const raw = currentEngine()?.engine === "dawn";
  if (raw) device.queue.writeBuffer(buf, 48, sab, 0, 8); // floats 0, 1 at byte 48
  const got = Array.from(new Float32Array(await readBuffer(device, buf)));
  assertEquals(got, [-1, -1, -1, -1, 2.5, 3.5, 4.5, 5.5, 10.5, 11.5, -1, -1, ...(raw ? [0.5, 1.5] : [-1, -1]), -1, -1]);
  buf.destroy();
});

Deno.test({
  name:
    "dawn.node still crashes on a shared view without the guard (the upstream defect the guard works around; when this fails, the guard can go)",
  ignore: currentEngine()?.engine !== "dawn",
  async fn() {
    const deno = Deno.execPath();
    const script = new URL("../../bench/repro/dawn-shared-array-buffer.mjs", import.meta.url).pathname;
    const plain = await new Deno.Command(deno, {
      args: ["run", "-A", script, "plain"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(
      plain.success && new TextDecoder().decode(plain.stdout).includes("read back 7"),
      "the plain-buffer write must work in the reproduction",
    );
    const shared = await new Deno.Command(deno, {
      args: ["run", "-A", script, "shared"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert(
      !shared.success,
      "dawn.node accepted a SharedArrayBuffer view: the upstream bug is fixed, shared-views.ts can be dropped",
    );
  },
});
