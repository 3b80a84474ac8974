// Benchmark helper (not a test): how long a wait on the GPU takes to come back when the GPU has almost
// nothing to do — a 16-byte write, a copy to a staging buffer, submit, mapAsync, unmap — and how much
// host CPU the wait uses. Under dawn.node this is the cost of its event polling (src/gpu/engine.deno.ts,
// throttleDawnPolling; RLVR_DAWN_POLL=timeout|channel|channel:<ms>|spin): every read-back of a decoding
// step and of a training step pays it once.
// Usage: RLVR_WEBGPU=dawn [RLVR_DAWN_POLL=...] deno run -A bench/poll.bench.ts [n=200] [out=FILE.json]
import process from "node:process";
import { args as benchArgs, webgpu } from "./engine.ts";
import { requestGpu } from "../src/gpu/device.ts";

const named = new Map(benchArgs.map((a) => [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]));
for (const k of named.keys()) if (!["n", "out"].includes(k)) throw new Error(`unknown option ${k}= (known: n, out)`);
const n = Number(named.get("n") ?? 200);
if (!Number.isInteger(n) || n < 1) throw new Error(`n=${named.get("n")}: a positive integer`);
const { device } = await requestGpu();
const src = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
const staging = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });

async function mapTrip(i: number): Promise<number> {
  device.queue.writeBuffer(src, 0, Uint32Array.of(i, 0, 0, 0));
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, 16);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const v = new Uint32Array(staging.getMappedRange())[0];
  staging.unmap();
  if (v !== i) throw new Error(`read back ${v}, wrote ${i}`);
  return v;
}

async function doneTrip(): Promise<void> {
  device.queue.submit([device.createCommandEncoder().finish()]);
  await device.queue.onSubmittedWorkDone();
}

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const q = (f: number) => s[Math.min(s.length - 1, Math.floor(f * s.length))];
  return { n: s.length, mean: s.reduce((a, b) => a + b, 0) / s.length, median: q(0.5), p90: q(0.9), min: s[0], max: s[s.length - 1] };
}

async function measure(name: string, trip: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 5; i++) await trip(i + 1); // warm-up
  const ms: number[] = [];
  const cpu0 = process.cpuUsage(), w0 = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await trip(i + 7);
    ms.push(performance.now() - t);
  }
  const wall = performance.now() - w0, cpu = process.cpuUsage(cpu0);
  const st = stats(ms);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(`${name}: median ${st.median.toFixed(3)} ms, mean ${st.mean.toFixed(3)}, p90 ${st.p90.toFixed(3)}, min ${st.min.toFixed(3)}, max ${st.max.toFixed(3)} over ${n}; host CPU ${(cpuMs / wall).toFixed(2)} cores`);
  return { ...st, cpuCores: cpuMs / wall };
}

const poll = Deno.env.get("RLVR_DAWN_POLL") ?? "";
console.log(`polling: RLVR_DAWN_POLL=${poll || "(unset)"}`);
const result = {
  webgpu,
  poll,
  mapAsync: await measure("write + copy + submit + mapAsync", mapTrip),
  onSubmittedWorkDone: await measure("empty submit + onSubmittedWorkDone", doneTrip),
};
src.destroy();
staging.destroy();
const out = named.get("out");
if (out) await Deno.writeTextFile(out, JSON.stringify(result, null, 1) + "\n");
