// The warm-up's scored samples as a dataset: one JSON line per sample in the project's own "rlvr"
// question format (id, db_id, question, gold_sql, evidence, difficulty; core/loaders.ts reads it
// back), plus what an SFT/RFT pipeline needs (reasoning, completion, reward, round). "correct"
// keeps the execution-correct samples, one per distinct normalised SQL per question, with the
// sample's SQL as `gold_sql`; "all" keeps every sample with its correctness and `gold_sql` the
// source's gold (so the file still scores correctly when trained or evaluated on).
import type { Extraction } from "../../core/extract.ts";
import type { WarmupParams } from "../../core/notebook-params.ts";
import type { Task } from "../../core/types.ts";
import { reasoningOf } from "../records.ts";

/** One scored warm-up sample, as the record builder needs it. */
export interface WarmupScoredSample {
  task: Task;
  /** Index of the sample among its question's samples in the round. */
  sampleIndex: number;
  completion: string;
  /** True when the prompt ended with an opened <think> (the completion then holds only its rest). */
  promptOpensThink: boolean;
  extraction: Extraction;
  correct: boolean;
  reward: number;
}

/** One line of a warm-up dataset file. */
export interface WarmupDatasetRecord {
  /** `<source id>/r<round>/s<sample index>`: unique within a file and across rounds. */
  id: string;
  db_id: string;
  question: string;
  /** A correct query: the sample's SQL when it is correct, else the source's gold. */
  gold_sql: string;
  evidence?: string;
  difficulty?: string;
  /** The sample's extracted SQL (null when none was found). */
  sql: string | null;
  /** The <think> block, else the completion's text before the SQL (empty when there is none). */
  reasoning: string;
  completion: string;
  reward: number;
  correct: boolean;
  round: number;
  sample_index: number;
  source_id: string;
  source_gold_sql: string;
}

/** What was kept of one round. */
export interface WarmupDatasetRound {
  records: WarmupDatasetRecord[];
  /** Questions with at least one record. */
  questions: number;
}

/** The file of round `round` (1-based) of warm-up cell `cellId` in the run's store. */
export function warmupDatasetPath(cellId: string, round: number): string {
  return `warmup/${cellId}/round-${round}.jsonl`;
}

/**
 * A SQL text normalised for duplicate detection: outside quoted strings and identifiers,
 * whitespace collapsed (and dropped around punctuation), letters lower-cased, trailing semicolons
 * removed; quoted parts ('…', "…", `…`, […]) are kept as they are.
 */
export function normalizeSql(sql: string): string {
  const out: string[] = [];
  let i = 0;
  let pendingSpace = false;
  const punct = /[(),;=<>+\-*/|.]/;
  const emit = (s: string) => {
    if (pendingSpace && out.length > 0 && !punct.test(out[out.length - 1].slice(-1)) && !punct.test(s[0])) {
      out.push(" ");
    }
    pendingSpace = false;
    out.push(s);
  };
  while (i < sql.length) {
    const c = sql[i];
    if (/\s/.test(c)) {
      pendingSpace = true;
      i++;
      continue;
    }
    const close = c === "'" ? "'" : c === '"' ? '"' : c === "`" ? "`" : c === "[" ? "]" : null;
    if (close) {
      let j = i + 1;
      for (;;) {
        if (j >= sql.length) break;
        if (sql[j] === close) {
          // A doubled quote escapes itself ('it''s').
          if (close !== "]" && sql[j + 1] === close) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      emit(sql.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    emit(c.toLowerCase());
    i++;
  }
  return out.join("").replace(/;+$/, "");
}

/** The reasoning of a completion: its <think> block, else its text before the extracted SQL. */
export function sampleReasoning(completion: string, extraction: Extraction, promptOpensThink = false): string {
  const think = reasoningOf(completion, promptOpensThink);
  if (think !== null) return think;
  if (extraction.sql === null) return completion.trim();
  const at = completion.lastIndexOf(extraction.sql);
  if (at < 0) return "";
  // Drop the opening of the answer tag or fence the SQL sits in.
  return completion.slice(0, at).replace(/(?:<answer>|```[A-Za-z]*|\s)+$/i, "").trim();
}

/**
 * The dataset records of one round (1-based `round`), in sample order. "correct": execution-correct
 * samples, the first of each distinct normalised SQL per question; "all": every sample; "none": nothing.
 */
export function warmupDatasetRecords(
  samples: readonly WarmupScoredSample[],
  round: number,
  mode: WarmupParams["exportSamples"],
): WarmupDatasetRound {
  const records: WarmupDatasetRecord[] = [];
  if (mode === "none") return { records, questions: 0 };
  const seen = new Map<string, Set<string>>();
  for (const s of samples) {
    const sql = s.extraction.sql;
    if (mode === "correct") {
      if (!s.correct || sql === null) continue;
      const key = normalizeSql(sql);
      let keys = seen.get(s.task.id);
      if (!keys) seen.set(s.task.id, keys = new Set());
      if (keys.has(key)) continue;
      keys.add(key);
    } else if (!seen.has(s.task.id)) {
      seen.set(s.task.id, new Set());
    }
    const t = s.task;
    const r: WarmupDatasetRecord = {
      id: `${t.id}/r${round}/s${s.sampleIndex}`,
      db_id: t.db_id,
      question: t.question,
      gold_sql: s.correct && sql !== null ? sql : t.gold_sql,
      sql,
      reasoning: sampleReasoning(s.completion, s.extraction, s.promptOpensThink),
      completion: s.completion,
      reward: s.reward,
      correct: s.correct,
      round,
      sample_index: s.sampleIndex,
      source_id: t.id,
      source_gold_sql: t.gold_sql,
    };
    if (t.evidence !== undefined) r.evidence = t.evidence;
    if (t.difficulty !== undefined) r.difficulty = t.difficulty;
    records.push(r);
  }
  return { records, questions: seen.size };
}

/** Records as JSON Lines (each line ends with a newline; empty text for no records). */
export function encodeWarmupDataset(records: readonly WarmupDatasetRecord[]): string {
  return records.map((r) => JSON.stringify(r) + "\n").join("");
}
