// The targets of the sft warm-up (supervised fine-tuning on the dataset's gold answers, nothing
// sampled): per training question, the record's `completion` verbatim when it has one (a
// gold-to-CoCTE dataset, runtime/cocte-dataset.ts; a warm-up export), else the gold SQL in the
// prompt template's answer format as the pretraining corpus writes it (pretrain/corpus.ts
// answerText). A training sequence is the cell's prompt, the target's tokens and the model's end
// of sequence, so the model also learns to stop.
import type { DbSchema } from "../../core/schema.ts";
import type { Task } from "../../core/types.ts";
import { answerText } from "../pretrain/corpus.ts";

/** Where a target came from: the record's completion, or the gold rendered for the template. */
export type SftTargetSource = "completion" | "gold";

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
export function sftTarget(task: Task, templateId: string, schema: DbSchema, promptOpensThink = false): SftTarget {
  if (task.completion !== undefined) return { text: task.completion, source: "completion" };
  const text = answerText(templateId, task, schema);
  return { text: promptOpensThink ? text.replace(/^<think>\n?/, "") : text, source: "gold" };
}

/**
 * A training sequence: prompt ids, then the target's ids (no special tokens added), then the first
 * end-of-sequence id (none when the model names none). `promptLen` marks where the target starts.
 */
export function sftSequence(promptIds: readonly number[], targetIds: readonly number[], eosTokenIds: readonly number[]): { ids: number[]; promptLen: number } {
  return { ids: [...promptIds, ...targetIds, ...eosTokenIds.slice(0, 1)], promptLen: promptIds.length };
}

/**
 * Mean token log-probability of each sequence's target (the positions after its prompt) from the
 * trainer's per-position log-probabilities (row t = log p(ids[t+1] | ids[..t])), and over all of
 * their tokens together.
 */
export function targetLogprob(seqs: readonly { ids: readonly number[]; promptLen: number }[], rows: readonly ArrayLike<number>[]): { perSequence: number[]; mean: number; tokens: number } {
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
