// Storage buffers kept from step to step, by label: the forward's activations, the backward's scratch and the batch
// inputs of a training step are taken from here and given back at its end, so a step of the same shape as the last
// creates no buffer and its bind groups come from recorder.ts's cache (docs/trainer.md, "The host side of a step").
// A request takes the smallest free buffer of its label at least as large as asked, so a buffer may be longer than
// asked for and holds whatever its last user left: callers bind whole buffers, read only the elements they index (no
// kernel uses arrayLength) and write every element they read (setArenaPoison(true) fills reused buffers with NaN so
// tests can prove it). Given-back buffers stay allocated until trimArena().
import { storageBuffer, writeBuffer } from "./device.ts";

interface Arena {
  /** Free buffers: label -> byte size -> buffers. */
  free: Map<string, Map<number, GPUBuffer[]>>;
  /** Buffers handed out and not given back. */
  lent: Set<GPUBuffer>;
  made: number;
  reused: number;
}

const arenas = new WeakMap<GPUDevice, Arena>();
let poisonReused = false;

function arenaOf(device: GPUDevice): Arena {
  let a = arenas.get(device);
  if (!a) arenas.set(device, a = { free: new Map(), lent: new Set(), made: 0, reused: 0 });
  return a;
}

function sizeOf(bytes: number): number {
  return Math.ceil(Math.max(bytes, 4) / 4) * 4;
}

/** Tests: fill every reused buffer with NaN (f32) before handing it out, so a read of an element the step did not write shows. */
export function setArenaPoison(on: boolean): void {
  poisonReused = on;
}

/** A storage buffer of at least `bytes` (contents undefined past `data` when given), from the arena when one of this label that large is free. */
export function arenaBuffer(device: GPUDevice, label: string, data: ArrayBufferView | number): GPUBuffer {
  const bytes = typeof data === "number" ? data : data.byteLength;
  const a = arenaOf(device);
  const size = sizeOf(bytes);
  const byLabel = a.free.get(label);
  let fit = Infinity;
  for (const [s, bufs] of byLabel ?? []) if (s >= size && s < fit && bufs.length > 0) fit = s;
  let buf = byLabel?.get(fit)?.pop();
  if (buf) {
    a.reused++;
    if (poisonReused) writeBuffer(device, buf, new Float32Array(buf.size / 4).fill(NaN));
    if (typeof data !== "number") writeBuffer(device, buf, data);
  } else {
    // Larger than every free buffer of this label (a longer step): free those before allocating.
    if (byLabel) {
      for (const bufs of byLabel.values()) for (const b of bufs) b.destroy();
      a.free.delete(label);
    }
    buf = storageBuffer(device, label, data);
    a.made++;
  }
  a.lent.add(buf);
  return buf;
}

/** A taker of arena buffers (a number of f32 elements, or the data to hold) that lists each in `taken`, to give back together. */
export function arenaTaker(
  device: GPUDevice,
  taken: GPUBuffer[],
): (label: string, floatsOrData: number | ArrayBufferView) => GPUBuffer {
  return (label, floatsOrData) => {
    const b = arenaBuffer(device, label, typeof floatsOrData === "number" ? floatsOrData * 4 : floatsOrData);
    taken.push(b);
    return b;
  };
}

/**
 * Gives buffers back for a later step (after the work that uses them was submitted: a later user's
 * work is queued after it). Buffers that did not come from the arena are destroyed.
 */
export function releaseToArena(device: GPUDevice, bufs: Iterable<GPUBuffer>): void {
  const a = arenaOf(device);
  for (const b of bufs) {
    if (!a.lent.delete(b)) {
      b.destroy();
      continue;
    }
    let byLabel = a.free.get(b.label);
    if (!byLabel) a.free.set(b.label, byLabel = new Map());
    let list = byLabel.get(b.size);
    if (!list) byLabel.set(b.size, list = []);
    list.push(b);
  }
}

/** Destroys every free arena buffer of `device` (e.g. before sampling, to leave the memory to the policy); returns the bytes freed. */
export function trimArena(device: GPUDevice): number {
  const a = arenas.get(device);
  if (!a) return 0;
  let bytes = 0;
  for (const byLabel of a.free.values()) {
    for (const bufs of byLabel.values()) {
      for (const b of bufs) {
        bytes += b.size;
        b.destroy();
      }
    }
  }
  a.free.clear();
  return bytes;
}

/** Buffers made and reused by the arena of `device`, and how many are free now (tests). */
export function arenaStats(device: GPUDevice): { made: number; reused: number; free: number } {
  const a = arenaOf(device);
  let free = 0;
  for (const byLabel of a.free.values()) for (const bufs of byLabel.values()) free += bufs.length;
  return { made: a.made, reused: a.reused, free };
}
