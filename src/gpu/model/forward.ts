// Teacher-forced forward of the whole decoder over a padded batch, on the GPU, with LoRA on any of
// the seven linear targets. Produces per-position log p(next token), the log-sum-exp and the
// entropy through the fused lm head, which streams over the vocabulary (no (N, V) logits at once),
// and keeps every activation the backward needs, or only each layer's input (recomputation).
// Dimension letters: B sequences, T padded length, N = B*T rows, H hidden, D head_dim,
// nH / nKv query / kv heads, I intermediate, r LoRA rank, V vocabulary.
import { arenaBuffer, arenaTaker, releaseToArena } from "../arena.ts";
import { commandEncoder } from "../device.ts";
import { encodeAttentionForward } from "../kernels/attention.ts";
import { encodeMatmul } from "../kernels/matmul.ts";
import type { TailOperands } from "../kernels/matmul-plan.ts";
import { encodeQ4Matmul } from "../kernels/q4matmul.ts";
import { encodeRmsNormForward } from "../kernels/rmsnorm.ts";
import { encodeRope } from "../kernels/rope.ts";
import { encodeSwigluForward } from "../kernels/swiglu.ts";
import { type LoraTarget, targetDims, targetModule } from "../../model/lora.ts";
import { encodeLmheadForward, lmheadPartialsBytes } from "../kernels/lmhead.ts";
import { encodeEmbedding, encodeRowGather, encodeRowScatter } from "./ops.ts";
import { type GpuLora, type GpuModel, linearWeight, loraSlot, weightBuffer } from "./state.ts";

/** A padded batch of token sequences: ids (B, T) and next-token targets (B, T) as u32 buffers. */
export interface GpuBatch {
  device: GPUDevice;
  B: number;
  T: number;
  ids: GPUBuffer;
  targets: GPUBuffer;
  /** Valid lengths (B) u32, for attention's key padding. */
  lensBuf: GPUBuffer;
  /** Position of every row (N) u32: n % T. */
  pos: GPUBuffer;
}

/** Uploads sequences padded to the longest with token 0; row b*T + t targets ids[b][t+1]. The buffers come from arena.ts (destroyBatch gives them back). */
export function uploadBatch(device: GPUDevice, seqs: number[][], vocabSize: number): GpuBatch {
  const B = seqs.length, T = Math.max(...seqs.map((s) => s.length));
  if (B === 0) throw new Error("uploadBatch: no sequences");
  const ids = new Uint32Array(B * T);
  const targets = new Uint32Array(B * T);
  const pos = new Uint32Array(B * T);
  seqs.forEach((s, b) => {
    if (s.length < 1 || s.length > T) {
      throw new Error(`uploadBatch: sequence ${b} has length ${s.length}, must be 1..${T}`);
    }
    s.forEach((id, t) => {
      if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
        throw new Error(`uploadBatch: token id ${id} outside [0, ${vocabSize})`);
      }
      ids[b * T + t] = id;
      if (t > 0) targets[b * T + t - 1] = id;
    });
  });
  for (let n = 0; n < B * T; n++) pos[n] = n % T;
  return {
    device,
    B,
    T,
    ids: arenaBuffer(device, "batch-ids", ids),
    targets: arenaBuffer(device, "batch-targets", targets),
    lensBuf: arenaBuffer(device, "batch-lens", Uint32Array.from(seqs, (s) => s.length)),
    pos: arenaBuffer(device, "batch-pos", pos),
  };
}

/** Activations of one layer kept for the backward. */
export interface LayerActs {
  xIn: GPUBuffer; // (N, H) residual stream entering the layer
  rstd1: GPUBuffer; // (N)
  h1: GPUBuffer; // (N, H) input_layernorm output
  qRaw: GPUBuffer; // (N, nH*D) after bias and LoRA (q_norm input on Qwen3)
  kRaw: GPUBuffer; // (N, nKv*D)
  rstdQ: GPUBuffer; // (N*nH) Qwen3 only
  rstdK: GPUBuffer; // (N*nKv)
  qN: GPUBuffer; // (N, nH*D) after q_norm (= qRaw when absent)
  kN: GPUBuffer; // (N, nKv*D)
  q: GPUBuffer; // (N, nH*D) after RoPE
  k: GPUBuffer; // (N, nKv*D)
  v: GPUBuffer; // (N, nKv*D)
  att: GPUBuffer; // (N, nH*D) attention output
  lse: GPUBuffer; // (B, nH, T)
  xMid: GPUBuffer; // (N, H) residual after attention
  rstd2: GPUBuffer; // (N)
  h2: GPUBuffer; // (N, H)
  gate: GPUBuffer; // (N, I)
  up: GPUBuffer; // (N, I)
  act: GPUBuffer; // (N, I) silu(gate) * up
  /** x A^T (N, r) of every adapted target of this layer. */
  xa: Map<LoraTarget, GPUBuffer>;
}

/** Per-row outputs of the lm head: targets (N) u32 and logp, lse, entropy (N). */
export interface LmRows {
  tgt: GPUBuffer;
  logp: GPUBuffer;
  lse: GPUBuffer;
  entropy: GPUBuffer;
}

/** Everything the forward produced. */
export interface ForwardResult {
  batch: GpuBatch;
  /** Residual stream: xs[l] (N, H) enters layer l; xs[L] leaves the last layer. */
  xs: GPUBuffer[];
  /** Saved activations of every layer, or null under recomputation. */
  layers: LayerActs[] | null;
  /** Under recomputation: one layer's activations, refilled by the backward layer by layer. */
  scratch: { acts: LayerActs; xOut: GPUBuffer } | null;
  rstdF: GPUBuffer; // (N)
  hF: GPUBuffer; // (N, H) after model.norm
  /** Per row: logp (N), lse (N), entropy (N), targets, running state. */
  lm: LmRows;
  /** With ForwardOptions.headRows: the rows the vocabulary head ran on, for the backward. */
  head?: HeadRows;
  buffers: GPUBuffer[];
}

/** The vocabulary head's own rows (ForwardOptions.headRows): R of the batch's N. */
export interface HeadRows {
  R: number;
  rows: GPUBuffer; // (R) u32 row of the batch
  h: GPUBuffer; // (R, H) hF of those rows
  tgt: GPUBuffer; // (R) u32 targets
  logp: GPUBuffer; // (R)
  lse: GPUBuffer; // (R)
  entropy: GPUBuffer; // (R)
}

/** Options of the forward. */
export interface ForwardOptions {
  /**
   * Keep only each layer's input and recompute the layer's activations during the backward:
   * memory O(L N H + one layer) instead of O(L N (6H + 3I + ...)), for about a third more work.
   */
  recompute?: boolean;
  /**
   * Run the fused lm head (logp, lse, entropy per row; default true). A scalar head over the last
   * hidden state (the PRM's, src/gpu/trainer/prm-step.ts) reads `hF` and leaves it off.
   */
  lmHead?: boolean;
  /**
   * Rows (ascending, distinct) whose next-token outputs are read (a GRPO loss reads its completion
   * rows only, as TRL's logits_to_keep): the vocabulary head, a third of the 0.5B step's FLOPs, runs
   * on these alone and logp, lse and entropy are 0 on every other row; the backward then takes its
   * gradient on them alone (every other row must have zero loss weight). Default: every row.
   */
  headRows?: Uint32Array;
}

interface LinearOpts {
  accumulate?: boolean;
  bias?: boolean;
  xaOnly?: boolean;
}

/**
 * Records y (N, out) (+)= x W^T (+ b) + scale * (x A^T) B^T, keeping x A^T in `xa`; with `xaOnly`
 * only x A^T (what the backward needs of a product whose output it does not).
 */
async function encodeLinear(
  m: GpuModel,
  lora: GpuLora | undefined,
  enc: GPUCommandEncoder,
  layer: number,
  target: LoraTarget,
  x: GPUBuffer,
  y: GPUBuffer,
  N: number,
  o: LinearOpts & { xa?: GPUBuffer },
): Promise<void> {
  const { device, cfg } = m;
  const name = `model.layers.${layer}.${targetModule(target)}.${target}`;
  const [outDim, inDim] = targetDims(cfg, target);
  const slot = loraSlot(lora, layer, target);
  if (slot && lora && !o.xa) throw new Error(`encodeLinear: no x A^T buffer for ${name}`);
  // x A^T first, so that s (x A^T) B^T can be the base product's tail (where its kernel runs one; else a product after it).
  let tail: TailOperands<GPUBuffer> | undefined;
  if (slot && lora && o.xa) {
    await encodeMatmul(device, enc, x, slot.A, o.xa, { M: N, N: lora.r, K: inDim, transB: true });
    tail = { a: o.xa, b: slot.B, r: lora.r, scale: lora.scale };
  }
  if (o.xaOnly) return;
  const bias = o.bias ? weightBuffer(m, `${name}.bias`) : undefined;
  const q = m.q4.get(`${name}.weight`);
  if (q) return encodeQ4Matmul(device, enc, x, q, y, N, { accumulate: o.accumulate, bias, tail });
  // Where W^T (in, out) is stored, B is read row-fastest; the tail's B stays (out, r) either way.
  const wT = m.transposed.get(`${name}.weight`);
  const w = wT ? { buf: wT, f16: false } : linearWeight(m, `${name}.weight`);
  await encodeMatmul(device, enc, x, w.buf, y, {
    M: N,
    N: outDim,
    K: inDim,
    transB: !wT,
    accumulate: o.accumulate,
    bF16: w.f16,
    bias,
    tail: tail && { ...tail, transB: true },
  });
}

type Alloc = (label: string, floats: number) => GPUBuffer;

/** Allocates one layer's activation buffers (xIn is set by the caller). */
function allocLayer(
  m: GpuModel,
  lora: GpuLora | undefined,
  B: number,
  T: number,
  tag: string,
  buf: Alloc,
  xIn: GPUBuffer,
): LayerActs {
  const { cfg } = m;
  const N = B * T;
  const H = cfg.hiddenSize, D = cfg.headDim, nH = cfg.numHeads, nKv = cfg.numKvHeads, I = cfg.intermediateSize;
  const qd = nH * D, kvd = nKv * D;
  const xa = new Map<LoraTarget, GPUBuffer>();
  if (lora) { for (const t of lora.targets) xa.set(t, buf(`${tag}.${t}.xa`, N * lora.r)); }
  const a: LayerActs = {
    xIn,
    rstd1: buf(`${tag}.rstd1`, N),
    h1: buf(`${tag}.h1`, N * H),
    qRaw: buf(`${tag}.qRaw`, N * qd),
    kRaw: buf(`${tag}.kRaw`, N * kvd),
    rstdQ: buf(`${tag}.rstdQ`, cfg.qkNorm ? N * nH : 1),
    rstdK: buf(`${tag}.rstdK`, cfg.qkNorm ? N * nKv : 1),
    qN: buf(`${tag}.qN`, cfg.qkNorm ? N * qd : 1),
    kN: buf(`${tag}.kN`, cfg.qkNorm ? N * kvd : 1),
    q: buf(`${tag}.q`, N * qd),
    k: buf(`${tag}.k`, N * kvd),
    v: buf(`${tag}.v`, N * kvd),
    att: buf(`${tag}.att`, N * qd),
    lse: buf(`${tag}.lse`, B * nH * T),
    xMid: buf(`${tag}.xMid`, N * H),
    rstd2: buf(`${tag}.rstd2`, N),
    h2: buf(`${tag}.h2`, N * H),
    gate: buf(`${tag}.gate`, N * I),
    up: buf(`${tag}.up`, N * I),
    act: buf(`${tag}.act`, N * I),
    xa,
  };
  if (!cfg.qkNorm) {
    a.qN = a.qRaw;
    a.kN = a.kRaw;
  }
  return a;
}

/**
 * Records layer `l`'s forward from a.xIn, filling `a` and writing the layer's output to `xOut`.
 * `output: false` (the backward's recomputation, which needs every activation but not the output)
 * skips the residual copy and down_proj's product, keeping only down_proj's x A^T: a fifth of the
 * layer's FLOPs at the 0.5B shape (6144 x 896 x 4864 of 6144 x 11,648 x 896 + attention).
 */
export async function encodeLayerForward(
  m: GpuModel,
  lora: GpuLora | undefined,
  enc: GPUCommandEncoder,
  l: number,
  batch: GpuBatch,
  a: LayerActs,
  xOut: GPUBuffer,
  opts: { output?: boolean } = {},
): Promise<void> {
  const { device, cfg } = m;
  const { B, T } = batch;
  const N = B * T;
  const H = cfg.hiddenSize, D = cfg.headDim, nH = cfg.numHeads, nKv = cfg.numKvHeads, I = cfg.intermediateSize;
  const p = `model.layers.${l}`;
  const eps = cfg.rmsNormEps;
  const lin = (t: LoraTarget, x: GPUBuffer, y: GPUBuffer, o: LinearOpts = {}) =>
    encodeLinear(m, lora, enc, l, t, x, y, N, { ...o, xa: a.xa.get(t) });
  const norm = (x: GPUBuffer, w: string, y: GPUBuffer, rstd: GPUBuffer, rows: number, C: number) =>
    encodeRmsNormForward(device, enc, x, weightBuffer(m, `${p}.${w}.weight`), y, rstd, { rows, C, eps });
  await norm(a.xIn, "input_layernorm", a.h1, a.rstd1, N, H);
  const bias = cfg.attentionBias;
  await lin("q_proj", a.h1, a.qRaw, { bias });
  await lin("k_proj", a.h1, a.kRaw, { bias });
  await lin("v_proj", a.h1, a.v, { bias });
  if (cfg.qkNorm) {
    await norm(a.qRaw, "self_attn.q_norm", a.qN, a.rstdQ, N * nH, D);
    await norm(a.kRaw, "self_attn.k_norm", a.kN, a.rstdK, N * nKv, D);
  }
  await encodeRope(device, enc, a.qN, batch.pos, m.invFreq, a.q, { N, H: nH, D });
  await encodeRope(device, enc, a.kN, batch.pos, m.invFreq, a.k, { N, H: nKv, D });
  const io = { q: a.q, k: a.k, v: a.v, lens: batch.lensBuf, o: a.att, lse: a.lse };
  await encodeAttentionForward(device, enc, io, { B, T, H: nH, Hkv: nKv, D });
  // The residual: xMid = xIn + o_proj(att), by copying then accumulating the projection.
  enc.copyBufferToBuffer(a.xIn, 0, a.xMid, 0, N * H * 4);
  await lin("o_proj", a.att, a.xMid, { accumulate: true });
  await norm(a.xMid, "post_attention_layernorm", a.h2, a.rstd2, N, H);
  await lin("gate_proj", a.h2, a.gate);
  await lin("up_proj", a.h2, a.up);
  await encodeSwigluForward(device, enc, a.gate, a.up, a.act, N * I);
  if (opts.output === false) {
    await lin("down_proj", a.act, xOut, { xaOnly: true });
    return;
  }
  enc.copyBufferToBuffer(a.xMid, 0, xOut, 0, N * H * 4);
  await lin("down_proj", a.act, xOut, { accumulate: true });
}

/**
 * Runs the forward over `batch` and returns its outputs and saved activations (submitted, not
 * awaited). Buffers come from arena.ts; work is submitted layer by layer, so the
 * GPU runs the first layers while the host records the next.
 */
export async function forward(
  m: GpuModel,
  lora: GpuLora | undefined,
  batch: GpuBatch,
  o: ForwardOptions = {},
): Promise<ForwardResult> {
  const { device, cfg } = m;
  const { B, T } = batch;
  const N = B * T;
  const H = cfg.hiddenSize;
  const buffers: GPUBuffer[] = [];
  const buf = arenaTaker(device, buffers);
  const widest = Math.max(H, cfg.intermediateSize, cfg.numHeads * cfg.headDim);
  if (N * widest * 4 > device.limits.maxStorageBufferBindingSize) {
    throw new Error(
      `forward: ${B} x ${T} tokens x ${widest} features exceed this device's maxStorageBufferBindingSize ${device.limits.maxStorageBufferBindingSize}; use smaller (micro-)batches`,
    );
  }
  let enc = commandEncoder(device, "forward");
  const xs = [buf("x0", N * H)];
  await encodeEmbedding(device, enc, batch.ids, m.embed, xs[0], {
    N,
    H,
    V: cfg.vocabSize,
    window: m.vocabWindow,
  });
  const layers: LayerActs[] = [];
  const scratch = o.recompute
    ? { acts: allocLayer(m, lora, B, T, "Lscratch", buf, xs[0]), xOut: buf("Lscratch.xOut", N * H) }
    : null;
  for (let l = 0; l < cfg.numLayers; l++) {
    const a = scratch ? scratch.acts : allocLayer(m, lora, B, T, `L${l}`, buf, xs[l]);
    a.xIn = xs[l];
    xs.push(buf(`x${l + 1}`, N * H));
    await encodeLayerForward(m, lora, enc, l, batch, a, xs[l + 1]);
    if (!scratch) layers.push(a);
    // Submit layer by layer, so that the GPU runs while the host records the next.
    device.queue.submit([enc.finish()]);
    enc = commandEncoder(device, "forward");
  }
  const rstdF = buf("rstdF", N);
  const hF = buf("hF", N * H);
  const normF = weightBuffer(m, "model.norm.weight");
  await encodeRmsNormForward(device, enc, xs[cfg.numLayers], normF, hF, rstdF, { rows: N, C: H, eps: cfg.rmsNormEps });
  // The fused lm head streams over the vocabulary: no (N, V) logits tensor exists.
  const lm: LmRows = { tgt: batch.targets, logp: buf("logp", N), lse: buf("lm-lse", N), entropy: buf("entropy", N) };
  // With headRows, the head runs on the rows the loss reads: their hidden states and targets gathered, the results
  // scattered back (zero on every other row). Without lmHead, no vocabulary head (a scalar head reads hF).
  const lmHead = o.lmHead ?? true;
  const R = o.headRows && o.headRows.length < N ? o.headRows.length : N;
  let head: HeadRows | undefined;
  if (lmHead && o.headRows && R < N) {
    head = {
      R,
      rows: buf("lmhead-rows", o.headRows),
      h: buf("lmhead-h", R * H),
      tgt: buf("lmhead-tgt", R),
      logp: buf("lmhead-logp", R),
      lse: buf("lmhead-lse", R),
      entropy: buf("lmhead-entropy", R),
    };
    await encodeRowGather(device, enc, head.rows, hF, head.h, R, H);
    await encodeRowGather(device, enc, head.rows, batch.targets, head.tgt, R, 1);
  }
  if (lmHead && R > 0) {
    const dims = { N: R, C: H, V: cfg.vocabSize };
    const partials = buf("lmhead-partials", lmheadPartialsBytes(dims) / 4);
    const { h, tgt: targets, logp, lse, entropy } = head ?? { h: hF, ...lm };
    await encodeLmheadForward(device, enc, { h, w: m.head, targets, logp, lse, entropy, partials }, dims);
  }
  if (head) {
    for (const [from, to] of [[head.logp, lm.logp], [head.lse, lm.lse], [head.entropy, lm.entropy]]) {
      enc.clearBuffer(to, 0, N * 4);
      await encodeRowScatter(device, enc, head.rows, from, to, R, 1);
    }
  }
  device.queue.submit([enc.finish()]);
  return { batch, xs, layers: scratch ? null : layers, scratch, rstdF, hF, lm, head, buffers };
}

/** Gives a batch's buffers back to the arena (once the work that reads them was submitted). */
export function destroyBatch(batch: GpuBatch): void {
  releaseToArena(batch.device, [batch.ids, batch.targets, batch.lensBuf, batch.pos]);
}

/** Gives the forward's buffers (the batch's own buffers too) back to the arena, once the work that reads them was submitted. */
export function destroyForward(f: ForwardResult): void {
  releaseToArena(f.batch.device, f.buffers);
  destroyBatch(f.batch);
}
