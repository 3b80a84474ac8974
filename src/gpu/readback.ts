// Many buffers read back together: a checkpoint's adapter and AdamW moments are hundreds of
// buffers, and a map per buffer is a queue round trip per buffer. Here they are copied into a few
// staging buffers in one submit and mapped together.

const COPY_DST = 0x0008; // GPUBufferUsage.COPY_DST (the constant objects are absent in some runtimes' workers)
const MAP_READ = 0x0001;

/** The leading `count` float32 values of `buffer` to read. */
export interface F32Part {
  buffer: GPUBuffer;
  count: number;
}

/** The staging size readF32Parts packs up to by default: the device's largest buffer, at most 256 MiB. */
export function stagingCap(device: GPUDevice): number {
  return Math.min(device.limits.maxBufferSize, 256 * 1024 * 1024);
}

/**
 * The leading `count` floats of every part, as the buffers hold them when this is called: the copies
 * are submitted before it returns, so work submitted later (the next training step) does not change
 * what it reads. Parts are packed into staging buffers of at most `maxBytes` (a larger part gets one
 * of its own), all mapped at once. The arrays of one staging buffer are views of one ArrayBuffer.
 */
export function readF32Parts(
  device: GPUDevice,
  parts: readonly F32Part[],
  maxBytes = stagingCap(device),
): Promise<Float32Array[]> {
  const groups: { size: number; members: { part: number; offset: number }[] }[] = [];
  parts.forEach((p, i) => {
    const bytes = p.count * 4;
    if (bytes === 0) return;
    let g = groups.at(-1);
    if (!g || (g.size > 0 && g.size + bytes > maxBytes)) groups.push(g = { size: 0, members: [] });
    g.members.push({ part: i, offset: g.size });
    g.size += bytes;
  });
  const enc = device.createCommandEncoder({ label: "readback-parts" });
  const staging = groups.map((g, n) => {
    const s = device.createBuffer({ label: `readback-parts-${n}`, size: g.size, usage: MAP_READ | COPY_DST });
    for (const m of g.members) enc.copyBufferToBuffer(parts[m.part].buffer, 0, s, m.offset, parts[m.part].count * 4);
    return s;
  });
  device.queue.submit([enc.finish()]);
  return (async () => {
    const out = parts.map(() => new Float32Array(0));
    try {
      await Promise.all(staging.map((s) => s.mapAsync(MAP_READ)));
      groups.forEach((g, n) => {
        const bytes = staging[n].getMappedRange().slice(0);
        staging[n].unmap();
        for (const m of g.members) out[m.part] = new Float32Array(bytes, m.offset, parts[m.part].count);
      });
    } finally {
      for (const s of staging) s.destroy();
    }
    return out;
  })();
}
