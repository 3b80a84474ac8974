// The random model shapes the suites time (tied embeddings; the demo tokenizer's 8,192 ids fit every one), so the
// decode suite's processes (suites/decode-ours.ts, decode-tjs.ts) and the grpo-step suite time the same models.
export const SHAPES = {
  tiny: { hidden: 48, layers: 2, heads: 6, kvHeads: 2, headDim: 8, intermediate: 72, vocabSize: 8192 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
  demo: { hidden: 384, layers: 8, heads: 6, kvHeads: 2, headDim: 64, intermediate: 1024, vocabSize: 8192 },
  // Qwen2.5-0.5B's shape (494M parameters), random weights.
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
export type Shape = keyof typeof SHAPES;
