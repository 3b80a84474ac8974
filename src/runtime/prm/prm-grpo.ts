// GRPO with the PRM: per-token advantages from the chains' step scores (core/prm-advantages.ts),
// mapped onto the tokens the policy generated, and the PRM's scores on the sample records the
// reward inspector draws (steps[].prmScore).
import { type AdvantageMode, type GroupAdvantages, groupAdvantages } from "../../core/advantages.ts";
import type { CompareMode } from "../../core/compare.ts";
import { perStepNormAdvantages, prmWeightedAdvantages, type StepAdvantageMode } from "../../core/prm-advantages.ts";
import { stepTokenRows, tokenCharEnds, tokenSteps } from "../../core/prm-steps.ts";
import type { RewardSpec } from "../../core/rewards.ts";
import type { Task } from "../../core/types.ts";
import type { Sample } from "../../model/sampler.ts";
import { executeChain, sampleSteps } from "../cocte-exec.ts";
import type { SampleRecord } from "../records.ts";
import type { SqlRunner } from "../recipe/context.ts";
import type { Scored, Scorer } from "../recipe/scoring.ts";
import type { PrmScored } from "./prm-model.ts";

/** The step scores of a sample laid onto its generated tokens: the step of each token, and the scores of those steps. */
export function stepsOnTokens(
  sample: Pick<Sample, "tokens">,
  prm: PrmScored,
  decode: (ids: readonly number[]) => string,
): { tokenStep: Int32Array; scores: number[] } {
  const { rows, keep } = stepTokenRows(tokenCharEnds(sample.tokens, decode), prm.ends);
  return { tokenStep: tokenSteps(sample.tokens.length, rows), scores: keep.map((k) => prm.scores[k]) };
}

/** The summed weight of the spec's prm components (1 when it has none: the scores enter as they are). */
export function prmWeight(spec: RewardSpec): number {
  const w = spec.components.filter((c) => c.name === "prm").reduce((a, c) => a + c.weight, 0);
  return w === 0 ? 1 : w;
}

/**
 * Per-token advantages of every sample (samples ordered by group, as `adv` flattened them), or
 * undefined where the chain's advantage applies to every token ("chain", no PRM scores, no tokens).
 * "prm-weighted": Reward-SQL's rule on the group advantage; "per-step-norm": DeepSeekMath's
 * normalised step rewards (weight x score) plus the group advantage of the other components.
 */
export function tokenAdvantages(
  mode: StepAdvantageMode,
  samples: readonly Sample[],
  scored: readonly Scored[],
  adv: GroupAdvantages,
  o: { spec: RewardSpec; advantage: AdvantageMode; decode: (ids: readonly number[]) => string },
): (Float64Array | undefined)[] {
  const out: (Float64Array | undefined)[] = samples.map(() => undefined);
  if (mode === "chain") return out;
  const laid = samples.map((s, i) => {
    const prm = scored[i].prm;
    return prm && s.tokens.length > 0 ? stepsOnTokens(s, prm, o.decode) : null;
  });
  if (mode === "prm-weighted") {
    samples.forEach((_, i) => {
      const l = laid[i];
      if (l && l.scores.length) out[i] = prmWeightedAdvantages(adv.advantages[i], l.scores, l.tokenStep);
    });
    return out;
  }
  const w = prmWeight(o.spec);
  const prmPart = (s: Scored) =>
    o.spec.components.reduce((a, c) => a + (c.name === "prm" ? s.reward.weighted[c.label ?? c.name] ?? 0 : 0), 0);
  const groups = new Map<number, number[]>();
  samples.forEach((_, i) => {
    const g = adv.group[i];
    groups.set(g, [...(groups.get(g) ?? []), i]);
  });
  const members = [...groups.values()];
  const outcome = groupAdvantages(members.map((m) => m.map((i) => scored[i].reward.total - prmPart(scored[i]))), {
    mode: o.advantage,
  });
  let at = 0;
  for (const m of members) {
    const chains = m.map((i, k) => ({
      stepRewards: (laid[i]?.scores ?? []).map((s) => w * s),
      tokenStep: laid[i]?.tokenStep ?? new Int32Array(samples[i].tokens.length).fill(-1),
      outcomeAdvantage: outcome.advantages[at + k],
    }));
    const per = perStepNormAdvantages(chains);
    m.forEach((i, k) => (out[i] = samples[i].tokens.length ? per[k] : undefined));
    at += m.length;
  }
  return out;
}

/**
 * The record with the PRM's score on each of its steps: the SQL side's steps when the record has
 * them, else the chain's steps executed here (runtime/cocte-exec.ts); a step's score is the one read
 * at the same end offset.
 */
export async function withPrmSteps(
  record: SampleRecord,
  prm: PrmScored | undefined,
  task: Task,
  scorer: Scorer,
  sql: SqlRunner,
  mode: CompareMode,
): Promise<SampleRecord> {
  if (!prm) return record;
  let steps = record.steps;
  if (!steps) {
    const gold = await scorer.gold(task);
    const source = gold.index
      ? { index: gold.index, result: gold.reply.ok ? gold.reply.result : undefined }
      : { sql: task.gold_sql };
    steps = sampleSteps(await executeChain(sql, task.db_id, record.completion, source, { mode }));
  }
  const out = steps.map((s) => {
    const j = prm.ends.indexOf(s.end);
    return j >= 0 && prm.scores[j] !== undefined ? { ...s, prmScore: prm.scores[j] } : s;
  });
  // An answer with no step to split (no SQL, a plain query the splitter could not place) is one
  // step for the PRM: the answer itself, with the answer's own execution.
  const last = prm.ends.length - 1;
  if (
    last >= 0 && prm.names[last] === null && !steps.some((s) => s.end === prm.ends[last]) &&
    prm.scores[last] !== undefined
  ) {
    out.push({
      name: null,
      sql: record.extraction.sql ?? "",
      end: prm.ends[last],
      error: record.error ??
        (record.extraction.sql === null ? { kind: "empty", message: record.extraction.reason } : null),
      result: record.predicted,
      matchesGold: record.correct,
      prmScore: prm.scores[last],
    });
  }
  return { ...record, steps: out };
}
