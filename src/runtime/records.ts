// The records a run produces for the notebook to draw: one record per inspected sample (the
// reward inspector), the per-step metrics (charts; core/metrics.ts's MetricsRecord, unchanged),
// and per-stage reports (evaluation tables, selection grids). Everything here is plain JSON, so
// the same records travel through a comlink worker, a JSONL file under Deno, and OPFS.
import type { ChainShapes } from "../core/cocte-shapes.ts";
import type { Extraction } from "../core/extract.ts";
import type { MetricPhase, MetricsRecord } from "../core/metrics.ts";
import type { CurateReport, PrmDataStats } from "../core/prm-dataset.ts";
import type { RewardScore } from "../core/rewards.ts";
import type { ExecErrorKind, ResultSet, SqlValue } from "../core/types.ts";

/** Rows kept per result set in a sample record (display cap; never affects scoring). */
export const DISPLAY_ROWS = 50;
/** Characters kept per text cell in a display result. */
export const DISPLAY_CELL_CHARS = 200;

/**
 * A SQLite value made JSON-safe for display: INTEGER as number when exactly representable, else
 * `{ int: "…" }`; REAL number (non-finite as `{ real: "NaN" | "Infinity" | "-Infinity" }`);
 * TEXT string (cut at DISPLAY_CELL_CHARS, with "…"); BLOB `{ blob: byteLength }`; NULL null.
 */
export type DisplayValue = number | string | null | { int: string } | { real: string } | { blob: number };

/** A result set cut for display. */
export interface DisplayResult {
  columns: string[];
  rows: DisplayValue[][];
  /** Rows the query returned (before the display cap; the executor's own cap may apply too). */
  rowCount: number;
  /** True when rows were dropped for display. */
  truncated: boolean;
  /** True when the executor itself capped the result (such a result never scores as correct). */
  capped: boolean;
}

/** One sample as the reward inspector shows it. */
export interface SampleRecord {
  /** Record format version. */
  v: 1;
  /** Stage that drew the sample; `step` is the optimiser step (GRPO, warm-up) or evaluation index. */
  phase: MetricPhase;
  step: number;
  /** The notebook cell that drew it (since 2026-12-04; see MetricsRecord.cell). */
  cell?: string;
  /** Warm-up round, when the phase has rounds. */
  round?: number;
  taskId: string;
  dbId: string;
  difficulty?: string;
  question: string;
  /** The question's external knowledge (the demo's concept definitions), whether or not the prompt showed it. */
  evidence?: string;
  /** Index of the sample within its question's group (0 for greedy). */
  sampleIndex: number;
  /** The full prompt text (after the chat template). */
  prompt: string;
  /**
   * The answer: the template's answer prefix (given in the prompt, see `answerPrefix`), then the text
   * as generated (stop string included, EOS not).
   */
  completion: string;
  /** The completion's first characters that the prompt wrote, not the model (chain-of-ctes@2's "```sql\nWITH"); absent when none. */
  answerPrefix?: string;
  /** The content of the <think>…</think> block, if the completion has one. */
  reasoning: string | null;
  /** Extracted SQL and where it came from, or why there is none. */
  extraction: Extraction;
  /** The predicted result (null when nothing ran or the query failed). */
  predicted: DisplayResult | null;
  /** The gold result (null when the gold query itself failed). */
  gold: DisplayResult | null;
  /** The gold query, shown beside its rows (absent in records written before it was kept). */
  goldSql?: string;
  /** Why the prediction gave no comparable result (null when it ran uncapped). */
  error: { kind: ExecErrorKind; message: string } | null;
  /** Execution match with gold. */
  correct: boolean;
  /** Wall time of the predicted query in milliseconds (0 when nothing ran). */
  execMs: number;
  /** Each reward component (raw and weighted) and the total. */
  reward: RewardScore;
  /** Group-relative advantage used in training (null outside training or when the group was dropped). */
  advantage: number | null;
  completionTokens: number;
  /** Sum of the completion tokens' log-probabilities under the sampling policy (temperature 1). */
  logprob: number;
  finishReason: "eos" | "stop" | "length";
  /**
   * The completion as a chain of CTEs (chain-of-ctes@1), one entry per step query and the final
   * statement last (runtime/cocte-exec.ts sampleSteps); absent when the sample was not split.
   */
  steps?: SampleStep[];
}

/** One step of a chain of CTEs as a sample record carries it (JSON-safe; `prmScore` is added by the PRM side when it scores the step). */
export interface SampleStep {
  /** The CTE's name; null for the final statement. */
  name: string | null;
  /** The CTE body (or the final statement) as written. */
  sql: string;
  /** The step's comment as written, when it has one. */
  comment?: string;
  /** Offset in the completion just after the step; -1 when unknown. */
  end: number;
  error: { kind: ExecErrorKind; message: string } | null;
  result: DisplayResult | null;
  matchesGold: boolean;
  /** The process reward model's score of this step, when one was computed. */
  prmScore?: number;
}

/** Per-step metrics: the metrics stream's record, as core/metrics.ts defines it. */
export type StepMetrics = MetricsRecord;

/** Accuracy figures of one group of questions (a split, or one difficulty). */
export interface AccuracyFigures {
  questions: number;
  /** Greedy execution accuracy. */
  greedy: number;
  /** pass@k for each k (unbiased estimator over n samples), present when sampling was asked. */
  passAtK?: Record<string, number>;
  /** maj@k for each k (vote over execution results), present when sampling was asked. */
  majAtK?: Record<string, number>;
}

/** What the Evaluate stage reports. */
export interface EvalReport {
  kind: "evaluate";
  /** Cell id of the evaluate cell. */
  cellId: string;
  split: string;
  /** When the evaluation ran, relative to training (e.g. "before", "after", "grpo step 10"). */
  label: string;
  overall: AccuracyFigures;
  byDifficulty: Record<string, AccuracyFigures>;
  /** Samples drawn per question for pass@k / maj@k (0 when only greedy). */
  samplesPerQuestion: number;
  /** Path of the predictions file (BIRD format) in the run's store. */
  predictionsPath: string;
  /** Under the chain-of-ctes@1 prompt: the greedy answers' shapes (CTE steps, multi-step chains). */
  chains?: ChainShapes;
}

/** One cell of the selection grid. */
export interface SelectEntry {
  model: string;
  template: string;
  accuracy: number;
  questions: number;
  rank: number;
}

/** What the Select stage reports. */
export interface SelectReport {
  kind: "select";
  cellId: string;
  split: string;
  entries: SelectEntry[];
  winner: { model: string; template: string };
}

/** What the Warm-up stage reports per round. */
export interface WarmupRoundReport {
  round: number;
  /** Samples drawn this round (0 for sft, which samples nothing). */
  samples: number;
  /** Fraction of samples that were execution-correct in this round's fixed set (absent for sft). */
  sampleAccuracy?: number;
  /** sft: the gold targets trained on (one per training question). */
  goldTargets?: number;
  /** sft: mean token log-probability of the gold targets under the cell's prompts before and after the round (the trainer's forward). */
  targetLogprob?: { before: number; after: number };
  /** Samples used as RFT targets / in the advantage-weighted loss. */
  rftTargets: number;
  weightedSamples: number;
  optimiserSteps: number;
  /**
   * The round's scored samples as an "rlvr" dataset file in the run's store (absent when the cell's
   * exportSamples is "none"): its path, its lines, and the questions they cover.
   */
  dataset?: { path: string; records: number; questions: number };
}

/** What the Warm-up stage reports. */
export interface WarmupReport {
  kind: "warmup";
  cellId: string;
  method: string;
  rounds: WarmupRoundReport[];
  /** What the dataset files hold ("correct", "all" or "none"). */
  exportSamples: string;
  /** The rounds' dataset files, in round order (empty when exportSamples is "none"). */
  datasetFiles: string[];
  /**
   * sft: where the targets came from: records' `completion` fields, the gold SQL in the template's
   * answer format, or (sftTargets "cocte") the gold as a chain of CTEs, whose lines are in
   * `cocteFile` (rlvr cocte --dataset's format) and whose failures by kind in `cocteFailed`; the
   * counts are of the targets trained, `tooLong` those left out, longer than the model's positions
   * after their prompt.
   */
  targets?: {
    completion: number;
    gold: number;
    template: string;
    cocte?: number;
    cocteFile?: string;
    cocteFailed?: Record<string, number>;
    tooLong?: number;
  };
}

/** What the GRPO stage reports. */
export interface GrpoReport {
  kind: "grpo";
  cellId: string;
  steps: number;
  /** Optimiser updates the trainer skipped (non-finite loss or gradient). */
  skippedSteps: number;
  /** Step the stage resumed from (0 for a fresh run). */
  resumedFrom: number;
  /** Mean fraction of equal-reward groups over the steps. */
  equalGroupFraction: number;
  /** Held-out accuracy at each evaluation (step -> greedy accuracy). */
  heldout: { step: number; accuracy: number }[];
}

/** What the Self-consistency stage reports. */
export interface SelfConsistencyReport {
  kind: "selfconsistency";
  cellId: string;
  split: string;
  samples: number;
  weighting: string;
  questions: number;
  /** Accuracy of the voted answer; of best-of-N by mean token log-probability among executable answers; of any of the N (pass@N, the oracle bound); of the first sample alone. */
  voteAccuracy: number;
  bestOfNAccuracy: number;
  oracleAccuracy: number;
  firstSampleAccuracy: number;
  predictionsPath: string;
  /** Best-of-N by each PRM train cell's chain score (absent without PRMs). */
  prmBestOfN?: { cellId: string; labels: "process" | "outcome"; accuracy: number }[];
  /** Every selection rule on the first N samples of each question, N = 1, 2, 4, ... up to the cell's N (absent without PRMs). */
  atN?: SelectionAtN[];
}

/** Accuracy of each selection rule over the first N samples of every question (a fraction of `questions`). */
export interface SelectionAtN {
  N: number;
  questions: number;
  vote: number;
  /** Best-of-N by mean token log-probability among answers that ran. */
  logprob: number;
  /** Best-of-N by each PRM train cell's chain score, by cell id. */
  prm: Record<string, number>;
  oracle: number;
  first: number;
}

/** What a PRM data cell reports. */
export interface PrmDataReport {
  kind: "prmdata";
  cellId: string;
  split: string;
  /** Questions searched (over every run of the cell), and those left out before sampling. */
  questions: number;
  skipped: { emptyGold: number; goldFailed: number };
  /** Rollouts (completions from prefixes) spent, and whole answers sampled. */
  rollouts: number;
  sampled: number;
  /** The raw labelled chains, what curation did, and the training set. */
  raw: PrmDataStats;
  curation: CurateReport;
  curated: PrmDataStats;
  /** prm-data/<cell>/questions.jsonl, labels.jsonl, train.jsonl, stats.json. */
  files: string[];
  /** Questions already done when this run started (a resumed cell). */
  resumedFrom: number;
}

/** Held-out figures of a PRM: over labelled steps, and over chains with an error. */
export interface PrmEval {
  chains: number;
  steps: number;
  /** Steps whose score falls on the right side of 0.5. */
  accuracy: number;
  /** Area under the ROC curve of the step scores against the labels (NaN when one class is absent). */
  auc: number;
  bce: number;
  /** Chains with an error whose first step scored under 0.5 is the labelled first error. */
  firstError: number;
}

/** What a PRM train cell reports. */
export interface PrmTrainReport {
  kind: "prmtrain";
  cellId: string;
  labels: "process" | "outcome";
  /** The PRM data cell it trained on, or where it was loaded from. */
  data: string;
  loadedFrom?: string;
  steps: number;
  examples: number;
  devExamples: number;
  resumedFrom: number;
  /** Mean training loss of the first and the last epoch. */
  loss: { first: number; last: number } | null;
  dev: PrmEval | null;
  /** The PRM folder (prm/<cell>/). */
  files: string[];
}

/** What the Export stage reports. */
export interface ExportReport {
  kind: "export";
  cellId: string;
  files: string[];
}

/** A training cell's checkpoint that an ask cell can answer with (runtime/recipe/ask.ts). */
export interface AskStage {
  cellId: string;
  kind: "warmup" | "grpo";
  /** The checkpoint's step (warm-up: rounds done; GRPO: steps done). */
  step: number;
  savedAt: string;
}

/** One model's answer to an ask cell's question. */
export interface AskAnswer {
  /** The stage that answered; null for the base model (no adapter). */
  stage: AskStage | null;
  /** The generated text (the template's answer prefix included). */
  completion: string;
  /** The extracted SQL, or null when none was found. */
  sql: string | null;
  /** Why there are no rows: no SQL in the answer, or the query's error. */
  error: { kind: ExecErrorKind | "no-sql"; message: string } | null;
  result: DisplayResult | null;
  /** The definitions of the question's database whose SQL the answer holds (demo-evidence.ts recall matching). */
  definitions: { term: string; fragment: string }[];
}

/** The ask cell's output: the base model's answer beside a checkpointed stage's. */
export interface AskReport {
  kind: "ask";
  cellId: string;
  question: string;
  db: string;
  base: AskAnswer;
  /** Null when the run has no checkpoint yet (`note` says so). */
  trained: AskAnswer | null;
  note?: string;
  /** The run's checkpointed stages, oldest first (the newest answers when the cell names none). */
  stages: AskStage[];
  /** The definitions known for the database (from the dataset's evidence). */
  known: number;
}

/** Any stage's report. */
export type StageReport =
  | EvalReport
  | SelectReport
  | WarmupReport
  | GrpoReport
  | SelfConsistencyReport
  | PrmDataReport
  | PrmTrainReport
  | ExportReport
  | AskReport;

/** A SQLite value made JSON-safe for display. */
/** A display value as the text of a table cell: NULL, the exact integer or non-finite real, or the blob's size. */
export function displayText(v: DisplayValue): string {
  if (v === null) return "NULL";
  if (typeof v === "object") return "int" in v ? v.int : "real" in v ? v.real : `<blob ${v.blob} bytes>`;
  return String(v);
}

export function displayValue(v: SqlValue): DisplayValue {
  if (v === null) return null;
  if (typeof v === "bigint") {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : { int: v.toString() };
  }
  if (typeof v === "number") return Number.isFinite(v) ? v : { real: String(v) };
  if (typeof v === "string") return v.length > DISPLAY_CELL_CHARS ? v.slice(0, DISPLAY_CELL_CHARS) + "…" : v;
  return { blob: v.byteLength };
}

/** A result set cut to `maxRows` rows of display values. */
export function displayResult(rs: ResultSet, maxRows = DISPLAY_ROWS): DisplayResult {
  const rows = rs.rows.slice(0, maxRows).map((r) => r.map(displayValue));
  return {
    columns: [...rs.columns],
    rows,
    rowCount: rs.rows.length,
    truncated: rs.rows.length > maxRows,
    capped: rs.capped,
  };
}

/** True when a rendered prompt ends inside an opened <think> (the completion then holds only its rest). */
export function promptOpensThink(prompt: string): boolean {
  return /<think>\s*$/.test(prompt);
}

/** The content of the first <think>…</think> block (or of an unclosed one the prompt opened), else null. */
export function reasoningOf(completion: string, promptOpensThink = false): string | null {
  const closed = /<think>([\s\S]*?)<\/think>/i.exec(completion);
  if (closed) return closed[1].trim();
  if (promptOpensThink) {
    const end = completion.search(/<\/think>/i);
    if (end >= 0) return completion.slice(0, end).trim();
  }
  return null;
}

/** One sample record as a JSON line, newline included. */
export function encodeSample(r: SampleRecord): string {
  return JSON.stringify(r) + "\n";
}

/** Sample records decoded from JSON Lines; a partial last line (crash mid-write) is dropped. */
export function decodeSamples(text: string): { records: SampleRecord[]; errors: number[] } {
  const records: SampleRecord[] = [];
  const errors: number[] = [];
  const lines = text.split("\n");
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const last = i === lines.length - 1 && !text.endsWith("\n");
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      if (!last) errors.push(i + 1);
      return;
    }
    if (isSampleRecord(value)) records.push(value);
    else if (!last) errors.push(i + 1);
  });
  return { records, errors };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Type guard for a sample record (required fields and their types). */
export function isSampleRecord(x: unknown): x is SampleRecord {
  if (!isObject(x) || x.v !== 1) return false;
  const str = ["phase", "taskId", "dbId", "question", "prompt", "completion"] as const;
  const num = ["step", "sampleIndex", "execMs", "completionTokens", "logprob"] as const;
  if (!str.every((k) => typeof x[k] === "string")) return false;
  if (x.cell !== undefined && typeof x.cell !== "string") return false;
  if (x.goldSql !== undefined && typeof x.goldSql !== "string") return false;
  if (
    x.answerPrefix !== undefined &&
    (typeof x.answerPrefix !== "string" || !(x.completion as string).startsWith(x.answerPrefix))
  ) return false;
  if (!num.every((k) => typeof x[k] === "number")) return false;
  if (typeof x.correct !== "boolean") return false;
  if (!(x.reasoning === null || typeof x.reasoning === "string")) return false;
  if (!(x.advantage === null || typeof x.advantage === "number")) return false;
  const e = x.extraction;
  if (!isObject(e) || !(typeof e.sql === "string" || e.sql === null)) return false;
  const rw = x.reward;
  if (!isObject(rw) || typeof rw.total !== "number" || !isObject(rw.components) || !isObject(rw.weighted)) return false;
  for (const k of ["predicted", "gold"] as const) {
    const r = x[k];
    if (r !== null && !(isObject(r) && Array.isArray(r.columns) && Array.isArray(r.rows))) return false;
  }
  if (x.steps !== undefined && !(Array.isArray(x.steps) && x.steps.every(isSampleStep))) return false;
  return x.error === null || isObject(x.error);
}

function isSampleStep(x: unknown): x is SampleStep {
  if (!isObject(x)) return false;
  if (
    !(x.name === null || typeof x.name === "string") || typeof x.sql !== "string" || typeof x.matchesGold !== "boolean"
  ) return false;
  if (x.prmScore !== undefined && typeof x.prmScore !== "number") return false;
  const r = x.result;
  return r === null || r === undefined || (isObject(r) && Array.isArray(r.columns) && Array.isArray(r.rows));
}
