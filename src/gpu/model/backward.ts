// Backward of forward.ts from dL/dlogp (N) to the LoRA parameters of every adapted target and,
// for full fine-tuning, to every base weight, accumulated into the gradient buffers (the caller
// zeroes them between steps).
// Backward rules, one per op (shapes as in forward.ts):
//   logp = z_tgt - lse(z), z = hF E^T   dz = g (onehot - softmax(z)); dhF = dz E (the fused lm head)
//   y = x W^T + s (x A^T) B^T           dx = dy W + s (dy B) A; dB += s dy^T (x A^T); dA += s (dy B)^T x
//   RMSNorm, RoPE, SwiGLU, attention     the layer kernels' own backward passes
//   residual x + f(x)                    dx accumulates in place (RMSNorm backward's ACCUMULATE)
import { arenaTaker, releaseToArena } from "../arena.ts";
import { CALL_SCRATCH, commandEncoder, sharedScratch } from "../device.ts";
import { attentionBackwardScratchBytes, encodeAttentionBackward } from "../kernels/attention.ts";
import { encodeLmheadBackward, lmheadScratchBytes } from "../kernels/lmhead.ts";
import { encodeMatmul } from "../kernels/matmul.ts";
import { encodeQ4MatmulTransposed, q4DequantScratchBytes } from "../kernels/q4matmul.ts";
import { encodeRmsNormBackward, encodeRmsNormWeightGrad } from "../kernels/rmsnorm.ts";
import { encodeRope } from "../kernels/rope.ts";
import { encodeSwigluBackward } from "../kernels/swiglu.ts";
import { type LoraTarget, targetDims, targetModule } from "../../model/lora.ts";
import { encodeLayerForward, type ForwardResult, type LayerActs } from "./forward.ts";
import { type GpuFullParams, gradOf } from "./full.ts";
import { encodeEmbeddingBackward, encodeRowGather, encodeRowScatter } from "./ops.ts";
import { type GpuLora, type GpuModel, linearWeight, loraSlot, weightBuffer } from "./state.ts";

/** Records dxOut (N, in) (+)= dy W + LoRA path, and accumulates the slot's dA, dB. */
async function encodeLinearBackward(
  m: GpuModel,
  lora: GpuLora | undefined,
  enc: GPUCommandEncoder,
  layer: number,
  target: LoraTarget,
  dy: GPUBuffer,
  x: GPUBuffer,
  xa: GPUBuffer | undefined,
  dxOut: GPUBuffer,
  dyB: GPUBuffer,
  N: number,
  accumulate: boolean,
  full?: { params: GpuFullParams; ones: GPUBuffer },
): Promise<void> {
  const { device, cfg } = m;
  const [outDim, inDim] = targetDims(cfg, target);
  const base = `model.layers.${layer}.${targetModule(target)}.${target}`;
  const q = m.q4.get(`${base}.weight`);
  const slot = loraSlot(lora, layer, target);
  if (slot && lora && !xa) throw new Error(`backward: missing x A^T of layer ${layer} ${target}`);
  const s = lora?.scale ?? 1;
  // dy B first, so that s (dy B) A can be the base product's tail (where its kernel runs one; else a product after it).
  if (slot && lora) await encodeMatmul(device, enc, dy, slot.B, dyB, { M: N, N: lora.r, K: outDim });
  const tail = slot && lora ? { a: dyB, b: slot.A, r: lora.r, scale: s } : undefined;
  if (q) await encodeQ4MatmulTransposed(device, enc, dy, q, dxOut, N, { accumulate, tail });
  else {
    const w = linearWeight(m, `${base}.weight`);
    await encodeMatmul(device, enc, dy, w.buf, dxOut, { M: N, N: inDim, K: outDim, accumulate, bF16: w.f16, tail });
  }
  if (full) {
    // dW += dy^T x; db += 1^T dy (column sums, as a (1, N) x (N, out) product).
    const dW = gradOf(full.params, weightBuffer(m, `${base}.weight`));
    await encodeMatmul(device, enc, dy, x, dW, { M: outDim, N: inDim, K: N, transA: true, accumulate: true });
    const bias = m.weights.get(`${base}.bias`);
    const db = bias && gradOf(full.params, bias);
    if (db) await encodeMatmul(device, enc, full.ones, dy, db, { M: 1, N: outDim, K: N, accumulate: true });
  }
  if (!slot || !lora || !xa) return;
  await encodeMatmul(device, enc, dy, xa, slot.dB, {
    M: outDim,
    N: lora.r,
    K: N,
    transA: true,
    alpha: s,
    accumulate: true,
  });
  await encodeMatmul(device, enc, dyB, x, slot.dA, {
    M: lora.r,
    N: inDim,
    K: N,
    transA: true,
    alpha: s,
    accumulate: true,
  });
}

/**
 * Before a training forward of B x T: sizes the call scratch (device.ts CALL_SCRATCH) at once for the larger of its
 * step's needs, the attention backward's dq partials and the largest weight a q4 product dequantises (knob q4deq), so
 * that it never grows mid-step (a grown scratch's old buffer lives until the step ends: on the first step that would add
 * the dequantised weight to the peak), and so that the forward's wide split partials find it (matmul.ts
 * wideSplitInCallScratch) instead of growing the split scratch. The attention's part is what the backward would have
 * allocated anyway, later in the first step.
 */
export function reserveStepScratch(m: GpuModel, B: number, T: number): void {
  const { cfg } = m;
  const q4 = q4DequantScratchBytes(m.device, B * T, m.q4.values());
  const att = attentionBackwardScratchBytes(m.device, { B, T, H: cfg.numHeads, Hkv: cfg.numKvHeads, D: cfg.headDim });
  if (Math.max(q4, att) > 0) sharedScratch(m.device, CALL_SCRATCH, Math.max(q4, att));
}

/** Layer l's saved activations, or (under recomputation) its forward re-recorded into the scratch. */
async function layerActs(
  m: GpuModel,
  lora: GpuLora | undefined,
  enc: GPUCommandEncoder,
  f: ForwardResult,
  l: number,
): Promise<LayerActs> {
  if (f.layers) return f.layers[l];
  if (!f.scratch) throw new Error("backward: the forward kept neither activations nor a recomputation scratch");
  f.scratch.acts.xIn = f.xs[l];
  // The layer's output is f.xs[l + 1], kept: recompute everything but it.
  await encodeLayerForward(m, lora, enc, l, f.batch, f.scratch.acts, f.scratch.xOut, { output: false });
  return f.scratch.acts;
}

/** What the backward starts from, and with `full` what else it accumulates into. */
export interface BackwardOptions {
  /** dL/dlogp (N). */
  g?: GPUBuffer;
  /**
   * dL/dhF (N, H) given directly (a head other than the lm head read hF, e.g. the PRM's scalar
   * head): the lm head's backward is skipped and `g` is not read. The buffer is the caller's.
   */
  dhF?: GPUBuffer;
  /** Full fine-tuning: the gradients of every base weight accumulate too. */
  full?: GpuFullParams;
}

/**
 * Records and submits the backward of `f` from `o.g` (or `o.dhF`); LoRA gradients accumulate, and
 * with `o.full` so do the gradients of every base weight. Submitted layer by layer and not awaited:
 * work queued later (reads included) runs after it. Its scratch goes back to arena.ts.
 */
export async function backward(
  m: GpuModel,
  lora: GpuLora | undefined,
  f: ForwardResult,
  o: BackwardOptions,
): Promise<void> {
  const { g, full: fullParams } = o;
  const { device, cfg } = m;
  const { B, T } = f.batch;
  const N = B * T;
  const H = cfg.hiddenSize, D = cfg.headDim, nH = cfg.numHeads, nKv = cfg.numKvHeads, I = cfg.intermediateSize;
  const qd = nH * D, kvd = nKv * D;
  const eps = cfg.rmsNormEps;
  const scratch: GPUBuffer[] = [];
  const buf = arenaTaker(device, scratch);
  let enc = commandEncoder(device, "backward");
  const ones = fullParams ? buf("ones", new Float32Array(N).fill(1)) : undefined;
  const full = fullParams && ones ? { params: fullParams, ones } : undefined;
  // RMSNorm y = norm(x) w: dw += (full fine-tuning) and dx (+)= (`accumulate`) from dy.
  type Norm = { w: string; dy: GPUBuffer; x: GPUBuffer; rstd: GPUBuffer; dx: GPUBuffer; rows: number; C: number };
  const normGrad = async (n: Norm) => {
    if (!full) return;
    const dw = gradOf(full.params, weightBuffer(m, n.w));
    await encodeRmsNormWeightGrad(device, enc, n.dy, n.x, n.rstd, dw, { rows: n.rows, C: n.C, eps, accumulate: true });
  };
  const normBackward = (n: Norm, accumulate = false) =>
    encodeRmsNormBackward(device, enc, n.dy, n.x, weightBuffer(m, n.w), n.rstd, n.dx, {
      rows: n.rows,
      C: n.C,
      eps,
      accumulate,
    });
  const norm = async (n: Norm, accumulate: boolean) => {
    await normGrad(n);
    await normBackward(n, accumulate);
  };
  // The fused lm head's backward, chunk by chunk over the vocabulary (logits recomputed there); skipped where dL/dhF is
  // given (a scalar head read hF). On the forward's headRows: their upstream gradients gathered, dh scattered back
  // (every other row has zero loss weight, so zero gradient).
  const dhF = o.dhF ?? buf("d-hF", N * H);
  if (!o.dhF) {
    if (!g) throw new Error("backward: needs dL/dlogp (g) or dL/dhF (o.dhF)");
    const head = f.head, R = head?.R ?? N;
    const on = head
      ? { ...head, g: buf("dL-dlogp-rows", R), dh: buf("d-hF-rows", R * H) }
      : { h: f.hF, tgt: f.lm.tgt, lse: f.lm.lse, g, dh: dhF };
    if (head) await encodeRowGather(device, enc, head.rows, g, on.g, R, 1);
    if (R > 0) {
      const dims = { N: R, C: H, V: cfg.vocabSize };
      await encodeLmheadBackward(
        device,
        enc,
        {
          h: on.h,
          w: m.head,
          targets: on.tgt,
          lse: on.lse,
          g: on.g,
          dh: on.dh,
          dw: full ? gradOf(full.params, m.head) : undefined,
          scratch: buf("lmhead-dz", lmheadScratchBytes(device, dims) / 4),
        },
        dims,
        { accumulateDw: true },
      );
    }
    if (head) {
      enc.clearBuffer(dhF, 0, N * H * 4);
      await encodeRowScatter(device, enc, head.rows, on.dh, dhF, R, H);
    }
  }
  const dx = buf("d-x", N * H);
  await norm({ w: "model.norm.weight", dy: dhF, x: f.xs[cfg.numLayers], rstd: f.rstdF, dx, rows: N, C: H }, false);
  // Submit layer by layer, so that the GPU runs while the host records the next.
  device.queue.submit([enc.finish()]);
  enc = commandEncoder(device, "backward");
  const dAct = buf("d-act", N * I), dGate = buf("d-gate", N * I), dUp = buf("d-up", N * I);
  const dh = buf("d-h", N * H), dAtt = buf("d-att", N * qd);
  const dq = buf("d-q", N * qd), dqN = buf("d-qN", N * qd), dqRaw = cfg.qkNorm ? buf("d-qRaw", N * qd) : dqN;
  const dk = buf("d-k", N * kvd), dkN = buf("d-kN", N * kvd), dkRaw = cfg.qkNorm ? buf("d-kRaw", N * kvd) : dkN;
  const dv = buf("d-v", N * kvd), delta = buf("attn-delta", B * nH * T);
  const dyB = buf("d-yB", N * Math.max(1, lora?.r ?? 1));
  for (let l = cfg.numLayers - 1; l >= 0; l--) {
    const a = await layerActs(m, lora, enc, f, l);
    const p = `model.layers.${l}`;
    const lin = (t: LoraTarget, dy: GPUBuffer, x: GPUBuffer, out: GPUBuffer, acc: boolean) =>
      encodeLinearBackward(m, lora, enc, l, t, dy, x, a.xa.get(t), out, dyB, N, acc, full);
    // MLP: dx is dL/d(layer output), which is also dy of down_proj (residual branch).
    await lin("down_proj", dx, a.act, dAct, false);
    await encodeSwigluBackward(device, enc, dAct, a.gate, a.up, dGate, dUp, N * I);
    await lin("gate_proj", dGate, a.h2, dh, false);
    await lin("up_proj", dUp, a.h2, dh, true);
    await norm(
      { w: `${p}.post_attention_layernorm.weight`, dy: dh, x: a.xMid, rstd: a.rstd2, dx, rows: N, C: H },
      true,
    );
    // Attention: dx is now dL/dxMid.
    await lin("o_proj", dx, a.att, dAtt, false);
    const io = { q: a.q, k: a.k, v: a.v, lens: f.batch.lensBuf, o: a.att, lse: a.lse, dout: dAtt, dq, dk, dv, delta };
    await encodeAttentionBackward(device, enc, io, { B, T, H: nH, Hkv: nKv, D });
    await encodeRope(device, enc, dq, f.batch.pos, m.invFreq, dqN, { N, H: nH, D, backward: true });
    await encodeRope(device, enc, dk, f.batch.pos, m.invFreq, dkN, { N, H: nKv, D, backward: true });
    if (cfg.qkNorm) {
      // Qwen3's per-head q and k norms: both weight gradients, then both input gradients.
      const norms = [
        { w: `${p}.self_attn.q_norm.weight`, dy: dqN, x: a.qRaw, rstd: a.rstdQ, dx: dqRaw, rows: N * nH, C: D },
        { w: `${p}.self_attn.k_norm.weight`, dy: dkN, x: a.kRaw, rstd: a.rstdK, dx: dkRaw, rows: N * nKv, C: D },
      ];
      for (const n of norms) await normGrad(n);
      for (const n of norms) await normBackward(n);
    }
    await lin("q_proj", dqRaw, a.h1, dh, false);
    await lin("k_proj", dkRaw, a.h1, dh, true);
    await lin("v_proj", dv, a.h1, dh, true);
    await norm({ w: `${p}.input_layernorm.weight`, dy: dh, x: a.xIn, rstd: a.rstd1, dx, rows: N, C: H }, true);
    // Submit layer by layer, so that the GPU runs while the host records the next.
    device.queue.submit([enc.finish()]);
    enc = commandEncoder(device, "backward");
  }
  // dx is now dL/dx0, the embedding rows' gradient.
  if (full) {
    await encodeEmbeddingBackward(device, enc, f.batch.ids, dx, gradOf(full.params, m.embed), {
      N,
      H,
      V: cfg.vocabSize,
      window: m.vocabWindow,
    });
  }
  device.queue.submit([enc.finish()]);
  releaseToArena(device, scratch);
}
