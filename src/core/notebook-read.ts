// The strict reader that turns untrusted JSON into cell parameters: defaults, ranges and
// cross-field rules of every cell type, in one place.
import {
  ADVANTAGES,
  type CellParams,
  type CellType,
  COMPARISONS,
  DATASET_FORMATS,
  DATASET_SOURCES,
  type DatasetParams,
  DTYPES,
  EXPORTS,
  GRPO_AGGREGATIONS,
  type GrpoParams,
  type Issue,
  KL_SCHEDULE_KINDS,
  LOGPROB_WEIGHTS,
  LR_SCHEDULE_KINDS,
  MODEL_SOURCES,
  type ModelParams,
  RFT_KEEP,
  SFT_TARGETS,
  VOTES,
  WARMUP_EXPORTS,
  WARMUP_METHODS,
  type WarmupParams,
} from "./notebook-params.ts";
import { readGrpoPrm, readPrmData, readPrmTrain, readSelfConsistencyPrm } from "./notebook-prm.ts";
import { PROMPT_TEMPLATES } from "./prompts.ts";
import { REWARD_PRESETS, type RewardSpec, validateRewardSpec } from "./rewards.ts";

/** True for a plain JSON object (not an array, not null). */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** True when `v` is one of `values` (a type guard for `as const` string lists). */
export function isOneOf<T extends string>(values: readonly T[], v: unknown): v is T {
  return typeof v === "string" && (values as readonly string[]).includes(v);
}

const MAX_TEXT = 100_000;
const MAX_NAME = 500;
/** A typed question (the ask cell). */
const MAX_QUESTION = 2000;

/**
 * Reads typed fields out of an untrusted object: a missing field takes its default, a bad one is
 * an error (and takes its default so reading goes on), fields never read are reported and dropped.
 */
export class Reader {
  private readonly used = new Set<string>();

  constructor(
    private readonly obj: Record<string, unknown>,
    private readonly path: string,
    private readonly errors: Issue[],
    private readonly warnings: Issue[],
  ) {}

  private at(key: string): string {
    return `${this.path}.${key}`;
  }

  private get(key: string): unknown {
    this.used.add(key);
    return Object.hasOwn(this.obj, key) ? this.obj[key] : undefined;
  }

  /** Records an error at `key`. */
  fail(key: string, message: string): void {
    this.errors.push({ path: this.at(key), message });
  }

  /** A finite number in [min, max] (an integer when `int`), or the default. */
  num(key: string, def: number, min: number, max: number, int = false): number {
    return this.optNum(key, min, max, int) ?? def;
  }

  /** An optional finite number in [min, max]. */
  optNum(key: string, min: number, max: number, int = false): number | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== "number" || !Number.isFinite(v)) this.fail(key, `expected a number, got ${show(v)}`);
    else if (int && !Number.isInteger(v)) this.fail(key, `expected an integer, got ${v}`);
    else if (v < min || v > max) this.fail(key, `${v} is outside [${min}, ${max}]`);
    else return v;
    return undefined;
  }

  /** A boolean, or the default. */
  bool(key: string, def: boolean): boolean {
    const v = this.get(key);
    if (v === undefined) return def;
    if (typeof v === "boolean") return v;
    this.fail(key, `expected true or false, got ${show(v)}`);
    return def;
  }

  /** A string of at most `maxLength` characters, or the default. */
  str(key: string, def: string, maxLength = MAX_NAME): string {
    return this.optStr(key, maxLength) ?? def;
  }

  /** An optional string of at most `maxLength` characters. */
  optStr(key: string, maxLength = MAX_NAME): string | undefined {
    const v = this.get(key);
    if (v === undefined) return undefined;
    if (typeof v !== "string") this.fail(key, `expected a string, got ${show(v)}`);
    else if (v.length > maxLength) this.fail(key, `longer than ${maxLength} characters`);
    else return v;
    return undefined;
  }

  /** An optional http(s) or relative URL (never javascript:, data: or another scheme). */
  optUrl(key: string): string | undefined {
    const v = this.optStr(key, 4096);
    if (v === undefined) return undefined;
    let protocol = "";
    try {
      protocol = new URL(v, "https://relative.invalid/").protocol;
    } catch {
      protocol = "";
    }
    if (protocol === "http:" || protocol === "https:") return v;
    this.fail(key, `not an http(s) or relative URL: ${show(v)}`);
    return undefined;
  }

  /** One of `values`, or the default. */
  oneOf<T extends string>(key: string, values: readonly T[], def: T): T {
    const v = this.get(key);
    if (v === undefined) return def;
    if (isOneOf(values, v)) return v;
    this.fail(key, `expected one of ${values.map((x) => JSON.stringify(x)).join(", ")}, got ${show(v)}`);
    return def;
  }

  /** A list of strings (at most `maxItems`, each at most `maxLength`), or the default. */
  strList(key: string, def: readonly string[], maxItems = 64, maxLength = MAX_NAME): string[] {
    const v = this.get(key);
    if (v === undefined) return [...def];
    if (!Array.isArray(v) || !v.every((x): x is string => typeof x === "string")) {
      this.fail(key, "expected a list of strings");
    } else if (v.length > maxItems) this.fail(key, `more than ${maxItems} items`);
    else if (v.some((x) => x.length > maxLength)) this.fail(key, `an item is longer than ${maxLength} characters`);
    else return [...v];
    return [...def];
  }

  /** A prompt template id known to prompts.ts, or the default. */
  template(key: string, def: string): string {
    const v = this.str(key, def, 200);
    if (Object.hasOwn(PROMPT_TEMPLATES, v)) return v;
    this.fail(key, `unknown prompt template ${show(v)} (known: ${Object.keys(PROMPT_TEMPLATES).join(", ")})`);
    return def;
  }

  /** A non-empty list of known prompt template ids, or the default. */
  templates(key: string, def: readonly string[]): string[] {
    const v = this.strList(key, def, 16, 200);
    const unknown = v.filter((t) => !Object.hasOwn(PROMPT_TEMPLATES, t));
    if (unknown.length) {
      this.fail(
        key,
        `unknown prompt templates ${unknown.map(show).join(", ")} (known: ${Object.keys(PROMPT_TEMPLATES).join(", ")})`,
      );
    } else if (v.length === 0) this.fail(key, "needs at least one template");
    else return v;
    return [...def];
  }

  /** A reward spec checked by rewards.ts's validateRewardSpec, or the default preset. */
  rewardSpec(key: string): RewardSpec {
    const v = this.get(key);
    if (v === undefined) return structuredClone(DEFAULT_REWARD);
    try {
      return structuredClone(validateRewardSpec(v));
    } catch (e) {
      this.fail(key, e instanceof Error ? e.message : String(e));
      return structuredClone(DEFAULT_REWARD);
    }
  }

  /** Reports the fields that were never read (they are dropped). */
  finish(): void {
    for (const k of Object.keys(this.obj)) {
      if (!this.used.has(k)) this.warnings.push({ path: this.at(k), message: "unknown field, dropped" });
    }
  }
}

/** A short printable form of an untrusted value for messages; never throws (cycles, bigint, symbols). */
export function show(v: unknown): string {
  let s: string;
  try {
    s = JSON.stringify(v) ?? String(v);
  } catch {
    s = typeof v === "bigint"
      ? `${v}n`
      : Array.isArray(v)
      ? "(a list)"
      : typeof v === "object"
      ? "(an object)"
      : typeof v;
  }
  return s.length > 60 ? s.slice(0, 57) + "..." : s;
}

const SPLIT = 64;
const DEFAULT_TEMPLATE = "omnisql@1";
/** Execution match plus -1 for SQL that is missing or does not parse or run (the Databricks recipe). */
const DEFAULT_REWARD: RewardSpec = REWARD_PRESETS.databricks;

/** The readers of each cell type's parameters. */
export const PARAM_READERS: { readonly [K in CellType]: (r: Reader) => CellParams[K] } = {
  markdown: (r) => ({ source: r.str("source", "", MAX_TEXT) }),
  gpu: () => ({}),
  dataset: (r) => {
    const p: DatasetParams = {
      source: r.oneOf("source", DATASET_SOURCES, "demo"),
      name: r.str("name", "demo"),
      format: r.oneOf("format", DATASET_FORMATS, "spider"),
      dbRoot: r.optUrl("dbRoot"),
      questionsUrl: r.optUrl("questionsUrl"),
      tablesUrl: r.optUrl("tablesUrl"),
      split: r.str("split", "train", SPLIT),
      devFraction: r.num("devFraction", 0.1, 0, 0.9),
      limit: r.optNum("limit", 1, 10_000_000, true),
      seed: r.num("seed", 0, 0, 2 ** 32 - 1, true),
    };
    if (p.source === "url" && !p.questionsUrl) r.fail("questionsUrl", 'required when source is "url"');
    if (p.source === "url" && !p.dbRoot) r.fail("dbRoot", 'required when source is "url"');
    return dropUndefined(p);
  },
  model: (r) => {
    const p: ModelParams = {
      source: r.oneOf("source", MODEL_SOURCES, "demo"),
      repo: r.optStr("repo", 200),
      revision: r.str("revision", "main", 200),
      url: r.optUrl("url"),
      dtype: r.oneOf("dtype", DTYPES, "q4"),
      loraRank: r.num("loraRank", 16, 1, 1024, true),
      loraAlpha: r.num("loraAlpha", 32, 0, 1e6),
      // An emptied form field means "no adapter" (a fresh one).
      adapter: r.optUrl("adapter") || undefined,
    };
    if (p.repo !== undefined && !/^[\w.-]+\/[\w.-]+$/.test(p.repo)) r.fail("repo", 'expected "owner/name"');
    if (p.source === "hub" && p.repo === undefined) r.fail("repo", 'required when source is "hub"');
    if (p.source === "url" && p.url === undefined) r.fail("url", 'required when source is "url"');
    return dropUndefined(p);
  },
  prompt: (r) => ({
    template: r.template("template", DEFAULT_TEMPLATE),
    maxPromptTokens: r.num("maxPromptTokens", 2048, 16, 131072, true),
    examplesPerColumn: r.num("examplesPerColumn", 3, 0, 20, true),
    descriptions: r.bool("descriptions", true),
    evidence: r.bool("evidence", true),
  }),
  reward: (r) => ({ spec: r.rewardSpec("spec"), comparison: r.oneOf("comparison", COMPARISONS, "set") }),
  evaluate: (r) => ({
    split: r.str("split", "dev", SPLIT),
    n: r.num("n", 200, 1, 1e6, true),
    temperature: r.num("temperature", 0, 0, 10),
    topP: r.num("topP", 1, 0.01, 1),
    k: r.num("k", 1, 1, 1024, true),
    maxNewTokens: r.num("maxNewTokens", 256, 1, 32768, true),
    seed: r.num("seed", 0, 0, 2 ** 32 - 1, true),
  }),
  select: (r) => ({
    models: r.strList("models", ["demo"]),
    templates: r.templates("templates", [DEFAULT_TEMPLATE]),
    split: r.str("split", "dev", SPLIT),
    n: r.num("n", 100, 1, 1e6, true),
    maxNewTokens: r.num("maxNewTokens", 256, 1, 32768, true),
  }),
  warmup: (r) => {
    const method = r.oneOf("method", WARMUP_METHODS, "rft");
    const p: WarmupParams = {
      rounds: r.num("rounds", 1, 0, 100, true),
      samplesPerQuestion: r.num("samplesPerQuestion", 8, 1, 1024, true),
      method,
      lr: r.num("lr", 1e-4, 0, 1),
      epochs: r.num("epochs", 1, 1, 100, true),
      temperature: r.num("temperature", 1, 0, 10),
      maxNewTokens: r.num("maxNewTokens", 256, 1, 32768, true),
      dpoBeta: r.num("dpoBeta", 0.1, 0, 100),
      seed: r.num("seed", 0, 0, 2 ** 32 - 1, true),
      // sft samples nothing, so it has nothing to export.
      exportSamples: r.oneOf("exportSamples", WARMUP_EXPORTS, method === "sft" ? "none" : "correct"),
      sampleWithEvidence: r.bool("sampleWithEvidence", false),
      rftKeep: r.oneOf("rftKeep", RFT_KEEP, "better"),
      rftPerQuestion: r.num("rftPerQuestion", 0, 0, 1024, true),
      sftTargets: r.oneOf("sftTargets", SFT_TARGETS, "gold"),
    };
    if (method !== "rft" && p.rftKeep !== "better") {
      r.fail("rftKeep", `rftKeep chooses the samples of method "rft"; ${method} keeps its own (leave it out)`);
    }
    if (method !== "rft" && p.rftPerQuestion !== 0) {
      r.fail(
        "rftPerQuestion",
        `rftPerQuestion caps the samples of method "rft"; ${method} keeps its own (leave it out)`,
      );
    }
    if (method !== "sft" && p.sftTargets !== "gold") {
      r.fail(
        "sftTargets",
        `sftTargets chooses the gold targets of method "sft"; ${method} trains on its samples (leave it out)`,
      );
    }
    if (method === "sft") {
      // samplesPerQuestion, temperature, maxNewTokens and dpoBeta have defaults and are ignored (a form holds them all).
      if (p.exportSamples !== "none") {
        r.fail(
          "exportSamples",
          `method "sft" trains on the dataset's gold answers and samples nothing to export: set exportSamples to "none" (or leave it out)`,
        );
      }
      if (p.sampleWithEvidence) {
        r.fail(
          "sampleWithEvidence",
          `method "sft" samples nothing: sampleWithEvidence must be false (train on the definitions by putting them in the prompt cell's prompts)`,
        );
      }
    }
    return p;
  },
  grpo: (r) => {
    const p: GrpoParams = {
      G: r.num("G", 8, 2, 1024, true),
      lr: r.num("lr", 1e-5, 0, 1),
      lrSchedule: r.oneOf("lrSchedule", LR_SCHEDULE_KINDS, "constant"),
      warmupSteps: r.num("warmupSteps", 0, 0, 1e6, true),
      steps: r.num("steps", 200, 1, 1e7, true),
      batchQuestions: r.num("batchQuestions", 8, 1, 4096, true),
      updatesPerBatch: r.num("updatesPerBatch", 1, 1, 64, true),
      eps_low: r.num("eps_low", 0.2, 0, 0.99),
      eps_high: r.num("eps_high", 0.28, 0, 100),
      kl: r.num("kl", 0, 0, 100),
      klSchedule: r.oneOf("klSchedule", KL_SCHEDULE_KINDS, "constant"),
      aggregation: r.oneOf("aggregation", GRPO_AGGREGATIONS, "token-mean"),
      advantage: r.oneOf("advantage", ADVANTAGES, "mean-std"),
      dropEqualGroups: r.bool("dropEqualGroups", true),
      focusHard: r.bool("focusHard", false),
      skipAfter: r.num("skipAfter", 2, 1, 1000, true),
      revisitFraction: r.num("revisitFraction", 0.25, 0, 1),
      maxNewTokens: r.num("maxNewTokens", 256, 1, 32768, true),
      temperature: r.num("temperature", 1, 0, 10),
      topP: r.num("topP", 1, 0.01, 1),
      maxGradNorm: r.num("maxGradNorm", 1, 0, 1e6),
      evalEvery: r.num("evalEvery", 25, 0, 1e7, true),
      evalN: r.num("evalN", 100, 1, 1e6, true),
      evalSplit: r.str("evalSplit", "", SPLIT),
      seed: r.num("seed", 0, 0, 2 ** 32 - 1, true),
      ...readGrpoPrm(r),
    };
    if (p.warmupSteps > p.steps) r.fail("warmupSteps", `larger than steps (${p.steps})`);
    return p;
  },
  selfconsistency: (r) => ({
    N: r.num("N", 8, 1, 1024, true),
    vote: r.oneOf("vote", VOTES, "count"),
    logprobWeight: r.oneOf("logprobWeight", LOGPROB_WEIGHTS, "exp-mean"),
    temperature: r.num("temperature", 0.8, 0, 10),
    split: r.str("split", "dev", SPLIT),
    n: r.num("n", 200, 1, 1e6, true),
    maxNewTokens: r.num("maxNewTokens", 256, 1, 32768, true),
    comparison: r.oneOf("comparison", COMPARISONS, "set"),
    ...readSelfConsistencyPrm(r),
  }),
  prmdata: readPrmData,
  prmtrain: readPrmTrain,
  export: (r) => ({ what: r.oneOf("what", EXPORTS, "adapter") }),
  ask: (r) => ({
    question: r.str("question", "", MAX_QUESTION),
    db: r.str("db", "shop"),
    stage: r.str("stage", ""),
    maxNewTokens: r.num("maxNewTokens", 160, 1, 32768, true),
  }),
};

/** Reads one cell type's parameters from untrusted JSON at `path`, defaults filled in. */
export function readParams<K extends CellType>(
  type: K,
  raw: unknown,
  path: string,
  errors: Issue[],
  warnings: Issue[],
): CellParams[K] {
  if (raw !== undefined && !isRecord(raw)) errors.push({ path, message: "expected an object" });
  const r = new Reader(isRecord(raw) ? raw : {}, path, errors, warnings);
  const params = PARAM_READERS[type](r);
  r.finish();
  return params;
}

/** The default parameters of a cell type. */
export function defaultParams<K extends CellType>(type: K): CellParams[K] {
  return readParams(type, {}, "params", [], []);
}

/** Validates parameters for a cell type (e.g. a form's values): typed parameters or the problems. */
export function validateParams<K extends CellType>(
  type: K,
  raw: unknown,
): { ok: true; params: CellParams[K]; warnings: Issue[] } | { ok: false; errors: Issue[] } {
  const errors: Issue[] = [];
  const warnings: Issue[] = [];
  const params = readParams(type, raw, "params", errors, warnings);
  return errors.length ? { ok: false, errors } : { ok: true, params, warnings };
}

// Optional fields that were absent stay absent (not `key: undefined`), so documents round-trip exactly.
function dropUndefined<T extends object>(x: T): T {
  for (const [k, v] of Object.entries(x)) if (v === undefined) Reflect.deleteProperty(x, k);
  return x;
}
