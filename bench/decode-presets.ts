// The random model shapes of the decode suite's processes (suites/decode-ours.ts, decode-tjs.ts): one model each.
export const DECODE_PRESETS = {
  tiny: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, vocabSize: 280 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
  // Qwen2.5-0.5B's shape (494M parameters, tied embeddings), random weights.
  "qwen2.5-0.5b": {
    hidden: 896,
    layers: 24,
    heads: 14,
    kvHeads: 2,
    headDim: 64,
    intermediate: 4864,
    vocabSize: 151936,
  },
} as const;
export type DecodePreset = keyof typeof DECODE_PRESETS;
