// How well step scores match step labels: accuracy at 0.5, ROC AUC, BCE, and whether the first
// step scored under 0.5 is the labelled first error. Pure float64 math.

/** Area under the ROC curve of `scores` against 0/1 `labels` (ties count half; NaN when one class is absent). */
export function rocAuc(scores: readonly number[], labels: readonly number[]): number {
  const idx = scores.map((_, i) => i).sort((a, b) => scores[a] - scores[b]);
  // Mann-Whitney U over average ranks.
  const ranks = new Float64Array(scores.length);
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j + 1 < idx.length && scores[idx[j + 1]] === scores[idx[i]]) j++;
    for (let k = i; k <= j; k++) ranks[idx[k]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  let pos = 0, sum = 0;
  labels.forEach((y, i) => {
    if (y >= 0.5) {
      pos++;
      sum += ranks[i];
    }
  });
  const neg = labels.length - pos;
  if (pos === 0 || neg === 0) return NaN;
  return (sum - (pos * (pos + 1)) / 2) / (pos * neg);
}

/** Held-out figures of step scores: per chain its scores and labels (same length, in step order). */
export function prmFigures(
  chains: readonly { scores: readonly number[]; labels: readonly number[] }[],
): { chains: number; steps: number; accuracy: number; auc: number; bce: number; firstError: number } {
  const s: number[] = [], y: number[] = [];
  let right = 0, bce = 0, negChains = 0, found = 0;
  for (const c of chains) {
    c.labels.forEach((l, k) => {
      const p = Math.min(1 - 1e-12, Math.max(1e-12, c.scores[k]));
      s.push(p);
      y.push(l);
      if ((p >= 0.5 ? 1 : 0) === (l >= 0.5 ? 1 : 0)) right++;
      bce -= l * Math.log(p) + (1 - l) * Math.log(1 - p);
    });
    const fe = c.labels.findIndex((l) => l < 0.5);
    if (fe >= 0) {
      negChains++;
      if (c.scores.findIndex((p) => p < 0.5) === fe) found++;
    }
  }
  const n = s.length;
  return {
    chains: chains.length,
    steps: n,
    accuracy: n ? right / n : NaN,
    auc: rocAuc(s, y),
    bce: n ? bce / n : NaN,
    firstError: negChains ? found / negChains : NaN,
  };
}
