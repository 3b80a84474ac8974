// Float64 CPU reference of the supported decoders (Qwen2, Llama, Qwen3), as plain loops written
// for clarity, not speed. A pure function of (config, weights, adapter, ids), so it also serves
// finite differences. Conventions follow Hugging Face transformers:
//   RMSNorm  y = x / sqrt(mean(x^2) + eps) * w
//   RoPE     rotate_half: pairs (i, i + d/2), inv_freq_i = theta^(-2i/d) (llama3 scaling if set)
//   attention GQA (query head h reads kv head floor(h / (heads / kvHeads))), causal, 1/sqrt(d)
//   Qwen3    q_norm / k_norm: RMSNorm over head_dim per head, before RoPE
//   MLP      down(silu(gate(x)) * up(x))
//   LoRA     y = W x + b + (alpha / r) * B (A x)
// Dimension letters: T positions, H hidden, V vocab, D head_dim, I intermediate.
import type { ModelConfig } from "./config.ts";
import { baseKey, type LoraAdapter, loraKey, loraScale, type LoraTarget } from "./lora.ts";
import type { Tensor, Weights } from "./tensor.ts";

function get(w: Weights, name: string): Tensor {
  const t = w.get(name);
  if (!t) throw new Error(`reference: missing tensor ${name}`);
  return t;
}

/** RoPE inverse frequencies (D/2) in float64, with Llama 3 / linear scaling applied when configured. */
export function ropeInvFreq(cfg: ModelConfig): Float64Array {
  const d = cfg.headDim;
  const inv = new Float64Array(d / 2);
  for (let i = 0; i < d / 2; i++) inv[i] = Math.pow(cfg.ropeTheta, -(2 * i) / d);
  const rs = cfg.ropeScaling;
  if (!rs) return inv;
  if (rs.type === "linear") return inv.map((f) => f / rs.factor);
  // transformers' _compute_llama3_parameters: long wavelengths divided by factor, short kept,
  // the band between interpolated smoothly.
  const lowWavelen = rs.originalMaxPositionEmbeddings / rs.lowFreqFactor;
  const highWavelen = rs.originalMaxPositionEmbeddings / rs.highFreqFactor;
  return inv.map((f) => {
    const wavelen = (2 * Math.PI) / f;
    if (wavelen < highWavelen) return f;
    if (wavelen > lowWavelen) return f / rs.factor;
    const smooth = (rs.originalMaxPositionEmbeddings / wavelen - rs.lowFreqFactor) /
      (rs.highFreqFactor - rs.lowFreqFactor);
    return (1 - smooth) * (f / rs.factor) + smooth * f;
  });
}

/** y = x / sqrt(mean(x^2) + eps) * w over one vector (or a slice of one). */
export function rmsNormRef(x: ArrayLike<number>, w: ArrayLike<number>, eps: number): Float64Array {
  const n = w.length;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += x[i] * x[i];
  const r = 1 / Math.sqrt(ss / n + eps);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) y[i] = x[i] * r * w[i];
  return y;
}

/** y = W x (+ b): W (out, in) row-major. */
function matvec(W: Tensor, x: ArrayLike<number>, b?: Tensor): Float64Array {
  const [out, inp] = W.shape;
  if (x.length !== inp) {
    throw new Error(`reference: input of length ${x.length} for a weight of shape [${W.shape.join(", ")}]`);
  }
  const y = new Float64Array(out);
  for (let o = 0; o < out; o++) {
    let s = b ? b.data[o] : 0;
    const row = o * inp;
    for (let i = 0; i < inp; i++) s += W.data[row + i] * x[i];
    y[o] = s;
  }
  return y;
}

/** A linear layer with its optional bias and LoRA update. */
function linear(
  w: Weights,
  layer: number,
  target: LoraTarget,
  x: ArrayLike<number>,
  adapter?: LoraAdapter,
  bias = false,
): Float64Array {
  const name = baseKey(layer, target);
  const y = matvec(get(w, name), x, bias ? get(w, name.replace(/\.weight$/, ".bias")) : undefined);
  if (adapter && adapter.targets.includes(target)) {
    const A = adapter.tensors.get(loraKey(layer, target, "A"));
    const B = adapter.tensors.get(loraKey(layer, target, "B"));
    if (!A || !B) throw new Error(`reference: adapter lacks ${loraKey(layer, target, A ? "B" : "A")}`);
    const ax = matvec(A, x);
    const bax = matvec(B, ax);
    const s = loraScale(adapter);
    for (let o = 0; o < y.length; o++) y[o] += s * bax[o];
  }
  return y;
}

/** Rotates one head vector in place by position `pos` (HF rotate_half convention). */
function applyRope(v: Float64Array, off: number, d: number, pos: number, inv: Float64Array): void {
  const half = d / 2;
  for (let i = 0; i < half; i++) {
    const a = pos * inv[i];
    const c = Math.cos(a);
    const s = Math.sin(a);
    const x1 = v[off + i];
    const x2 = v[off + i + half];
    v[off + i] = x1 * c - x2 * s;
    v[off + i + half] = x2 * c + x1 * s;
  }
}

function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

/** Final hidden states (after model.norm), one Float64Array (H) per position. */
export function referenceHidden(cfg: ModelConfig, w: Weights, ids: number[], adapter?: LoraAdapter): Float64Array[] {
  const T = ids.length;
  const H = cfg.hiddenSize;
  const D = cfg.headDim;
  const nH = cfg.numHeads;
  const nKv = cfg.numKvHeads;
  const group = nH / nKv;
  const inv = ropeInvFreq(cfg);
  const emb = get(w, "model.embed_tokens.weight");
  let x: Float64Array[] = ids.map((id) => {
    if (!Number.isInteger(id) || id < 0 || id >= cfg.vocabSize) {
      throw new Error(`reference: token id ${id} outside [0, ${cfg.vocabSize})`);
    }
    return Float64Array.from(emb.data.subarray(id * H, (id + 1) * H));
  });
  for (let l = 0; l < cfg.numLayers; l++) {
    const p = `model.layers.${l}`;
    const ln1 = get(w, `${p}.input_layernorm.weight`).data;
    const q: Float64Array[] = [];
    const k: Float64Array[] = [];
    const v: Float64Array[] = [];
    for (let t = 0; t < T; t++) {
      const h = rmsNormRef(x[t], ln1, cfg.rmsNormEps);
      const qt = linear(w, l, "q_proj", h, adapter, cfg.attentionBias); // (nH * D)
      const kt = linear(w, l, "k_proj", h, adapter, cfg.attentionBias); // (nKv * D)
      const vt = linear(w, l, "v_proj", h, adapter, cfg.attentionBias); // (nKv * D)
      if (cfg.qkNorm) {
        const qn = get(w, `${p}.self_attn.q_norm.weight`).data;
        const kn = get(w, `${p}.self_attn.k_norm.weight`).data;
        for (let hh = 0; hh < nH; hh++) {
          qt.set(rmsNormRef(qt.subarray(hh * D, (hh + 1) * D), qn, cfg.rmsNormEps), hh * D);
        }
        for (let hh = 0; hh < nKv; hh++) {
          kt.set(rmsNormRef(kt.subarray(hh * D, (hh + 1) * D), kn, cfg.rmsNormEps), hh * D);
        }
      }
      for (let hh = 0; hh < nH; hh++) applyRope(qt, hh * D, D, t, inv);
      for (let hh = 0; hh < nKv; hh++) applyRope(kt, hh * D, D, t, inv);
      q.push(qt);
      k.push(kt);
      v.push(vt);
    }
    const scale = 1 / Math.sqrt(D);
    const next: Float64Array[] = [];
    for (let t = 0; t < T; t++) {
      const att = new Float64Array(nH * D); // (nH * D)
      for (let hh = 0; hh < nH; hh++) {
        const kvh = Math.floor(hh / group);
        const scores = new Float64Array(t + 1);
        let mx = -Infinity;
        for (let s = 0; s <= t; s++) {
          let dot = 0;
          for (let i = 0; i < D; i++) dot += q[t][hh * D + i] * k[s][kvh * D + i];
          scores[s] = dot * scale;
          mx = Math.max(mx, scores[s]);
        }
        let z = 0;
        for (let s = 0; s <= t; s++) z += scores[s] = Math.exp(scores[s] - mx);
        for (let s = 0; s <= t; s++) {
          const pr = scores[s] / z;
          for (let i = 0; i < D; i++) att[hh * D + i] += pr * v[s][kvh * D + i];
        }
      }
      const o = linear(w, l, "o_proj", att, adapter);
      const x1 = new Float64Array(H);
      for (let i = 0; i < H; i++) x1[i] = x[t][i] + o[i];
      const h2 = rmsNormRef(x1, get(w, `${p}.post_attention_layernorm.weight`).data, cfg.rmsNormEps);
      const g = linear(w, l, "gate_proj", h2, adapter);
      const u = linear(w, l, "up_proj", h2, adapter);
      const a = new Float64Array(g.length);
      for (let i = 0; i < g.length; i++) a[i] = silu(g[i]) * u[i];
      const dn = linear(w, l, "down_proj", a, adapter);
      for (let i = 0; i < H; i++) x1[i] += dn[i];
      next.push(x1);
    }
    x = next;
  }
  const nf = get(w, "model.norm.weight").data;
  return x.map((xt) => rmsNormRef(xt, nf, cfg.rmsNormEps));
}

/** Logits (V) at every position of `ids`, in float64. */
export function referenceLogits(cfg: ModelConfig, w: Weights, ids: number[], adapter?: LoraAdapter): Float64Array[] {
  const head = get(w, cfg.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight");
  return referenceHidden(cfg, w, ids, adapter).map((h) => matvec(head, h));
}

/** log-softmax of one logit vector. */
export function logSoftmax(logits: ArrayLike<number>): Float64Array {
  let mx = -Infinity;
  for (let i = 0; i < logits.length; i++) mx = Math.max(mx, logits[i]);
  let z = 0;
  for (let i = 0; i < logits.length; i++) z += Math.exp(logits[i] - mx);
  const lz = mx + Math.log(z);
  const out = new Float64Array(logits.length);
  for (let i = 0; i < logits.length; i++) out[i] = logits[i] - lz;
  return out;
}

/** out[i][t] = log p(ids[i][t+1] | ids[i][0..t]) for each sequence (length ids[i].length - 1). */
export function referenceLogprobs(cfg: ModelConfig, w: Weights, ids: number[][], adapter?: LoraAdapter): number[][] {
  return ids.map((seq) => {
    const logits = referenceLogits(cfg, w, seq, adapter);
    const out: number[] = [];
    for (let t = 0; t + 1 < seq.length; t++) out.push(logSoftmax(logits[t])[seq[t + 1]]);
    return out;
  });
}
