// Types shared across layers: tasks, SQL values and execution outcomes.

/** One text-to-SQL question. */
export interface Task {
  /** Stable id within its dataset (BIRD question_id, or the position in the file). */
  id: string;
  db_id: string;
  question: string;
  /** External knowledge (BIRD's `evidence`, our organisation-specific definitions). */
  evidence?: string;
  gold_sql: string;
  difficulty?: string;
  /**
   * The answer text to train on, verbatim (an "rlvr" record's `completion`: a gold-to-CoCTE
   * dataset's chain in its ```sql block, a warm-up export's sample): the sft warm-up's target.
   */
  completion?: string;
}

/**
 * A SQLite value as SQLite returned it. INTEGER values are bigint so 64-bit integers stay exact;
 * REAL values are number; TEXT string; BLOB Uint8Array; NULL null.
 */
export type SqlValue = bigint | number | string | Uint8Array | null;

/** The rows a query returned, capped by the executor's limits. */
export interface ResultSet {
  columns: string[];
  rows: SqlValue[][];
  /** True when rows or bytes were cut at the cap: such a result never scores as correct. */
  capped: boolean;
}

/** Why a query produced no comparable result. */
export type ExecErrorKind = "syntax" | "runtime" | "timeout" | "capped" | "forbidden" | "empty" | "worker";

/** The outcome of running one predicted query and comparing it with the gold result. */
export interface ExecOutcome {
  /** Execution match: predicted result equals the gold result under the comparison mode. */
  correct: boolean;
  /** Null when the prediction ran to completion uncapped; otherwise why not. */
  error: { kind: ExecErrorKind; message: string } | null;
  /** Wall time of the predicted query in milliseconds. */
  ms: number;
  /** The predicted result, when kept for inspection (capped for display). */
  result?: ResultSet;
}
