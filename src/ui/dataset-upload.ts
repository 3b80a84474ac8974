// Datasets the user uploads (dataset cells with source "upload"): question files (BIRD JSON,
// Spider JSON/JSONL, our JSONL) and SQLite databases, single files or a folder in Spider/BIRD
// layout. Their bytes stay in memory for the session, in one page-wide store; the runner reads
// them through `uploadedDataset()` as recipe/env.web.ts's `UploadedDataset`. A bad file is
// reported and skipped; what was uploaded before is never dropped by a later mistake.
import { parseQuestions, type QuestionFormat } from "../core/loaders.ts";
import type { Task } from "../core/types.ts";
import type { UploadedDataset } from "../runtime/recipe/env.web.ts";

/** A file as the page read it: its name, its path inside a picked folder (else the name) and its bytes. */
export interface PickedFile {
  name: string;
  path: string;
  bytes: Uint8Array;
}

/** A parsed questions file. */
export interface QuestionFile {
  name: string;
  text: string;
  format: QuestionFormat;
  tasks: Task[];
  /** Records that could not be read, "line N: why" (or "item N: why"); they are left out. */
  problems: string[];
}

/** An uploaded database. */
export interface UploadedDb {
  id: string;
  /** Where it came from (folder path or file name). */
  path: string;
  bytes: Uint8Array;
}

/** What one batch of files did: errors (files refused) and notices (files replaced or ignored). */
export interface UploadReport {
  errors: string[];
  notices: string[];
}

const SQLITE_MAGIC = "SQLite format 3\u0000";
const DB_EXT = /\.(sqlite3?|db)$/i;
const QUESTIONS_EXT = /\.jsonl?$/i;
/** Schema files of Spider/BIRD folders: JSON, but not questions. */
const NOT_QUESTIONS = /(^|[/_-])tables\.json$|(^|\/)(package|manifest|tsconfig)\.json$/i;
/** Preferred questions file of a folder, first match wins (Spider's, BIRD's and ours). */
const PREFERRED = [/(^|\/)questions\.jsonl?$/i, /(^|\/)train(_spider)?\.jsonl?$/i, /(^|\/)dev\.jsonl?$/i, /mini_dev/i];

/** True when the bytes start with SQLite's file header. */
export function isSqliteFile(bytes: Uint8Array): boolean {
  if (bytes.byteLength < 100) return false;
  for (let i = 0; i < SQLITE_MAGIC.length; i++) if (bytes[i] !== SQLITE_MAGIC.charCodeAt(i)) return false;
  return true;
}

/** The db_id of a database file: its name without the extension ("concert_singer.sqlite" -> "concert_singer"). */
export function dbIdOf(fileName: string): string {
  return (fileName.split("/").pop() ?? fileName).replace(DB_EXT, "");
}

/** Parses a questions file; throws an Error whose message says why (with a line number when JSON says one). */
export function readQuestionFile(name: string, text: string): QuestionFile {
  let q;
  try {
    q = parseQuestions(text);
  } catch (e) {
    const msg = (e instanceof Error ? e.message : String(e)).replace(/\s+/g, " ");
    const line = /\bline \d+/.test(msg) ? null : jsonErrorLine(text);
    throw new Error(`${name} does not parse as a questions file: ${msg}${line ? ` (line ${line})` : ""}`);
  }
  // A JSONL record's JSON error says "line 1" of the record; the file's line number is already in `where`.
  const problems = q.problems.map((p) =>
    `${p.where}: ${p.message.replace(/ \(line 1 column (\d+)\)/, " (column $1)")}`
  );
  if (q.items.length === 0) {
    throw new Error(
      `${name} holds no readable question${
        problems.length
          ? ` (${problems.slice(0, 3).join("; ")}${problems.length > 3 ? `; ${problems.length - 3} more` : ""})`
          : ""
      }`,
    );
  }
  return { name, text, format: q.format, tasks: q.items.map((i) => i.task), problems };
}

/**
 * The line (1-based) of the first JSON syntax error in `text`, for the engines' messages that name
 * none ("Unexpected token '}', ... is not valid JSON"): the shortest prefix whose parse fails for a
 * reason other than ending early ends at the bad character. Null when the text parses.
 */
export function jsonErrorLine(text: string): number | null {
  const failsInside = (n: number): boolean => {
    try {
      JSON.parse(text.slice(0, n));
      return false;
    } catch (e) {
      const m = e instanceof Error ? e.message : "";
      const at = /at position (\d+)/.exec(m);
      return !/end of JSON input/i.test(m) && !(at && Number(at[1]) >= n);
    }
  };
  if (!failsInside(text.length)) return null;
  let lo = 1;
  let hi = text.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (failsInside(mid)) hi = mid;
    else lo = mid + 1;
  }
  return text.slice(0, lo - 1).split("\n").length;
}

/** The page's uploaded files; fires "change" whenever they change. */
export class UploadStore extends EventTarget {
  /** Question files by name; `active` is the one runs read. */
  readonly questionFiles = new Map<string, QuestionFile>();
  active: string | null = null;
  readonly databases = new Map<string, UploadedDb>();
  /** What the last batch of files did. */
  report: UploadReport = { errors: [], notices: [] };
  /** Bumped on every change (a cheap identity for caches such as the SQL pool). */
  version = 0;

  /** Adds files (picked one by one or as a folder): databases by header, questions by extension. */
  add(files: readonly PickedFile[], o: { folder?: boolean } = {}): UploadReport {
    const report: UploadReport = { errors: [], notices: [] };
    const decoder = new TextDecoder();
    const found: QuestionFile[] = [];
    let ignored = 0;
    for (const f of files) {
      if (DB_EXT.test(f.name) || (!o.folder && !QUESTIONS_EXT.test(f.name))) {
        if (!isSqliteFile(f.bytes)) {
          report.errors.push(
            `${f.path} is not a SQLite database (it does not start with the "SQLite format 3" header); it was not added`,
          );
          continue;
        }
        const id = dbIdOf(f.name);
        if (this.databases.has(id)) report.notices.push(`database ${id} replaced by ${f.path}`);
        this.databases.set(id, { id, path: f.path, bytes: f.bytes });
      } else if (QUESTIONS_EXT.test(f.name) && !(o.folder && NOT_QUESTIONS.test(f.path))) {
        try {
          found.push(readQuestionFile(f.path, decoder.decode(f.bytes)));
        } catch (e) {
          // In a folder, JSON that is not questions (a config, a schema) is expected: a notice, not an error.
          const msg = e instanceof Error ? e.message : String(e);
          if (o.folder) report.notices.push(`${msg}; skipped`);
          else report.errors.push(`${msg}; the questions shown before are kept`);
        }
      } else ignored++;
    }
    for (const q of found) {
      if (this.questionFiles.has(q.name)) report.notices.push(`${q.name} replaced`);
      this.questionFiles.set(q.name, q);
    }
    if (found.length) this.active = preferred(found.map((q) => q.name));
    if (ignored) report.notices.push(`${ignored} other file${ignored === 1 ? "" : "s"} in the folder ignored`);
    this.report = report;
    this.changed();
    return report;
  }

  /** Makes `name` the questions file that runs read. */
  choose(name: string): void {
    if (!this.questionFiles.has(name) || this.active === name) return;
    this.active = name;
    this.changed();
  }

  /** Forgets every uploaded file. */
  clear(): void {
    this.questionFiles.clear();
    this.databases.clear();
    this.active = null;
    this.report = { errors: [], notices: [] };
    this.changed();
  }

  /** The active questions file, or null. */
  get questions(): QuestionFile | null {
    return this.active ? this.questionFiles.get(this.active) ?? null : null;
  }

  /** db_ids the active questions name that were not uploaded. */
  missingDatabases(): string[] {
    const q = this.questions;
    if (!q) return [];
    return [...new Set(q.tasks.map((t) => t.db_id))].filter((id) => !this.databases.has(id)).sort();
  }

  /** The upload in the runner's shape (env.web.ts `UploadedDataset`), or null until questions are there. */
  toUploadedDataset(): UploadedDataset | null {
    const q = this.questions;
    if (!q) return null;
    return { questions: q.text, databases: new Map([...this.databases].map(([id, d]) => [id, d.bytes])) };
  }

  private changed(): void {
    this.version++;
    this.dispatchEvent(new Event("change"));
  }
}

function preferred(names: string[]): string {
  for (const re of PREFERRED) {
    const hit = names.find((n) => re.test(n));
    if (hit) return hit;
  }
  return [...names].sort()[0];
}

/** The page's one upload store (a session's uploads; nothing is written to disk or storage). */
export const uploads = new UploadStore();

/**
 * The files uploaded in this page as the runner takes them (`webEnv({ uploads })` in
 * src/runtime/recipe/env.web.ts): the active questions file's text and database bytes by db_id.
 * Null until a questions file has been uploaded. The bytes are the store's: the run controller
 * copies them once and transfers the copies to the GPU worker (run-controller.ts `uploadsFor`).
 */
export function uploadedDataset(): UploadedDataset | null {
  return uploads.toUploadedDataset();
}
