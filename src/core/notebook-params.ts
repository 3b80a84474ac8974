// The parameters of each notebook cell type. Defaults, ranges and validation live in
// notebook-read.ts (a cell's defaults are what the reader makes of `{}`). Meaning of the RL knobs:
// docs/recipe.md.
import type { RewardSpec } from "./rewards.ts";

/** A problem found while reading a document, at a JSON path like `cells[2].params.lr`. */
export interface Issue {
  path: string;
  message: string;
}

export const CELL_TYPES = [
  "markdown",
  "gpu",
  "dataset",
  "model",
  "prompt",
  "reward",
  "evaluate",
  "select",
  "warmup",
  "grpo",
  "selfconsistency",
  "prmdata",
  "prmtrain",
  "export",
  "ask",
] as const;
export type CellType = (typeof CELL_TYPES)[number];

export const DATASET_SOURCES = ["demo", "url", "upload"] as const;
export const DATASET_FORMATS = ["spider", "bird", "rlvr"] as const;
export const MODEL_SOURCES = ["demo", "hub", "url"] as const;
export const DTYPES = ["f32", "f16", "q4"] as const;
export const COMPARISONS = ["set", "bag", "ordered"] as const;
/** rft / awpg / dpo sample answers and train on them; sft trains on the dataset's gold answers (a record's `completion`, else the gold in the template's answer format). */
export const WARMUP_METHODS = ["rft", "awpg", "dpo", "sft"] as const;
/** Which scored warm-up samples each round writes to `warmup/<cell>/round-<k>.jsonl`. */
export const WARMUP_EXPORTS = ["correct", "all", "none"] as const;
/** Which of its samples an rft round trains on: "better" (correct, or above its group's mean reward) or "correct" only. */
export const RFT_KEEP = ["better", "correct"] as const;
/** What an sft warm-up trains where a record has no `completion`: the gold SQL in the template's answer format, or the gold rewritten as a verified chain of CTEs. */
export const SFT_TARGETS = ["gold", "cocte"] as const;
export const GRPO_AGGREGATIONS = ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum-norm"] as const;
export const ADVANTAGES = ["mean-std", "mean"] as const;
export const KL_SCHEDULE_KINDS = ["constant", "linear", "cosine", "off"] as const;
export const LR_SCHEDULE_KINDS = ["constant", "linear", "cosine"] as const;
export const VOTES = ["count", "logprob"] as const;
export const LOGPROB_WEIGHTS = ["softmax", "exp-mean"] as const;
export const EXPORTS = ["adapter", "metrics", "samples", "notebook"] as const;
/** What a PRM train cell learns: a label per step (a process reward model) or one per chain (an outcome reward model). */
export const PRM_LABELS = ["process", "outcome"] as const;
/** How GRPO's chain advantage reaches the tokens: uniformly, Reward-SQL's PRM-weighted rule, or DeepSeekMath's per-step normalisation (core/prm-advantages.ts). */
export const STEP_ADVANTAGE_MODES = ["chain", "prm-weighted", "per-step-norm"] as const;
/** A chain's score from its step scores, for best-of-N (core/prm-steps.ts). */
export const PRM_AGGREGATE_KINDS = ["min", "mean", "last", "product"] as const;

export interface MarkdownParams {
  source: string;
}
/** The GPU cell shows the adapter and its limits; it has no parameters. */
export type GpuParams = Record<string, never>;
export interface DatasetParams {
  source: (typeof DATASET_SOURCES)[number];
  /** Display name (the demo set's name for source "demo"). */
  name: string;
  format: (typeof DATASET_FORMATS)[number];
  /** Base URL of the SQLite databases (`<dbRoot>/<db_id>/<db_id>.sqlite`), source "url". */
  dbRoot?: string;
  /** URL of the questions file (JSON or JSONL), source "url". */
  questionsUrl?: string;
  /** URL of tables.json, when the format has one. */
  tablesUrl?: string;
  /** Which split of the file the training stages read. */
  split: string;
  /** Fraction of training questions held out as the "dev" split, by seeded shuffle. */
  devFraction: number;
  /** Use at most this many questions (all when absent). */
  limit?: number;
  seed: number;
}
export interface ModelParams {
  source: (typeof MODEL_SOURCES)[number];
  /** Hugging Face repository "owner/name", source "hub". */
  repo?: string;
  revision: string;
  /** Base URL of a model folder, source "url". */
  url?: string;
  dtype: (typeof DTYPES)[number];
  loraRank: number;
  loraAlpha: number;
  /**
   * A LoRA adapter in PEFT format to start from instead of a fresh one (B = 0): the URL of a folder
   * with adapter_config.json and adapter_model.safetensors (headless also a path), resolved like
   * `url`. Its r and lora_alpha must equal loraRank and loraAlpha.
   */
  adapter?: string;
}
export interface PromptParams {
  /** A template id of prompts.ts's PROMPT_TEMPLATES, e.g. "omnisql@1". */
  template: string;
  maxPromptTokens: number;
  /** Example values per column in the schema before shrinking to fit (prompts.ts). */
  examplesPerColumn: number;
  /** Show natural column names and descriptions in the schema. */
  descriptions: boolean;
  /** Include the question's external knowledge (BIRD evidence). */
  evidence: boolean;
}
/** The reward: rewards.ts's spec (weighted components, each reported on its own) and how results compare. */
export interface RewardParams {
  spec: RewardSpec;
  /** compare.ts's mode: "set" is BIRD's rule. */
  comparison: (typeof COMPARISONS)[number];
}
export interface EvaluateParams {
  split: string;
  /** Questions to evaluate (at most). */
  n: number;
  temperature: number;
  topP: number;
  /** Samples per question (pass@k and maj@k use k of them). */
  k: number;
  maxNewTokens: number;
  seed: number;
}
export interface SelectParams {
  /** Candidate models: "demo", Hugging Face repositories, or model folder URLs. */
  models: string[];
  /** Candidate prompt template ids. */
  templates: string[];
  split: string;
  n: number;
  maxNewTokens: number;
}
export interface WarmupParams {
  /** Rounds of sample, score, train; for "sft" each round trains `epochs` passes over the gold targets (checkpointed per round). */
  rounds: number;
  samplesPerQuestion: number;
  method: (typeof WARMUP_METHODS)[number];
  lr: number;
  epochs: number;
  temperature: number;
  maxNewTokens: number;
  /** DPO's beta (method "dpo"). */
  dpoBeta: number;
  seed: number;
  /**
   * The round's scored samples as an "rlvr" dataset file: "correct" (distinct correct SQL per
   * question, with its reasoning), "all" (every sample with its reward and correctness) or "none"
   * (the default, and the only value, for method "sft").
   */
  exportSamples: (typeof WARMUP_EXPORTS)[number];
  /**
   * Sample with the questions' evidence (the organisation's definitions) in the prompt, and train
   * the prompt as the prompt cell builds it (rft only): the definitions are used while training and
   * learned for prompts without them (docs/recipe.md, "Warm-up with the definitions").
   */
  sampleWithEvidence: boolean;
  /**
   * The samples an rft round trains on: "better" (the default: correct, or of positive group advantage,
   * e.g. an answer that runs where the others fail) or "correct" (rejection sampling on correctness
   * alone: only answers whose rows match the gold's).
   */
  rftKeep: (typeof RFT_KEEP)[number];
  /**
   * At most this many kept samples per question in an rft round, each a different answer (0, the
   * default: every kept sample, duplicates included).
   */
  rftPerQuestion: number;
  /**
   * The target of an sft question whose record has no `completion`: "gold" (the default: the gold
   * SQL in the prompt template's answer format) or "cocte" (the gold rewritten as a chain of CTEs and
   * verified by execution, as `rlvr cocte` does, in chain-of-ctes@1's answer format: a CoCTE cold
   * start on any dataset; a gold that does not convert is trained as "gold").
   */
  sftTargets: (typeof SFT_TARGETS)[number];
}
export interface GrpoParams {
  /** Samples per question (the group size). */
  G: number;
  lr: number;
  lrSchedule: (typeof LR_SCHEDULE_KINDS)[number];
  warmupSteps: number;
  steps: number;
  batchQuestions: number;
  /** Optimiser updates per sampled batch (mu); 1 is strictly on-policy. */
  updatesPerBatch: number;
  eps_low: number;
  eps_high: number;
  /** KL coefficient to the reference policy at step 0 (0: no reference pass). */
  kl: number;
  klSchedule: (typeof KL_SCHEDULE_KINDS)[number];
  aggregation: (typeof GRPO_AGGREGATIONS)[number];
  advantage: (typeof ADVANTAGES)[number];
  dropEqualGroups: boolean;
  focusHard: boolean;
  /** Focus on hard questions: skip after this many consecutive all-correct visits. */
  skipAfter: number;
  revisitFraction: number;
  maxNewTokens: number;
  temperature: number;
  topP: number;
  maxGradNorm: number;
  /** Evaluate on the dev split every this many steps (0: never). */
  evalEvery: number;
  evalN: number;
  /** The split of those checks ("": "dev" when the dataset has one, else "test"). */
  evalSplit: string;
  seed: number;
  /** Step-level advantages from the PRM (absent: "chain", every token gets its chain's advantage). */
  stepAdvantage?: (typeof STEP_ADVANTAGE_MODES)[number];
  /** The PRM train cell whose scores the prm reward and step advantages use (absent: the last process PRM before this cell, an outcome model only when there is none). */
  prm?: string;
}
export interface SelfConsistencyParams {
  N: number;
  vote: (typeof VOTES)[number];
  /** For vote "logprob": softmax of summed logprobs, or exp of the mean token logprob. */
  logprobWeight: (typeof LOGPROB_WEIGHTS)[number];
  temperature: number;
  split: string;
  n: number;
  maxNewTokens: number;
  comparison: (typeof COMPARISONS)[number];
  /** PRM train cells whose best-of-N is reported beside the vote (absent: none). */
  prm?: string[];
  /** How a chain's step scores rank it in PRM best-of-N (absent: "min"). */
  prmAggregate?: (typeof PRM_AGGREGATE_KINDS)[number];
}
export interface ExportParams {
  what: (typeof EXPORTS)[number];
}
/** The PRM data cell: step labels by execution for the training questions (docs/prm.md). */
export interface PrmDataParams {
  /** The split whose questions are labelled (empty: the dataset cell's training split). */
  split: string;
  /** Questions at most. */
  n: number;
  /** The prompt template of the chains (steps are CTEs; PRM inputs use it too). */
  template: string;
  /** Whole answers sampled per question. */
  chains: number;
  /** Completions sampled from each probed step's prefix. */
  rollouts: number;
  /** Rollouts per question at most. */
  budget: number;
  /** Steps probed per chain at most. */
  maxSteps: number;
  temperature: number;
  maxNewTokens: number;
  /** Questions searched together (one sampling call per search wave). */
  questionsPerBatch: number;
  /** Leave out questions whose gold result is empty (a wrong query matches it by accident). */
  dropEmptyGold: boolean;
  /** Curation: drop chains with no SQL; cut positives under this rollout success rate; balance chains with an error against all-correct ones (ratio, 0: off). */
  dropUnparsed: boolean;
  minPositiveRate: number;
  balance: number;
  seed: number;
}
/** The PRM train cell: the PRM (policy's base model + its own LoRA + a scalar head) on a PRM data cell's chains. */
export interface PrmTrainParams {
  /** The PRM data cell whose train.jsonl it reads (empty: the last one before this cell). */
  data: string;
  labels: (typeof PRM_LABELS)[number];
  loraRank: number;
  loraAlpha: number;
  lr: number;
  lrSchedule: (typeof LR_SCHEDULE_KINDS)[number];
  warmupSteps: number;
  epochs: number;
  /** Chains per optimiser step. */
  batchChains: number;
  maxGradNorm: number;
  /** Fraction of the data's questions held out to measure the PRM (step accuracy, AUC, BCE). */
  devFraction: number;
  seed: number;
  /** A PRM folder (prm_config.json + PEFT files) to load instead of training: a URL, or headless a path. */
  load?: string;
}

/**
 * The ask cell: a typed question about one of the dataset's databases, answered greedily by the base
 * model (no adapter) and by a checkpointed stage's adapter, side by side (runtime/recipe/ask.ts).
 */
export interface AskParams {
  question: string;
  /** The database the question is about (a db_id of the dataset cell's databases). */
  db: string;
  /** The training cell whose checkpoint answers (empty: the newest checkpoint of the run). */
  stage: string;
  maxNewTokens: number;
}

/** Parameters of each cell type. */
export interface CellParams {
  markdown: MarkdownParams;
  gpu: GpuParams;
  dataset: DatasetParams;
  model: ModelParams;
  prompt: PromptParams;
  reward: RewardParams;
  evaluate: EvaluateParams;
  select: SelectParams;
  warmup: WarmupParams;
  grpo: GrpoParams;
  selfconsistency: SelfConsistencyParams;
  prmdata: PrmDataParams;
  prmtrain: PrmTrainParams;
  export: ExportParams;
  ask: AskParams;
}
