// Wrapper of gradnorm.wgsl (pass 1 and, FINAL, pass 2): the global gradient norm over a list of
// buffers, reduced on the GPU into a stats buffer that adamw.wgsl reads (clip factor, skip flag).
import { readBuffer, sharedScratch, storageBuffer, writeBuffer } from "../device.ts";
import source from "./gradnorm.wgsl" with { type: "text" };
import { encodeKernel, packParams } from "./layer-common.ts";
import { expandKernel } from "./wgsl-parts.ts";

/** What the two passes leave in the stats buffer (see gradnorm.wgsl). */
export interface GradStats {
  sumsq: number;
  norm: number;
  /** min(1, maxNorm / (norm + 1e-6)), or 1 when maxNorm <= 0. */
  clip: number;
  /** Some gradient element (or the sum of squares) was NaN or Inf. */
  nonFinite: boolean;
}

const WG = 256;
/** Most workgroups (partials) per gradient buffer; each thread then strides over the rest. */
const MAX_GROUPS = 256;

/** Bytes of the stats struct: sumsq f32, norm f32, clip f32, nonfinite u32. */
export const GRAD_STATS_BYTES = 16;

/** One gradient tensor: `count` f32 values at the start of `buffer`. */
export interface GradSlice {
  buffer: GPUBuffer;
  count: number;
}

/** A labelled stats buffer holding "no clip, finite" (clip 1, flag 0) until a norm is encoded. */
export function gradStatsBuffer(device: GPUDevice, label = "grad-stats"): GPUBuffer {
  const buf = storageBuffer(device, label, GRAD_STATS_BYTES);
  writeBuffer(device, buf, new Float32Array([0, 0, 1, 0]));
  return buf;
}

/** Workgroups (partial slots) of pass 1 for a buffer of `count` values. */
function groupsFor(count: number): number {
  return Math.max(1, Math.min(MAX_GROUPS, Math.ceil(count / (WG * 4))));
}

/** Bytes of the partials encodeGradNorm writes for gradient buffers of these sizes. */
export function gradNormPartialsBytes(counts: readonly number[]): number {
  return Math.max(1, counts.reduce((a, n) => a + groupsFor(n), 0)) * 8;
}

/**
 * Records the two-pass global norm of `grads` into `stats`, with clip = min(1, maxNorm /
 * (norm + 1e-6)) (no clipping when maxNorm <= 0) and the NaN/Inf flag; the partials go to the device's grow-only
 * scratch (sharedScratch).
 */
export async function encodeGradNorm(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  grads: readonly GradSlice[],
  stats: GPUBuffer,
  maxNorm: number,
): Promise<void> {
  const code = (final: boolean) => expandKernel("gradnorm.wgsl", source, { FINAL: final });
  const scratch = sharedScratch(device, "gradnorm-partials", gradNormPartialsBytes(grads.map((g) => g.count)));
  let offset = 0;
  for (const g of grads) {
    const bind = [g.buffer, scratch, packParams("uu", [g.count, offset])];
    await encodeKernel(device, enc, "gradnorm_partial", code(false), { WG }, bind, [groupsFor(g.count)]);
    offset += groupsFor(g.count);
  }
  const bind = [scratch, stats, packParams("uf", [offset, maxNorm])];
  await encodeKernel(device, enc, "gradnorm_final", code(true), { WG }, bind, [1]);
}

/** Reads a stats buffer back (for logging; the optimizer itself never needs this round trip). */
export async function readGradStats(device: GPUDevice, stats: GPUBuffer): Promise<GradStats> {
  return parseGradStats(await readBuffer(device, stats, GRAD_STATS_BYTES));
}

/** The stats struct from its GRAD_STATS_BYTES bytes (read back by the caller, e.g. with a step's other figures). */
export function parseGradStats(bytes: ArrayBuffer): GradStats {
  const f = new Float32Array(bytes);
  const u = new Uint32Array(bytes);
  return { sumsq: f[0], norm: f[1], clip: f[2], nonFinite: u[3] !== 0 };
}
