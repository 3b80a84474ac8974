// The targets of the sft warm-up (supervised fine-tuning on the dataset's gold answers, nothing
// sampled): per training question, the record's `completion` verbatim when it has one (a
// gold-to-CoCTE dataset, runtime/cocte-dataset.ts; a warm-up export), else the gold SQL in the
// prompt template's answer format as the pretraining corpus writes it (pretrain/corpus.ts
// answerText) or, with sftTargets "cocte", the gold rewritten as a chain of CTEs that execution
// checked (runtime/cocte-convert.ts, the converter of `rlvr cocte`). A training sequence is the cell's prompt, the target's tokens and the model's end
// of sequence, so the model also learns to stop.
import type { DbSchema } from "../../core/schema.ts";
import type { Task } from "../../core/types.ts";
import { GoldConverter } from "../cocte-convert.ts";
import { type CocteDatasetRecord, cocteDatasetRecord } from "../cocte-dataset.ts";
import type { SqlPool } from "../sql-pool.ts";
import { answerText } from "../pretrain/corpus.ts";

/** Where a target came from: the record's completion, the gold rendered for the template, or the gold as a chain of CTEs. */
export type SftTargetSource = "completion" | "gold" | "cocte";

/** One question's target text. */
export interface SftTarget {
  text: string;
  source: SftTargetSource;
}

/**
 * The answer to train on for `task` under prompt template `templateId`. `promptOpensThink`: the
 * prompt already ends with an opened `<think>` (the chat template opens it), so a rendered gold
 * answer starts inside it; a record's completion is taken as it is (a warm-up export's completion
 * was sampled after that same prompt end).
 */
export function sftTarget(
  task: Task,
  templateId: string,
  schema: DbSchema,
  promptOpensThink = false,
  cocte?: CocteDatasetRecord | null,
): SftTarget {
  if (task.completion !== undefined) return { text: task.completion, source: "completion" };
  if (cocte) return { text: cocte.completion, source: "cocte" };
  const text = answerText(templateId, task, schema);
  return { text: promptOpensThink ? text.replace(/^<think>\n?/, "") : text, source: "gold" };
}

/** What converting the training golds to chains of CTEs gave. */
export interface CocteTargets {
  /** Per task, its chain as a gold-to-CoCTE dataset line (null: it has a completion, or its gold did not convert). */
  records: (CocteDatasetRecord | null)[];
  /** Why golds did not convert, with counts. */
  failed: Record<string, number>;
}

/**
 * The chains of CTEs of the tasks without a `completion` (sftTargets "cocte"): each gold through
 * GoldConverter on the dataset's databases, kept when every step runs and the chain returns the
 * gold's rows; the same chain `rlvr cocte` writes, in the same line format.
 */
export async function cocteTargets(tasks: readonly Task[], sql: Pick<SqlPool, "query">): Promise<CocteTargets> {
  const converter = new GoldConverter(sql);
  const failed: Record<string, number> = {};
  const records = await Promise.all(tasks.map(async (t) => {
    if (t.completion !== undefined) return null;
    const c = await converter.convert(t.db_id, t.gold_sql);
    if (c.ok) return cocteDatasetRecord(t, c.cocte, c.steps);
    // The reason's kind, not its message (which names the query).
    const kind = c.reason.replace(/:.*$/s, "");
    failed[kind] = (failed[kind] ?? 0) + 1;
    return null;
  }));
  return { records, failed };
}

/**
 * What a target trains on after a prompt that already starts the answer with `prefix` (assistant
 * prefill): the target without that start, or null when it does not begin with it. Whitespace
 * before the target's first character is ignored; an empty prefix returns the target unchanged.
 */
export function afterAnswerPrefix(target: string, prefix: string): string | null {
  if (!prefix) return target;
  const t = target.trimStart();
  return t.startsWith(prefix) ? t.slice(prefix.length) : null;
}

/**
 * A training sequence: prompt ids, then the target's ids (no special tokens added), then the first
 * end-of-sequence id (none when the model names none). `promptLen` marks where the target starts.
 */
export function sftSequence(
  promptIds: readonly number[],
  targetIds: readonly number[],
  eosTokenIds: readonly number[],
): { ids: number[]; promptLen: number } {
  return { ids: [...promptIds, ...targetIds, ...eosTokenIds.slice(0, 1)], promptLen: promptIds.length };
}

/**
 * Mean token log-probability of each sequence's target (the positions after its prompt) from the
 * trainer's per-position log-probabilities (row t = log p(ids[t+1] | ids[..t])), and over all of
 * their tokens together.
 */
export function targetLogprob(
  seqs: readonly { ids: readonly number[]; promptLen: number }[],
  rows: readonly ArrayLike<number>[],
): { perSequence: number[]; mean: number; tokens: number } {
  let sum = 0, tokens = 0;
  const perSequence = seqs.map((s, i) => {
    let a = 0;
    const n = s.ids.length - s.promptLen;
    for (let t = s.promptLen - 1; t < s.ids.length - 1; t++) a += rows[i][t];
    sum += a;
    tokens += n;
    return n > 0 ? a / n : 0;
  });
  return { perSequence, mean: tokens > 0 ? sum / tokens : 0, tokens };
}
