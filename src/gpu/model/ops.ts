// Wrappers of the model-level kernels in ./kernels (embedding gather, bias add, the streaming
// lm-head log-softmax statistics and their backward). The layer kernels (RMSNorm, RoPE, SwiGLU,
// attention, matmul) live in src/gpu/kernels and are called directly by forward.ts/backward.ts.
import { computePipeline, dispatch, uniformBuffer } from "../device.ts";
import biasSource from "./kernels/bias_add.wgsl" with { type: "text" };
import embeddingSource from "./kernels/embedding.wgsl" with { type: "text" };
import embeddingBackwardSource from "./kernels/embedding_backward.wgsl" with { type: "text" };
import lmBackwardSource from "./kernels/lmhead_backward.wgsl" with { type: "text" };
import lseSource from "./kernels/lmhead_logsumexp.wgsl" with { type: "text" };

const WG = 64;
const MAX_X = 65535;

/** A workgroup grid for `count` one-thread items folded into y; kernels index gid.y * nwg.x * 64 + gid.x. */
export function grid1d(count: number): [number, number] {
  const groups = Math.max(1, Math.ceil(count / WG));
  const x = Math.min(groups, MAX_X);
  return [x, Math.ceil(groups / x)];
}

function u32s(...v: number[]): Uint32Array {
  const w = new Uint32Array(Math.max(4, Math.ceil(v.length / 4) * 4));
  w.set(v);
  return w;
}

/** Records out[n] = table[ids[n] - v0] for the rows (N) whose u32 id lies in this chunk's [v0, v0 + Vc). */
export async function encodeEmbedding(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  ids: GPUBuffer,
  table: GPUBuffer,
  out: GPUBuffer,
  d: { N: number; H: number; v0: number; Vc: number },
): Promise<void> {
  const pipeline = await computePipeline(device, "model-embedding", embeddingSource);
  const params = uniformBuffer(device, "embedding-params", u32s(d.N, d.H, d.v0, d.Vc));
  dispatch(device, enc, pipeline, [ids, table, out, params], grid1d(d.N * d.H));
}

/** Records y (N, O) += b (O). */
export async function encodeBiasAdd(device: GPUDevice, enc: GPUCommandEncoder, b: GPUBuffer, y: GPUBuffer, N: number, O: number): Promise<void> {
  const pipeline = await computePipeline(device, "model-bias-add", biasSource);
  dispatch(device, enc, pipeline, [b, y, uniformBuffer(device, "bias-params", u32s(N, O))], grid1d(N * O));
}

/** Buffers of the streaming log-softmax: targets (N) u32, state (N, 4), outputs logp, lse, entropy (N). */
export interface LseBuffers {
  tgt: GPUBuffer;
  state: GPUBuffer;
  logp: GPUBuffer;
  lse: GPUBuffer;
  entropy: GPUBuffer;
}

/** Records one chunk's update of the running log-softmax statistics from its logits (N, Vc). */
export async function encodeLseChunk(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  logits: GPUBuffer,
  b: LseBuffers,
  d: { N: number; Vc: number; v0: number; first: boolean },
): Promise<void> {
  const pipeline = await computePipeline(device, "model-lmhead-logsumexp", lseSource);
  const params = uniformBuffer(device, "lse-params", u32s(d.N, d.Vc, d.v0, d.first ? 1 : 0));
  dispatch(device, enc, pipeline, [logits, b.tgt, b.state, b.logp, b.lse, b.entropy, params], grid1d(d.N));
}

/** Records dz = g * (onehot(tgt) - softmax) in place over one chunk's logits (N, Vc). */
export async function encodeLmHeadBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  logits: GPUBuffer,
  tgt: GPUBuffer,
  lse: GPUBuffer,
  g: GPUBuffer,
  d: { N: number; Vc: number; v0: number },
): Promise<void> {
  const pipeline = await computePipeline(device, "model-lmhead-backward", lmBackwardSource);
  const params = uniformBuffer(device, "lmhead-bwd-params", u32s(d.N, d.Vc, d.v0));
  dispatch(device, enc, pipeline, [logits, tgt, lse, g, params], grid1d(d.N * d.Vc));
}

/** Records dtable (Vc, H) += the rows of dout (N, H) whose id lies in this chunk's [v0, v0 + Vc). */
export async function encodeEmbeddingBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  ids: GPUBuffer,
  dout: GPUBuffer,
  dtable: GPUBuffer,
  d: { N: number; H: number; v0: number; Vc: number },
): Promise<void> {
  const pipeline = await computePipeline(device, "model-embedding-backward", embeddingBackwardSource);
  const params = uniformBuffer(device, "embedding-bwd-params", u32s(d.N, d.H, d.v0, d.Vc));
  dispatch(device, enc, pipeline, [ids, dout, dtable, params], grid1d(d.Vc * d.H));
}
