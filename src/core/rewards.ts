// Reward components, each reported on its own, combined by a declarative spec (plain JSON, so a
// notebook cell carries it and a shared link reproduces it).
import type { Extraction } from "./extract.ts";
import { formatCheck } from "./extract.ts";
import { aggregateStepScores, PRM_AGGREGATES, type PrmAggregate } from "./prm-steps.ts";
import type { ExecErrorKind, ExecOutcome } from "./types.ts";

/** The component names a spec may use. */
export const REWARD_COMPONENTS = [
  "execution",
  "error_penalty",
  "executable_credit",
  "format",
  "soft_format",
  "length",
  "prm",
] as const;
export type RewardComponentName = (typeof REWARD_COMPONENTS)[number];

/** One weighted component; `label` names it in the report when one component is used twice. */
export interface RewardComponentSpec {
  name: RewardComponentName;
  weight: number;
  params?: Record<string, unknown>;
  label?: string;
}

/** A reward: the weighted sum of its components. */
export interface RewardSpec {
  components: RewardComponentSpec[];
}

/** What one sample is scored on. `outcome` is null when no SQL was extracted (nothing ran). */
export interface RewardInput {
  completion: string;
  completionTokens: number;
  extraction: Extraction;
  outcome: ExecOutcome | null;
  /**
   * The process reward model's score of each step of the completion (docs/prm.md), needed by the
   * `prm` component only; an empty list for an empty completion.
   */
  prmScores?: readonly number[];
}

/** The score of one sample: raw component values, their weighted contributions, and the total. */
export interface RewardScore {
  total: number;
  /** Unweighted value per component (label or name). */
  components: Record<string, number>;
  /** weight x value per component; these sum to `total`. */
  weighted: Record<string, number>;
}

const ALL_KINDS: readonly ExecErrorKind[] = ["syntax", "runtime", "timeout", "capped", "forbidden", "empty", "worker"];
const DEFAULT_PENALTY_KINDS: readonly ExecErrorKind[] = ["syntax", "runtime", "forbidden", "empty"];

type Params = Record<string, unknown>;
type Scorer = (x: RewardInput) => number;

// Each component: its parameters (name -> check) and a factory from validated params to a scorer.
const COMPONENTS: Record<
  RewardComponentName,
  { params: Record<string, (v: unknown) => boolean>; make: (p: Params) => Scorer }
> = {
  // 1 when the predicted result matches the gold result, else 0.
  execution: {
    params: {},
    make: () => (x) => (x.extraction.sql !== null && needOutcome(x).correct ? 1 : 0),
  },
  // `value` (-1) when no SQL was found or it failed with one of `kinds`: the Databricks recipe's penalty.
  error_penalty: {
    params: { value: isNumber, kinds: isKinds, noSql: isBoolean },
    make: (p) => {
      const value = num(p.value, -1);
      const kinds = new Set(Array.isArray(p.kinds) ? p.kinds : DEFAULT_PENALTY_KINDS);
      const noSql = p.noSql !== false;
      return (x) => {
        if (x.extraction.sql === null) return noSql ? value : 0;
        const err = needOutcome(x).error;
        return err !== null && kinds.has(err.kind) ? value : 0;
      };
    },
  },
  // Arctic-Text2SQL-R1: `correct` (1) when right, `executed` (0.1) when it ran cleanly but was wrong, else 0.
  executable_credit: {
    params: { correct: isNumber, executed: isNumber },
    make: (p) => {
      const correct = num(p.correct, 1);
      const executed = num(p.executed, 0.1);
      return (x) => {
        if (x.extraction.sql === null) return 0;
        const o = needOutcome(x);
        return o.correct ? correct : o.error === null ? executed : 0;
      };
    },
  },
  // `value` (1) when the completion is exactly <think>…</think><answer>…</answer> (see formatCheck).
  format: {
    params: { tags: isTags, prefix: isString, value: isNumber },
    make: (p) => {
      const { tags, prefix } = formatArgs(p);
      const value = num(p.value, 1);
      return (x) => (formatCheck(x.completion, tags, prefix).strict ? value : 0);
    },
  },
  // `value` (0.5) when the tags are present and in order, whatever surrounds them.
  soft_format: {
    params: { tags: isTags, prefix: isString, value: isNumber },
    make: (p) => {
      const { tags, prefix } = formatArgs(p);
      const value = num(p.value, 0.5);
      return (x) => (formatCheck(x.completion, tags, prefix).soft ? value : 0);
    },
  },
  // The PRM's step scores made one (Reward-SQL's GRPO reward: their mean); 0 for a completion without steps.
  prm: {
    params: { aggregate: (v) => PRM_AGGREGATES.some((a) => a === v) },
    make: (p) => {
      const how: PrmAggregate = PRM_AGGREGATES.find((a) => a === p.aggregate) ?? "mean";
      return (x) => {
        if (!x.prmScores) {
          throw new Error("reward: the prm component needs the PRM's step scores (a PRM train cell before this cell)");
        }
        return x.prmScores.length ? aggregateStepScores(x.prmScores, how) : 0;
      };
    },
  },
  // `value` (-0.5) when the completion is longer than `maxTokens` tokens (required).
  length: {
    params: { maxTokens: isCount, value: isNumber },
    make: (p) => {
      if (!isCount(p.maxTokens)) {
        throw new Error('reward component "length" needs params.maxTokens (a non-negative integer)');
      }
      const max = p.maxTokens;
      const value = num(p.value, -0.5);
      return (x) => (x.completionTokens > max ? value : 0);
    },
  },
};

/** Ready-made specs: "databricks" (execution, -1 on errors), "arctic" (1 / 0.1 / 0), "reasoning-r1" (execution, strict format, length). */
export const REWARD_PRESETS: Readonly<Record<"databricks" | "arctic" | "reasoning-r1", RewardSpec>> = {
  databricks: { components: [{ name: "execution", weight: 1 }, { name: "error_penalty", weight: 1 }] },
  arctic: { components: [{ name: "executable_credit", weight: 1 }] },
  "reasoning-r1": {
    components: [
      { name: "execution", weight: 1 },
      { name: "format", weight: 1, params: { tags: ["think", "answer"] } },
      { name: "length", weight: 1, params: { maxTokens: 1024 } },
    ],
  },
};

/** Checks a spec read from JSON and returns it typed; every problem is a clear error. */
export function validateRewardSpec(spec: unknown): RewardSpec {
  if (!isObject(spec) || !Array.isArray(spec.components)) {
    throw new Error("reward spec: expected { components: [...] }");
  }
  if (spec.components.length === 0) throw new Error("reward spec: no components");
  const seen = new Set<string>();
  const components = spec.components.map((c: unknown, i): RewardComponentSpec => {
    if (!isObject(c)) throw new Error(`reward spec: component ${i} is not an object`);
    const { name, weight, params, label } = c;
    if (!isComponentName(name)) {
      throw new Error(
        `reward spec: unknown reward component ${JSON.stringify(name)} (known: ${REWARD_COMPONENTS.join(", ")})`,
      );
    }
    if (!isNumber(weight)) throw new Error(`reward spec: component "${name}" needs a finite numeric weight`);
    if (label !== undefined && (typeof label !== "string" || label === "")) {
      throw new Error(`reward spec: component "${name}" has a bad label`);
    }
    if (params !== undefined && !isObject(params)) {
      throw new Error(`reward spec: params of "${name}" must be an object`);
    }
    const checks = COMPONENTS[name].params;
    for (const [k, v] of Object.entries(params ?? {})) {
      // Own keys only: "constructor" or "toString" must not find Object.prototype's members.
      const check = Object.hasOwn(checks, k) ? checks[k] : undefined;
      if (!check) {
        const known = Object.keys(checks);
        throw new Error(
          `reward spec: "${name}" has no parameter "${k}" (known: ${known.length ? known.join(", ") : "none"})`,
        );
      }
      if (!check(v)) throw new Error(`reward spec: "${name}" parameter "${k}" has a bad value ${JSON.stringify(v)}`);
    }
    const key = label ?? name;
    if (seen.has(key)) throw new Error(`reward spec: component "${key}" appears twice (give one a label)`);
    seen.add(key);
    COMPONENTS[name].make(params ?? {}); // surfaces missing required parameters now, not at the first sample
    return { name, weight, ...(params ? { params: { ...params } } : {}), ...(label ? { label } : {}) };
  });
  return { components };
}

/** Validates `spec` once and returns a scorer for many samples. */
export function compileRewardSpec(spec: unknown): (x: RewardInput) => RewardScore {
  const valid = validateRewardSpec(spec);
  const parts = valid.components.map((c) => ({
    key: c.label ?? c.name,
    weight: c.weight,
    score: COMPONENTS[c.name].make(c.params ?? {}),
  }));
  return (x) => {
    const components: Record<string, number> = {};
    const weighted: Record<string, number> = {};
    let total = 0;
    for (const p of parts) {
      const v = p.score(x);
      components[p.key] = v;
      weighted[p.key] = p.weight * v;
      total += p.weight * v;
    }
    return { total, components, weighted };
  };
}

/** True when the spec has a `prm` component (scoring then needs the PRM's step scores). */
export function usesPrm(spec: RewardSpec): boolean {
  return spec.components.some((c) => c.name === "prm");
}

/** Scores one sample under `spec`. */
export function scoreSample(spec: RewardSpec, x: RewardInput): RewardScore {
  return compileRewardSpec(spec)(x);
}

function needOutcome(x: RewardInput): ExecOutcome {
  if (x.outcome === null) throw new Error("reward: SQL was extracted but no execution outcome was given");
  return x.outcome;
}

function formatArgs(p: Params): { tags: string[]; prefix: string } {
  return { tags: isTags(p.tags) ? p.tags : ["think", "answer"], prefix: typeof p.prefix === "string" ? p.prefix : "" };
}

function num(v: unknown, dflt: number): number {
  return isNumber(v) ? v : dflt;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isNumber(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

function isCount(v: unknown): v is number {
  return isNumber(v) && Number.isInteger(v) && v >= 0;
}

function isBoolean(v: unknown): v is boolean {
  return typeof v === "boolean";
}

function isString(v: unknown): v is string {
  return typeof v === "string";
}

function isTags(v: unknown): v is string[] {
  return Array.isArray(v) && v.length > 0 && v.every((t) => typeof t === "string" && /^[A-Za-z][\w-]*$/.test(t));
}

function isKinds(v: unknown): v is ExecErrorKind[] {
  return Array.isArray(v) && v.every((k) => ALL_KINDS.some((a) => a === k));
}

function isComponentName(v: unknown): v is RewardComponentName {
  return REWARD_COMPONENTS.some((n) => n === v);
}
