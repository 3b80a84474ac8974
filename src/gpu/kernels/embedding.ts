// Wrapper of the embedding gradient kernels: the deterministic scatter-add of (N, C) rows into a (V, C) table by u32
// ids (links pass, then one thread per (first row, channel)). The gather: model/ops.ts.
import backwardSource from "./embedding_backward.wgsl" with { type: "text" };
import linksSource from "./embedding_links.wgsl" with { type: "text" };
import { encodeKernel, grid, packParams } from "./layer-common.ts";

/** Shape shared by the kernels and the reference. */
export interface EmbeddingDims {
  N: number;
  C: number;
  V: number;
}

const WG = 256;

/** Records the links pass of the backward into `links` (N) u32: once per step, shared by all chunks. */
export async function encodeEmbeddingLinks(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  ids: GPUBuffer,
  links: GPUBuffer,
  N: number,
): Promise<void> {
  if (N >= 0x7fffffff) throw new Error(`embedding backward: N=${N} rows is too many`);
  const bind = [ids, links, packParams("u", [N])];
  await encodeKernel(device, enc, "embedding_links", linksSource, { WG }, bind, grid(N, WG));
}

/**
 * Records dtable += scatter of dy (N, C) by ids using `links` from encodeEmbeddingLinks; dtable
 * holds vocabulary rows [v0, v0 + V) (v0 defaults to 0) and other ids are ignored.
 */
export async function encodeEmbeddingScatter(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  ids: GPUBuffer,
  links: GPUBuffer,
  dy: GPUBuffer,
  dtable: GPUBuffer | GPUBufferBinding,
  d: EmbeddingDims & { v0?: number },
): Promise<void> {
  const bind = [ids, links, dy, dtable, packParams("uuuu", [d.N, d.C, d.V, d.v0 ?? 0])];
  await encodeKernel(device, enc, "embedding_backward", backwardSource, { WG }, bind, grid(d.N * d.C, WG));
}
