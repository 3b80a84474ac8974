// The GRPO-family policy loss as float64 math on arrays: the CPU reference for the GPU trainer,
// with the closed-form gradient dL/dlogp_t that the trainer feeds into its backward pass.
// Formulas and the meaning of each knob: docs/recipe.md.
//
// Shapes: S sequences (completions), T token positions per sequence (padded), row-major (S, T).

/** How per-token losses become one number (verl's `loss_agg_mode` names). */
export const AGGREGATIONS = ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"] as const;
export type Aggregation = (typeof AGGREGATIONS)[number];

/** How the KL coefficient moves over training. */
export const KL_SCHEDULES = ["constant", "linear", "cosine", "off"] as const;
export type KlScheduleKind = (typeof KL_SCHEDULES)[number];

/** How the learning rate decays after warm-up. */
export const LR_DECAYS = ["constant", "linear", "cosine"] as const;
export type LrDecay = (typeof LR_DECAYS)[number];

/** One batch of completions with per-token log-probabilities. */
export interface GrpoBatch {
  /** Sequences. */
  S: number;
  /** Token positions per sequence (the padded completion length). */
  T: number;
  /** (S, T) log pi_theta(y_t | ...) under the policy being optimised; the loss is differentiated in these. */
  logpNew: ArrayLike<number>;
  /** (S, T) log-probs under the policy that sampled the batch; equal to logpNew on the first update. */
  logpOld: ArrayLike<number>;
  /** (S, T) log-probs under the frozen reference policy; needed only when beta > 0. */
  logpRef?: ArrayLike<number>;
  /** (S, T) 1 for completion tokens that count, 0 for padding (and for dropped groups). */
  mask: ArrayLike<number>;
  /** (S) one advantage per sequence, or (S, T) one per token. */
  advantages: ArrayLike<number>;
}

/** Knobs of the loss. */
export interface GrpoLossOptions {
  /** Lower clip: ratios below 1 - epsLow stop pulling a negative-advantage token down (0.2). */
  epsLow: number;
  /** Upper clip: ratios above 1 + epsHigh stop pushing a positive-advantage token up (0.2; DAPO 0.28). */
  epsHigh: number;
  /** KL coefficient (after its schedule, see `klCoefficient`); 0 leaves the reference out. */
  beta: number;
  aggregation: Aggregation;
  /**
   * Divisor of "seq-mean-token-sum-norm" (Dr. GRPO). Default T * S: the generation budget times
   * the number of sequences, a constant independent of the completions' lengths.
   */
  normConstant?: number;
}

/** Batch statistics over the masked tokens (each token weighs the same, whatever the aggregation). */
export interface GrpoMetrics {
  /** Masked tokens. */
  tokens: number;
  /** Fraction of tokens where the lower clip is active (A < 0 and r < 1 - epsLow): no gradient. */
  clipLowFrac: number;
  /** Fraction of tokens where the upper clip is active (A > 0 and r > 1 + epsHigh): no gradient. */
  clipHighFrac: number;
  /** clipLowFrac + clipHighFrac. */
  clipFrac: number;
  /** Mean of k3 of the importance ratio, (r - 1) - log r: estimates KL(pi_old || pi_theta). */
  approxKl: number;
  /** Mean of k3 to the reference, exp(ref - new) - (ref - new) - 1 (0 without logpRef). */
  klRef: number;
  /** Mean, smallest and largest importance ratio r = exp(new - old). */
  ratioMean: number;
  ratioMin: number;
  ratioMax: number;
}

/** The loss, its parts, its gradient and the batch metrics. */
export interface GrpoLossResult {
  /** pgLoss + beta * klLoss. */
  loss: number;
  /** The aggregated clipped surrogate, negated (minimised). */
  pgLoss: number;
  /** The aggregated k3 KL to the reference (0 without logpRef). */
  klLoss: number;
  /** (S, T) dL/dlogpNew for every token; 0 at masked-out positions. */
  grad: Float64Array;
  metrics: GrpoMetrics;
}

/** k3 estimator of KL(pi || pi_ref) at one token sampled from pi: exp(d) - d - 1 with d = ref - new. */
export function k3(logpNew: number, logpRef: number): number {
  const d = logpRef - logpNew;
  return Math.exp(d) - d - 1;
}

/**
 * The per-token aggregation weights w (S, T) such that the batch loss is sum_{s,t} w_st * l_st.
 * token-mean: m / sum(m); seq-mean-token-mean: m / (n_s * S'), n_s = tokens of sequence s, S' =
 * sequences with n_s > 0; seq-mean-token-sum-norm: m / C (C = normConstant, default T * S).
 */
export function aggregationWeights(
  S: number,
  T: number,
  mask: ArrayLike<number>,
  aggregation: Aggregation,
  normConstant?: number,
): Float64Array {
  const w = new Float64Array(S * T);
  switch (aggregation) {
    case "token-mean": {
      let n = 0;
      for (let i = 0; i < S * T; i++) n += mask[i];
      if (n > 0) { for (let i = 0; i < S * T; i++) w[i] = mask[i] / n; }
      return w;
    }
    case "seq-mean-token-mean": {
      const ns = new Float64Array(S);
      let sPrime = 0;
      for (let s = 0; s < S; s++) {
        for (let t = 0; t < T; t++) ns[s] += mask[s * T + t];
        if (ns[s] > 0) sPrime++;
      }
      for (let s = 0; s < S; s++) {
        if (ns[s] > 0) { for (let t = 0; t < T; t++) w[s * T + t] = mask[s * T + t] / (ns[s] * sPrime); }
      }
      return w;
    }
    case "seq-mean-token-sum-norm": {
      const c = normConstant ?? T * S;
      if (!(c > 0)) throw new Error(`aggregationWeights: normConstant must be > 0, got ${c}`);
      for (let i = 0; i < S * T; i++) w[i] = mask[i] / c;
      return w;
    }
    default:
      return assertNever(aggregation);
  }
}

/**
 * The clipped-surrogate loss with separate lower/upper clips, optional k3 KL to the reference,
 * the chosen aggregation, its gradient with respect to every logpNew, and the batch metrics.
 * Per token: l_t = -min(r A, clip(r, 1 - epsLow, 1 + epsHigh) A) + beta * k3(new, ref), r = exp(new - old).
 */
export function grpoLoss(batch: GrpoBatch, opts: GrpoLossOptions): GrpoLossResult {
  const { S, T, logpNew, logpOld, logpRef, mask, advantages } = batch;
  const n = S * T;
  for (const [name, a] of [["logpNew", logpNew], ["logpOld", logpOld], ["mask", mask]] as const) {
    if (a.length !== n) throw new Error(`grpoLoss: ${name} has ${a.length} elements, expected S * T = ${n}`);
  }
  if (logpRef && logpRef.length !== n) {
    throw new Error(`grpoLoss: logpRef has ${logpRef.length} elements, expected ${n}`);
  }
  if (advantages.length !== S && advantages.length !== n) {
    throw new Error(`grpoLoss: advantages must have S or S * T elements, got ${advantages.length}`);
  }
  if (opts.beta !== 0 && !logpRef) throw new Error("grpoLoss: beta > 0 needs logpRef");
  if (!(opts.epsLow >= 0 && opts.epsLow < 1 && opts.epsHigh >= 0)) {
    throw new Error(`grpoLoss: bad clip range epsLow ${opts.epsLow}, epsHigh ${opts.epsHigh}`);
  }
  const perToken = advantages.length === n && n !== S;
  const lo = 1 - opts.epsLow;
  const hi = 1 + opts.epsHigh;
  const w = aggregationWeights(S, T, mask, opts.aggregation, opts.normConstant);
  const grad = new Float64Array(n);
  let pg = 0;
  let kl = 0;
  let tokens = 0, clipLow = 0, clipHigh = 0, approxKl = 0, klRef = 0, ratioSum = 0;
  let ratioMin = Infinity, ratioMax = -Infinity;
  for (let s = 0; s < S; s++) {
    for (let t = 0; t < T; t++) {
      const i = s * T + t;
      const m = mask[i];
      if (m === 0) continue;
      const A = perToken ? advantages[i] : advantages[s];
      const logRatio = logpNew[i] - logpOld[i];
      const r = Math.exp(logRatio);
      // -min(rA, clip(r)A): the clipped branch is taken (and has no gradient) only where the clip
      // bites in the direction the advantage pushes; at exact boundaries the unclipped branch wins.
      const highActive = A > 0 && r > hi;
      const lowActive = A < 0 && r < lo;
      const surrogate = highActive ? hi * A : lowActive ? lo * A : r * A;
      let dl = highActive || lowActive ? 0 : -A * r; // d(-surrogate)/dlogpNew, dr/dlogp = r
      pg += w[i] * -surrogate;
      if (logpRef) {
        const d = logpRef[i] - logpNew[i];
        const e = Math.exp(d);
        const k = e - d - 1;
        klRef += m * k;
        if (opts.beta !== 0) {
          kl += w[i] * k;
          dl += opts.beta * (1 - e); // d k3 / dlogpNew = -exp(d) + 1
        }
      }
      grad[i] = w[i] * dl;
      tokens += m;
      if (lowActive) clipLow += m;
      if (highActive) clipHigh += m;
      approxKl += m * (r - 1 - logRatio);
      ratioSum += m * r;
      ratioMin = Math.min(ratioMin, r);
      ratioMax = Math.max(ratioMax, r);
    }
  }
  const per = (x: number) => (tokens > 0 ? x / tokens : 0);
  return {
    loss: pg + opts.beta * kl,
    pgLoss: pg,
    klLoss: kl,
    grad,
    metrics: {
      tokens,
      clipLowFrac: per(clipLow),
      clipHighFrac: per(clipHigh),
      clipFrac: per(clipLow + clipHigh),
      approxKl: per(approxKl),
      klRef: per(klRef),
      ratioMean: per(ratioSum),
      ratioMin: tokens > 0 ? ratioMin : 1,
      ratioMax: tokens > 0 ? ratioMax : 1,
    },
  };
}

/** Mask-weighted mean of a per-token quantity (S, T), e.g. the entropy metric; 0 with no tokens. */
export function maskedMean(values: ArrayLike<number>, mask: ArrayLike<number>): number {
  if (values.length !== mask.length) {
    throw new Error(`maskedMean: ${values.length} values for ${mask.length} mask entries`);
  }
  let sum = 0;
  let n = 0;
  for (let i = 0; i < values.length; i++) {
    if (mask[i] === 0) continue;
    sum += mask[i] * values[i];
    n += mask[i];
  }
  return n > 0 ? sum / n : 0;
}

/** Mean per-token entropy (nats) over the masked tokens, from per-token entropies (S, T). */
export function entropyMean(entropies: ArrayLike<number>, mask: ArrayLike<number>): number {
  return maskedMean(entropies, mask);
}

/** Entropy in nats of softmax(logits / temperature) for one row of logits (V): logsumexp(z) - sum p z. */
export function entropyFromLogits(logits: ArrayLike<number>, temperature = 1): number {
  let max = -Infinity;
  for (let i = 0; i < logits.length; i++) max = Math.max(max, logits[i] / temperature);
  let z = 0;
  let pz = 0;
  for (let i = 0; i < logits.length; i++) {
    const x = logits[i] / temperature - max;
    const e = Math.exp(x);
    z += e;
    pz += e * x;
  }
  return Math.log(z) - pz / z;
}

/** Learning-rate schedule: linear warm-up, then constant, linear or cosine decay to minRatio * base. */
export interface LrSchedule {
  base: number;
  warmupSteps: number;
  totalSteps: number;
  decay: LrDecay;
  /** The floor as a fraction of base (default 0). */
  minRatio?: number;
}

/**
 * The learning rate of optimiser step `step` (0-based). Warm-up: base * (step + 1) / warmupSteps,
 * so the first step already moves (Hugging Face's schedules use step / warmupSteps and waste it).
 * Then progress p = (step - warmupSteps) / (totalSteps - warmupSteps), clamped to [0, 1]:
 * linear: min + (1 - min)(1 - p); cosine: min + (1 - min)(1 + cos(pi p)) / 2; times base.
 */
export function learningRate(step: number, s: LrSchedule): number {
  if (step < s.warmupSteps) return (s.base * (step + 1)) / s.warmupSteps;
  const min = s.minRatio ?? 0;
  const span = s.totalSteps - s.warmupSteps;
  const p = span > 0 ? Math.min(1, Math.max(0, (step - s.warmupSteps) / span)) : 1;
  switch (s.decay) {
    case "constant":
      return s.base;
    case "linear":
      return s.base * (min + (1 - min) * (1 - p));
    case "cosine":
      return s.base * (min + ((1 - min) * (1 + Math.cos(Math.PI * p))) / 2);
    default:
      return assertNever(s.decay);
  }
}

/** KL coefficient schedule: beta at step 0 moving to `final` (default 0) at totalSteps. */
export interface KlSchedule {
  beta: number;
  schedule: KlScheduleKind;
  totalSteps: number;
  final?: number;
}

/**
 * The KL coefficient at step `step` (0-based), with p = min(1, step / totalSteps):
 * constant: beta; linear: beta + (final - beta) p; cosine: final + (beta - final)(1 + cos(pi p)) / 2; off: 0.
 */
export function klCoefficient(step: number, s: KlSchedule): number {
  const final = s.final ?? 0;
  const p = s.totalSteps > 0 ? Math.min(1, Math.max(0, step / s.totalSteps)) : 1;
  switch (s.schedule) {
    case "off":
      return 0;
    case "constant":
      return s.beta;
    case "linear":
      return s.beta + (final - s.beta) * p;
    case "cosine":
      return final + ((s.beta - final) * (1 + Math.cos(Math.PI * p))) / 2;
    default:
      return assertNever(s.schedule);
  }
}

function assertNever(x: never): never {
  throw new Error(`unexpected value ${String(x)}`);
}
