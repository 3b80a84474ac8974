// Wrappers of the model-level kernels in ./kernels: embedding gather and its backward over row
// windows of the (V, H) table, and the row gather / scatter that put the vocabulary
// head on the rows a loss reads. The layer kernels (RMSNorm, RoPE, SwiGLU,
// attention, matmul, the fused lm head) live in src/gpu/kernels and are called by forward.ts and
// backward.ts directly.
import { computePipeline, dispatch, sharedScratch, uniformBuffer } from "../device.ts";
import { encodeEmbeddingLinks, encodeEmbeddingScatter } from "../kernels/embedding.ts";
import { grid, packParams } from "../kernels/layer-common.ts";
import embeddingSource from "./kernels/embedding.wgsl" with { type: "text" };
import rowCopySource from "./kernels/row_copy.wgsl" with { type: "text" };
import { expandKernel } from "../kernels/wgsl-parts.ts";

/** Threads per workgroup of the kernels here (they index gid.y * nwg.x * 64 + gid.x). */
const WG = 64;

/** Row windows [v0, v0 + rows) of a (V, H) matrix, `window` rows each. */
export function vocabWindows(V: number, window: number): { v0: number; rows: number }[] {
  const out: { v0: number; rows: number }[] = [];
  for (let v0 = 0; v0 < V; v0 += window) out.push({ v0, rows: Math.min(window, V - v0) });
  return out;
}

function windowOf(buf: GPUBuffer, H: number, v0: number, rows: number): GPUBufferBinding {
  return { buffer: buf, offset: v0 * H * 4, size: rows * H * 4 };
}

/** Records out (N, H) = table[ids] for u32 ids (N), the (V, H) table bound `window` rows at a time. */
export async function encodeEmbedding(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  ids: GPUBuffer,
  table: GPUBuffer,
  out: GPUBuffer,
  d: { N: number; H: number; V: number; window: number },
): Promise<void> {
  const pipeline = await computePipeline(device, "model-embedding", embeddingSource);
  for (const w of vocabWindows(d.V, d.window)) {
    const params = uniformBuffer(device, "embedding-params", packParams("uuuu", [d.N, d.H, w.v0, w.rows]));
    dispatch(device, enc, pipeline, [ids, windowOf(table, d.H, w.v0, w.rows), out, params], grid(d.N * d.H, WG));
  }
}

/**
 * Records dtable (V, H) += the rows of dout (N, H) gathered by id, `window` table rows at a time: src/gpu/kernels' links
 * pass once (for each row, the next row with its id) and per window its chain walk (a thread per first row of an id and
 * channel sums the id's rows in row order): O(N^2) id compares and O(N H) sums, each id's rows added in row order.
 */
export async function encodeEmbeddingBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  ids: GPUBuffer,
  dout: GPUBuffer,
  dtable: GPUBuffer,
  d: { N: number; H: number; V: number; window: number },
): Promise<void> {
  // A links pass chains each id's rows, then a thread per table row walks its chain.
  const links = sharedScratch(device, "embedding-links", Math.max(1, d.N) * 4);
  await encodeEmbeddingLinks(device, enc, ids, links, d.N);
  for (const w of vocabWindows(d.V, d.window)) {
    await encodeEmbeddingScatter(device, enc, ids, links, dout, windowOf(dtable, d.H, w.v0, w.rows), {
      N: d.N,
      C: d.H,
      V: w.rows,
      v0: w.v0,
    });
  }
}

/** A copy of rows of 32-bit words (f32 or u32, bit for bit) by the u32 row indices `rows` (R); (R, C) on one side. */
type RowCopy = (
  device: GPUDevice,
  enc: GPUCommandEncoder,
  rows: GPUBuffer,
  src: GPUBuffer,
  dst: GPUBuffer,
  R: number,
  C: number,
) => Promise<void>;

/** Records dst (R, C) = src[rows]. */
export const encodeRowGather: RowCopy = (...a) => encodeRowCopy(false, ...a);

/** Records dst[rows] = src (R, C), other rows of dst untouched; rows distinct. */
export const encodeRowScatter: RowCopy = (...a) => encodeRowCopy(true, ...a);

/** row_copy.wgsl: gather, or (`scatter`) scatter. */
async function encodeRowCopy(scatter: boolean, ...[device, enc, rows, src, dst, R, C]: Parameters<RowCopy>) {
  if (R === 0) return;
  const label = scatter ? "row-scatter" : "row-gather";
  const code = expandKernel("row_copy.wgsl", rowCopySource, { SCATTER: scatter });
  const pipeline = await computePipeline(device, `model-${label}`, code);
  const params = uniformBuffer(device, `${label}-params`, packParams("uu", [R, C]));
  dispatch(device, enc, pipeline, [rows, src, dst, params], grid(R * C, WG));
}
