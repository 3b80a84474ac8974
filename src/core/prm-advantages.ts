// Step-level advantages for GRPO with a process reward model (docs/prm.md, "GRPO with the PRM").
// A chain's completion tokens are grouped into steps (prm-steps.ts tokenSteps); each step j has
// the PRM's score s_j in [0, 1]. Float64 math on arrays; the trainer takes the per-token values.

/** How a chain's advantage reaches its tokens. */
export const STEP_ADVANTAGES = ["chain", "prm-weighted", "per-step-norm"] as const;
export type StepAdvantageMode = (typeof STEP_ADVANTAGES)[number];

/**
 * Reward-SQL's rule: the chain's group advantage A, shared among its tokens in proportion to u_j,
 * with u_j = s_j when A > 0 (well-scored steps take more of a good chain's credit) and
 * u_j = 1 - s_j when A < 0 (badly scored steps take more of a bad chain's blame):
 *   A_t = A * u_{j(t)} * n / sum_t' u_{j(t')}      (n the completion's tokens)
 * so the chain's summed token advantage stays A * n, as with a uniform A. A = 0, no steps, or
 * sum u = 0 give the uniform A.
 */
export function prmWeightedAdvantages(
  A: number,
  stepScores: readonly number[],
  tokenStep: ArrayLike<number>,
): Float64Array {
  const n = tokenStep.length;
  const out = new Float64Array(n).fill(A);
  if (A === 0 || stepScores.length === 0 || n === 0) return out;
  const u = stepScores.map((s) => {
    if (!(s >= 0 && s <= 1)) throw new Error(`prmWeightedAdvantages: step score ${s} outside [0, 1]`);
    return A > 0 ? s : 1 - s;
  });
  let total = 0;
  for (let t = 0; t < n; t++) total += u[tokenStep[t]] ?? 0;
  if (!(total > 0)) return out;
  for (let t = 0; t < n; t++) out[t] = (A * (u[tokenStep[t]] ?? 0) * n) / total;
  return out;
}

/** One chain of a group for the per-step normalisation. */
export interface ProcessChain {
  /** The PRM's score of each step (times the prm component's weight). */
  stepRewards: readonly number[];
  /** The step of each completion token (tokenSteps). */
  tokenStep: ArrayLike<number>;
  /** The chain's group advantage of the other reward components (its outcome part), added to every token. */
  outcomeAdvantage: number;
}

/**
 * DeepSeekMath's process supervision (Shao et al. 2024, section 4.1.3): the step rewards of every
 * chain in the group are normalised together, r~ = (r - mean) / (std + epsilon) (std with G - 1,
 * as the outcome advantages), and a token's advantage is the sum of the normalised rewards of its
 * own step and the steps after it; here the chain's outcome advantage is added. Reward-SQL reports
 * this variant is hacked towards short chains: a chain with fewer steps sums fewer negative terms.
 */
export function perStepNormAdvantages(group: readonly ProcessChain[], epsilon = 1e-6): Float64Array[] {
  const all = group.flatMap((c) => [...c.stepRewards]);
  for (const r of all) {
    if (!Number.isFinite(r)) throw new Error(`perStepNormAdvantages: step reward ${r} is not finite`);
  }
  const mean = all.length ? all.reduce((a, b) => a + b, 0) / all.length : 0;
  const ss = all.reduce((a, r) => a + (r - mean) ** 2, 0);
  const std = all.length > 1 ? Math.sqrt(ss / (all.length - 1)) : 0;
  return group.map((c) => {
    const norm = c.stepRewards.map((r) => (std > 0 ? (r - mean) / (std + epsilon) : 0));
    // suffix[j] = sum of the normalised rewards of steps j, j+1, ...
    const suffix = new Float64Array(norm.length + 1);
    for (let j = norm.length - 1; j >= 0; j--) suffix[j] = suffix[j + 1] + norm[j];
    const out = new Float64Array(c.tokenStep.length);
    for (let t = 0; t < out.length; t++) {
      const j = c.tokenStep[t];
      out[t] = c.outcomeAdvantage + (j >= 0 ? suffix[j] : 0);
    }
    return out;
  });
}
