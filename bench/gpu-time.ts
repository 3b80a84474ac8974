// Benchmark helper (not a test): GPU time of a run of dispatches, as one compute pass between two
// timestamp queries (src/gpu/recorder.ts beginPass), so a product's time excludes the host's
// recording and the submit/wait round trip that a wall clock of a few dispatches is made of. Where
// the device has no timestamp-query feature the wall time of the submitted run is returned instead
// (`timed: "wall"`). On Dawn, start with RLVR_DAWN_OPTIONS="disable-dawn-features=timestamp_quantization"
// for unrounded stamps (a run of `n` dispatches is long enough either way).
import { beginPass, commandEncoder, endPass, releaseTransients } from "../src/gpu/device.ts";

/** Milliseconds per repetition of `record`, on the GPU's clock where it can. */
export interface RunTime {
  ms: number;
  timed: "gpu" | "wall";
}

/** Records `record` n times into one pass (after one untimed warm-up run) and returns the time per repetition. */
export async function timeRun(
  device: GPUDevice,
  n: number,
  record: (enc: GPUCommandEncoder) => Promise<void>,
): Promise<RunTime> {
  const warm = commandEncoder(device, "warm-up");
  await record(warm);
  device.queue.submit([warm.finish()]);
  await device.queue.onSubmittedWorkDone();
  releaseTransients(device);
  const stamps = device.features.has("timestamp-query");
  const set = stamps ? device.createQuerySet({ type: "timestamp", count: 2 }) : undefined;
  const enc = commandEncoder(device, "timed-run");
  if (set) {
    beginPass(enc, {
      label: "timed-run",
      timestampWrites: { querySet: set, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 },
    });
  }
  for (let i = 0; i < n; i++) await record(enc);
  endPass(enc);
  let resolve: GPUBuffer | undefined, read: GPUBuffer | undefined;
  if (set) {
    resolve = device.createBuffer({ size: 256, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC });
    read = device.createBuffer({ size: 256, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    enc.resolveQuerySet(set, 0, 2, resolve, 0);
    enc.copyBufferToBuffer(resolve, 0, read, 0, 256);
  }
  const t0 = performance.now();
  device.queue.submit([enc.finish()]);
  await device.queue.onSubmittedWorkDone();
  const wall = (performance.now() - t0) / n;
  releaseTransients(device);
  if (!set || !read || !resolve) return { ms: wall, timed: "wall" };
  await read.mapAsync(GPUMapMode.READ);
  const t = new BigUint64Array(read.getMappedRange(), 0, 2);
  const ms = Number(t[1] - t[0]) / 1e6 / n;
  read.unmap();
  for (const b of [read, resolve]) b.destroy();
  set.destroy();
  // A device whose stamps did not advance (some drivers inside one pass) falls back to the wall clock.
  return ms > 0 ? { ms, timed: "gpu" } : { ms: wall, timed: "wall" };
}
