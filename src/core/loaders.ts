// Dataset loaders: BIRD JSON, Spider JSON array or JSONL, our own JSONL; and prediction files
// (BIRD's dict, Spider's one SQL per line). Pure functions of the text: reading files is the
// caller's business. A malformed record is reported with its line (or item) number and skipped;
// the others still load.
import type { Task } from "./types.ts";

/** Which layout a question file turned out to have. */
export type QuestionFormat = "bird" | "spider" | "rlvr" | "mixed" | "empty";

/** One task with its position in the file (0-based record number, counting malformed ones). */
export interface LoadedTask {
  position: number;
  task: Task;
}

/** A record that could not be read; `where` is "line N" (1-based) or "item N" (0-based). */
export interface LoadProblem {
  where: string;
  message: string;
  /** The record's position, when the problem is one record of a question file. */
  position?: number;
}

/** What a question file yielded. */
export interface LoadedQuestions {
  format: QuestionFormat;
  items: LoadedTask[];
  problems: LoadProblem[];
  /** Number of records in the file, valid or not: predictions are keyed by these positions. */
  records: number;
}

type Layout = "bird" | "spider" | "rlvr";

/**
 * A JSON.parse error without the text it quotes: V8 writes the start of the offending input into
 * its message, which for a wrong file (a binary, someone else's file) would copy that file's
 * content into our errors and logs.
 */
export function jsonError(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg
    .replace(/, "[\s\S]*"(\.\.\.)? is not valid JSON$/, "")
    .replace(/^"[\s\S]*"(\.\.\.)? is not valid JSON$/, "not valid JSON")
    .replace(/^Unexpected token '[\s\S]*'$/, "unexpected character");
}

/**
 * Throws when a question file yielded no valid question (empty, binary or garbage), naming the
 * file and its first problems: such a file is an error, never a score over zero questions.
 */
export function requireQuestions(q: LoadedQuestions, where: string): void {
  if (q.items.length > 0) return;
  const why = q.records === 0
    ? "the file holds no records"
    : q.problems.slice(0, 3).map((p) => `${p.where}: ${p.message}`).join("; ");
  throw new Error(`${where}: no questions (${why})`);
}

/** Parses a question file (JSON array or JSONL of BIRD, Spider or own records). */
export function parseQuestions(text: string): LoadedQuestions {
  const body = text.replace(/^\uFEFF/, "");
  const first = body.trimStart()[0];
  if (first === "[") {
    let arr: unknown;
    try {
      arr = JSON.parse(body);
    } catch (e) {
      throw new Error(`not valid JSON: ${jsonError(e)}`);
    }
    if (!Array.isArray(arr)) throw new Error("expected a JSON array of questions");
    const out = collect(arr.map((rec, i) => ({ where: `item ${i}`, rec, position: i })));
    return { ...out, records: arr.length };
  }
  const lines = body.split(/\r?\n/);
  const recs: { where: string; rec: unknown; position: number }[] = [];
  const problems: LoadProblem[] = [];
  let position = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === "") continue;
    const where = `line ${i + 1}`;
    try {
      recs.push({ where, rec: JSON.parse(lines[i]), position });
    } catch (e) {
      problems.push({ where, message: `not valid JSON: ${jsonError(e)}`, position });
    }
    position++;
  }
  const out = collect(recs);
  const all = [...problems, ...out.problems].sort((a, b) => lineOf(a.where) - lineOf(b.where));
  return { format: out.format, items: out.items, problems: all, records: position };
}

function lineOf(where: string): number {
  return Number(where.replace(/^\D+/, ""));
}

function collect(recs: { where: string; rec: unknown; position: number }[]): Omit<LoadedQuestions, "records"> {
  const items: LoadedTask[] = [];
  const problems: LoadProblem[] = [];
  const layouts = new Set<Layout>();
  for (const { where, rec, position } of recs) {
    const r = toTask(rec, position);
    if (typeof r === "string") {
      problems.push({ where, message: r, position });
    } else {
      layouts.add(r.layout);
      items.push({ position, task: r.task });
    }
  }
  const format: QuestionFormat = layouts.size === 0 ? "empty" : layouts.size > 1 ? "mixed" : [...layouts][0];
  return { format, items, problems };
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function str(r: Record<string, unknown>, key: string): string | undefined {
  const v = r[key];
  return typeof v === "string" ? v : undefined;
}

/** Reads one record, or says what is wrong with it. */
function toTask(rec: unknown, position: number): { layout: Layout; task: Task } | string {
  if (!isRecord(rec)) return "expected a JSON object";
  const db_id = str(rec, "db_id");
  const question = str(rec, "question");
  if (!db_id) return 'missing or non-string "db_id"';
  if (question === undefined) return 'missing or non-string "question"';
  if (!/^[A-Za-z0-9_.-]+$/.test(db_id) || db_id.startsWith(".")) {
    return `db_id ${JSON.stringify(db_id)} is not a plain name`;
  }
  const evidence = str(rec, "evidence");
  const difficulty = str(rec, "difficulty");
  const completion = str(rec, "completion");
  const opt = {
    ...(evidence !== undefined ? { evidence } : {}),
    ...(difficulty !== undefined ? { difficulty } : {}),
    ...(completion !== undefined ? { completion } : {}),
  };
  if ("gold_sql" in rec) {
    const gold_sql = str(rec, "gold_sql");
    const id = rec.id;
    if (gold_sql === undefined) return 'non-string "gold_sql"';
    if (typeof id !== "string" && typeof id !== "number") return 'missing "id" (string or number)';
    return { layout: "rlvr", task: { id: String(id), db_id, question, gold_sql, ...opt } };
  }
  const sql = str(rec, "SQL") ?? str(rec, "query");
  if (sql === undefined) return 'missing gold SQL ("SQL", "query" or "gold_sql")';
  if ("question_id" in rec) {
    const qid = rec.question_id;
    if (typeof qid !== "number" && typeof qid !== "string") return 'non-scalar "question_id"';
    return { layout: "bird", task: { id: String(qid), db_id, question, gold_sql: sql, ...opt } };
  }
  return { layout: "spider", task: { id: String(position), db_id, question, gold_sql: sql, ...opt } };
}

/** Predictions keyed by question position; `problems` as for questions. */
export interface LoadedPredictions {
  format: "bird" | "lines";
  sql: Map<number, string>;
  problems: LoadProblem[];
}

/** BIRD's separator between the SQL and the db_id in its prediction dict. */
export const BIRD_SEPARATOR = "\t----- bird -----\t";

/**
 * Parses a prediction file: BIRD's dict `{"0": "SQL\t----- bird -----\tdb_id", ...}` keyed by
 * question position, or plain text with one SQL per line (Spider's format, line i = question i).
 */
export function parsePredictions(text: string): LoadedPredictions {
  const body = text.replace(/^\uFEFF/, "");
  const problems: LoadProblem[] = [];
  const sql = new Map<number, string>();
  if (body.trimStart().startsWith("{")) {
    let obj: unknown;
    try {
      obj = JSON.parse(body);
    } catch (e) {
      throw new Error(`prediction file starts with "{" but is not valid JSON: ${jsonError(e)}`);
    }
    if (!isRecord(obj)) throw new Error("expected a JSON object of predictions");
    for (const [k, v] of Object.entries(obj)) {
      if (!/^\d+$/.test(k)) {
        problems.push({ where: `key ${JSON.stringify(k)}`, message: "key is not a question position" });
      } else if (typeof v !== "string") {
        problems.push({ where: `key ${k}`, message: "value is not a string" });
      } else {
        const cut = v.indexOf(BIRD_SEPARATOR);
        sql.set(Number(k), cut >= 0 ? v.slice(0, cut) : v);
      }
    }
    return { format: "bird", sql, problems };
  }
  const lines = body.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  lines.forEach((line, i) => sql.set(i, line));
  return { format: "lines", sql, problems };
}
