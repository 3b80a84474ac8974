// Weight compression for the policy: 4-bit block quantisation in onnxruntime's MatMulNBits layout
// and f16, with a measured per-layer error report.
//
// MatMulNBits (com.microsoft, bits 4, block_size 32) for a linear weight W (N = out, K = in):
//   B           uint8 (N, nb, 16), nb = ceil(K/32): code of W[n, b*32 + j] in byte
//               (n*nb + b)*16 + floor(j/2), low nibble for even j, high nibble for odd j;
//   scales      float (N * nb), row-major (n, b);
//   zero_points uint8 (N * ceil(nb/2)): zero point of block b of row n in byte
//               n*ceil(nb/2) + floor(b/2), low nibble for even b (omitted input = 8 for all);
//   W[n, k] ~= (code - zero_point) * scale.
// Default here: asymmetric min/max per block with 0 kept in range (as onnxruntime's own quantiser
// does, so the zero point always fits in [0, 15]): scale = (max - min) / 15, zp = round(-min / scale),
// code = clamp(round(x / scale) + zp, 0, 15). Padding codes past K equal zp, so they dequantise to 0.
import type { ModelConfig } from "./config.ts";
import { f16BitsToF32, f32ToF16Bits, fromF16, toF16 } from "./half.ts";
import { baseKey, LORA_TARGETS } from "./lora.ts";
import type { Tensor, Weights } from "./tensor.ts";

/** MatMulNBits block size used throughout the project. */
export const Q4_BLOCK = 32;

/** A q4 linear weight in MatMulNBits layout (field names as the ONNX builder's Q4Matrix). */
export interface Q4Weight {
  /** Output features (rows of W). */
  N: number;
  /** Input features (columns of W). */
  K: number;
  blockSize: number;
  /** (N, nb, blockSize / 2) */
  packed: Uint8Array;
  /** (N, nb) */
  scales: Float32Array;
  /** (N, ceil(nb / 2)) packed, or null for symmetric quantisation (implicit zero point 8). */
  zeroPoints: Uint8Array | null;
}

/** Quantises a (N, K) weight block-wise; `symmetric` uses scale = absmax / 7 and no zero-point tensor. */
export function quantizeQ4(w: Tensor, o: { blockSize?: number; symmetric?: boolean } = {}): Q4Weight {
  if (w.shape.length !== 2) throw new Error(`quantizeQ4: expected a 2-D weight, got shape [${w.shape.join(", ")}]`);
  const [N, K] = w.shape;
  const bs = o.blockSize ?? Q4_BLOCK;
  if (bs < 16 || (bs & (bs - 1)) !== 0) throw new Error(`quantizeQ4: block size ${bs} must be a power of two >= 16`);
  const nb = Math.ceil(K / bs);
  const zpRow = Math.ceil(nb / 2);
  const packed = new Uint8Array(N * nb * (bs / 2));
  const scales = new Float32Array(N * nb);
  const zeroPoints = o.symmetric ? null : new Uint8Array(N * zpRow);
  const d = w.data;
  const half = bs / 2;
  // Hot loop (a 0.5B model has 358M weights to quantise when its session is made): locals, no Math.min/max calls,
  // one byte written per pair. Same values as the plain form: round(x / s) + zp clamped to [0, 15].
  for (let n = 0; n < N; n++) {
    const row = n * K;
    for (let b = 0; b < nb; b++) {
      const k0 = b * bs;
      const k1 = Math.min(K, k0 + bs);
      let lo = 0;
      let hi = 0;
      for (let k = row + k0, end = row + k1; k < end; k++) {
        const x = d[k];
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      let scale: number;
      let zp: number;
      if (o.symmetric) {
        scale = Math.max(-lo, hi) / 7;
        zp = 8;
      } else {
        scale = (hi - lo) / 15;
        zp = scale === 0 ? 8 : Math.min(15, Math.max(0, Math.round(-lo / scale)));
      }
      // Stored as float32, and quantised against the stored value so dequantisation is consistent.
      const sc = Math.fround(scale);
      scales[n * nb + b] = sc;
      if (zeroPoints) zeroPoints[n * zpRow + (b >> 1)] |= zp << ((b & 1) * 4);
      const base = (n * nb + b) * half;
      const len = k1 - k0;
      for (let j = 0; j < bs; j += 2) {
        let q0 = zp, q1 = zp;
        if (sc !== 0) {
          if (j < len) {
            q0 = Math.round(d[row + k0 + j] / sc) + zp;
            q0 = q0 < 0 ? 0 : q0 > 15 ? 15 : q0;
          }
          if (j + 1 < len) {
            q1 = Math.round(d[row + k0 + j + 1] / sc) + zp;
            q1 = q1 < 0 ? 0 : q1 > 15 ? 15 : q1;
          }
        }
        packed[base + (j >> 1)] = q0 | (q1 << 4);
      }
    }
  }
  return { N, K, blockSize: bs, packed, scales, zeroPoints };
}

/** The float32 (N, K) weight a q4 weight stands for: (code - zp) * scale. */
export function dequantizeQ4(q: Q4Weight): Tensor {
  const { N, K, blockSize: bs } = q;
  const nb = Math.ceil(K / bs);
  const zpRow = Math.ceil(nb / 2);
  const out = new Float32Array(N * K);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const b = Math.floor(k / bs);
      const j = k % bs;
      const code = (q.packed[(n * nb + b) * (bs / 2) + (j >> 1)] >> ((j & 1) * 4)) & 15;
      const zp = q.zeroPoints ? (q.zeroPoints[n * zpRow + (b >> 1)] >> ((b & 1) * 4)) & 15 : 8;
      out[n * K + k] = (code - zp) * q.scales[n * nb + b];
    }
  }
  return { shape: [N, K], data: out };
}

/** Rounds every value through f16 (what an f16 model stores). */
export function roundTripF16(t: Tensor): Tensor {
  const data = new Float32Array(t.data.length);
  for (let i = 0; i < data.length; i++) data[i] = f16BitsToF32(f32ToF16Bits(t.data[i]));
  return { shape: [...t.shape], data };
}

/** True for the linear weights the policy quantises (attention and MLP projections, untied lm_head). */
export function isQuantizableLinear(name: string): boolean {
  return /^model\.layers\.\d+\.(self_attn\.[qkvo]_proj|mlp\.(gate|up|down)_proj)\.weight$/.test(name) ||
    name === "lm_head.weight";
}

/** One row of the error report. */
export interface QuantError {
  name: string;
  shape: number[];
  /** max |w - deq(q(w))| */
  maxAbs: number;
  /** sqrt(sum (w - deq)^2) / sqrt(sum w^2) */
  rmsRel: number;
}

/** Measures quantisation error per weight (q4 or f16) over the quantisable linear weights, or those `filter` picks. */
export function quantErrorReport(
  w: Weights,
  mode: "q4" | "q4sym" | "f16",
  filter: (name: string) => boolean = isQuantizableLinear,
): QuantError[] {
  const rows: QuantError[] = [];
  for (const [name, t] of w) {
    if (!filter(name)) continue;
    const approx = mode === "f16" ? roundTripF16(t) : dequantizeQ4(quantizeQ4(t, { symmetric: mode === "q4sym" }));
    let maxAbs = 0;
    let se = 0;
    let ss = 0;
    for (let i = 0; i < t.data.length; i++) {
      const e = t.data[i] - approx.data[i];
      maxAbs = Math.max(maxAbs, Math.abs(e));
      se += e * e;
      ss += t.data[i] * t.data[i];
    }
    rows.push({ name, shape: [...t.shape], maxAbs, rmsRel: ss > 0 ? Math.sqrt(se / ss) : 0 });
  }
  return rows;
}

/** Weights with every quantisable linear replaced by its q4 (or f16) round trip, to measure the effect on log-probabilities. */
export function fakeQuantize(w: Weights, mode: "q4" | "q4sym" | "f16"): Weights {
  const out: Weights = new Map();
  for (const [name, t] of w) {
    if (!isQuantizableLinear(name)) out.set(name, t);
    else out.set(name, mode === "f16" ? roundTripF16(t) : dequantizeQ4(quantizeQ4(t, { symmetric: mode === "q4sym" })));
  }
  return out;
}

/**
 * The weights a q4 policy graph computes with, for checking it against the float64 reference: every
 * layer projection and the head quantised and dequantised (an untied copy of the embeddings when
 * they are tied), the embeddings rounded through f16 as the graph stores them. With
 * `shaderF16: false` (the graph built for a device without f16) only the projections: the embedding
 * and the head stay f32.
 */
export function q4EffectiveWeights(
  cfg: ModelConfig,
  w: Weights,
  o: { shaderF16?: boolean } = {},
): { cfg: ModelConfig; w: Weights } {
  const out: Weights = new Map(w);
  const dq = (name: string, src = name) => {
    const t = w.get(src);
    if (!t) throw new Error(`missing ${src}`);
    out.set(name, dequantizeQ4(quantizeQ4(t)));
  };
  for (let l = 0; l < cfg.numLayers; l++) for (const t of LORA_TARGETS) dq(baseKey(l, t));
  // Without shader-f16 the graph keeps the embedding and the head in f32, as the WGSL trainer does.
  if (o.shaderF16 === false) return { cfg, w: out };
  dq("lm_head.weight", cfg.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight");
  const e = w.get("model.embed_tokens.weight");
  if (!e) throw new Error("missing embeddings");
  out.set("model.embed_tokens.weight", { shape: e.shape, data: fromF16(toF16(e.data)) });
  return { cfg: { ...cfg, tieWordEmbeddings: false }, w: out };
}
