// Float64 CPU reference of causal grouped-query attention, forward and backward, as plain loops.
//
// Glossary: B batch, T tokens, H query heads, Hkv key/value heads (H % Hkv == 0; query head h
// reads kv head floor(h / (H / Hkv))), D head dim.
// Masking: sequence b is valid for positions t < lens[b] (right padding). A valid query t attends
// to keys j <= t (all valid, since j <= t < lens[b]); a padded query row produces o = 0 and
// lse = 0, and passes no gradient anywhere.
import type { AttentionDims } from "../../src/gpu/kernels/attention.ts";
export type { AttentionDims };

const qIdx = (a: AttentionDims, b: number, t: number, h: number) => ((b * a.T + t) * a.H + h) * a.D;
const kIdx = (a: AttentionDims, b: number, t: number, h: number) => ((b * a.T + t) * a.Hkv + h) * a.D;

/** Softmax probabilities of one valid query row over keys 0..t, and their logsumexp. */
function rowProbs(q: ArrayLike<number>, k: ArrayLike<number>, a: AttentionDims, b: number, h: number, t: number) {
  const hk = Math.floor(h / (a.H / a.Hkv));
  const scale = 1 / Math.sqrt(a.D);
  const s = new Float64Array(t + 1);
  let m = -Infinity;
  for (let j = 0; j <= t; j++) {
    let dot = 0;
    for (let d = 0; d < a.D; d++) dot += q[qIdx(a, b, t, h) + d] * k[kIdx(a, b, j, hk) + d];
    s[j] = dot * scale;
    m = Math.max(m, s[j]);
  }
  let sum = 0;
  for (let j = 0; j <= t; j++) sum += Math.exp(s[j] - m);
  const lse = m + Math.log(sum);
  const p = s.map((x) => Math.exp(x - lse));
  return { p, lse, hk, scale };
}

/** o (B, T, H, D) and lse (B, H, T) of causal attention with per-sequence valid lengths. */
export function attentionForwardRef(
  q: ArrayLike<number>, // (B, T, H, D)
  k: ArrayLike<number>, // (B, T, Hkv, D)
  v: ArrayLike<number>, // (B, T, Hkv, D)
  lens: ArrayLike<number>, // (B)
  a: AttentionDims,
): { o: Float64Array; lse: Float64Array } {
  const o = new Float64Array(a.B * a.T * a.H * a.D);
  const lse = new Float64Array(a.B * a.H * a.T);
  for (let b = 0; b < a.B; b++) {
    for (let h = 0; h < a.H; h++) {
      for (let t = 0; t < Math.min(lens[b], a.T); t++) {
        const r = rowProbs(q, k, a, b, h, t);
        lse[(b * a.H + h) * a.T + t] = r.lse;
        for (let j = 0; j <= t; j++) {
          for (let d = 0; d < a.D; d++) o[qIdx(a, b, t, h) + d] += r.p[j] * v[kIdx(a, b, j, r.hk) + d];
        }
      }
    }
  }
  return { o, lse };
}

/** dq, dk, dv of sum(dout * o), by the chain rule through softmax (independent of the forward's saved values). */
export function attentionBackwardRef(
  q: ArrayLike<number>,
  k: ArrayLike<number>,
  v: ArrayLike<number>,
  lens: ArrayLike<number>,
  dout: ArrayLike<number>, // (B, T, H, D)
  a: AttentionDims,
): { dq: Float64Array; dk: Float64Array; dv: Float64Array } {
  const dq = new Float64Array(q.length);
  const dk = new Float64Array(k.length);
  const dv = new Float64Array(v.length);
  for (let b = 0; b < a.B; b++) {
    for (let h = 0; h < a.H; h++) {
      for (let t = 0; t < Math.min(lens[b], a.T); t++) {
        const { p, hk, scale } = rowProbs(q, k, a, b, h, t);
        const qi = qIdx(a, b, t, h);
        // dP_j = dout . v_j; dS_j = P_j (dP_j - sum_i P_i dP_i)
        const dp = new Float64Array(t + 1);
        let mean = 0;
        for (let j = 0; j <= t; j++) {
          for (let d = 0; d < a.D; d++) dp[j] += dout[qi + d] * v[kIdx(a, b, j, hk) + d];
          mean += p[j] * dp[j];
        }
        for (let j = 0; j <= t; j++) {
          const ds = p[j] * (dp[j] - mean) * scale;
          const kj = kIdx(a, b, j, hk);
          for (let d = 0; d < a.D; d++) {
            dq[qi + d] += ds * k[kj + d];
            dk[kj + d] += ds * q[qi + d];
            dv[kj + d] += p[j] * dout[qi + d];
          }
        }
      }
    }
  }
  return { dq, dk, dv };
}
