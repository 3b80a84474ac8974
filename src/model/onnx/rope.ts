// RoPE inverse frequencies as transformers computes them (default, linear and llama3 rope types),
// kept apart from the float64 reference so the two implementations check each other.
import type { ModelConfig } from "../config.ts";

/** The D/2 inverse frequencies of rotate-half RoPE for `cfg`. */
export function ropeInvFreq(cfg: ModelConfig): Float64Array {
  const d = cfg.headDim;
  const inv = new Float64Array(d / 2);
  for (let j = 0; j < d / 2; j++) inv[j] = 1 / cfg.ropeTheta ** ((2 * j) / d);
  const rs = cfg.ropeScaling;
  if (!rs) return inv;
  switch (rs.type) {
    case "linear":
      for (let j = 0; j < inv.length; j++) inv[j] /= rs.factor;
      return inv;
    case "llama3": {
      const old = rs.originalMaxPositionEmbeddings;
      for (let j = 0; j < inv.length; j++) {
        const wavelen = (2 * Math.PI) / inv[j];
        if (wavelen > old / rs.lowFreqFactor) {
          inv[j] /= rs.factor;
        } else if (wavelen >= old / rs.highFreqFactor) {
          const smooth = (old / wavelen - rs.lowFreqFactor) / (rs.highFreqFactor - rs.lowFreqFactor);
          inv[j] = (1 - smooth) * (inv[j] / rs.factor) + smooth * inv[j];
        }
      }
      return inv;
    }
  }
}
