// Converted golds as a cold-start dataset for the chain-of-ctes prompts: one JSON line per
// question in the project's own "rlvr" question format (core/loaders.ts reads it back; the chain
// is the `gold_sql`, so the file also evaluates), with the answer the prompt asks for — the whole
// chain in one ```sql block — as `completion`, the SFT target of a warm-up on gold.
import type { CteStep } from "../core/cocte.ts";
import type { Task } from "../core/types.ts";

/**
 * The prompt template these answers are written for: chain-of-ctes@2, which starts the answer as
 * "```sql\nWITH" for the model (chain-of-ctes@1 asks for the same answer and writes none of it).
 */
export const COCTE_TEMPLATE = "chain-of-ctes@2";

/** One line of a gold-to-CoCTE dataset. */
export interface CocteDatasetRecord {
  /** `<source id>/cocte`. */
  id: string;
  db_id: string;
  question: string;
  /** The chain of CTEs (returns the gold's rows). */
  gold_sql: string;
  evidence?: string;
  difficulty?: string;
  /** The answer in the chain-of-ctes format: the chain in one ```sql block. */
  completion: string;
  template: typeof COCTE_TEMPLATE;
  /** The chain's steps: name, CTE body, comment. */
  steps: CteStep[];
  source_id: string;
  source_gold_sql: string;
}

/** The answer the chain-of-ctes prompts ask for: the whole query in one ```sql block. */
export function cocteCompletion(cocte: string): string {
  return "```sql\n" + cocte + "\n```";
}

/** The dataset line of one converted question. */
export function cocteDatasetRecord(task: Task, cocte: string, steps: readonly CteStep[]): CocteDatasetRecord {
  const r: CocteDatasetRecord = {
    id: `${task.id}/cocte`,
    db_id: task.db_id,
    question: task.question,
    gold_sql: cocte,
    completion: cocteCompletion(cocte),
    template: COCTE_TEMPLATE,
    steps: steps.map((s) => ({ ...s })),
    source_id: task.id,
    source_gold_sql: task.gold_sql,
  };
  if (task.evidence !== undefined) r.evidence = task.evidence;
  if (task.difficulty !== undefined) r.difficulty = task.difficulty;
  return r;
}
