// Reads the corpus sources from disk: the demo's train split (never test, held-out or the clinic
// database, which are the evaluation) and Spider's training questions, with every database's
// schema introspected through sql.js.
import { join } from "node:path";
import { Rng } from "../../core/rng.ts";
import { type DbSchema, introspectSchema, type IntrospectOptions, type SqlQueryable } from "../../core/schema.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import type { CorpusQuestion, CorpusSources } from "./corpus.ts";
import { maskSql, syntheticQuestions } from "./synthetic.ts";

/** The demo database held out of every training set. */
export const HELD_OUT_DB = "clinic";

/** Where the sources are. */
export interface CorpusPaths {
  /** public/demo (train.jsonl, test.jsonl, heldout.jsonl and <db>/<db>.sqlite). */
  demoDir: string;
  /** Spider's training folder (questions.jsonl, database/<db>/<db>.sqlite); absent: demo only. */
  spiderDir?: string;
  /** At most this many Spider questions, in file order (tests). */
  spiderLimit?: number;
  /** Spider databases left out of the corpus entirely (their questions, DDL and SQL), for held-out evaluation. */
  spiderHoldout?: string[];
  /**
   * Synthetic questions per Spider database (synthetic.ts), four times as many per demo database;
   * 0 or absent: none. Any whose query, literals masked, is an evaluation question's is dropped.
   */
  synthetic?: number;
}

/** Values per column the synthetic questions draw from (the evidence probes draw theirs the same way). */
export const SYNTHETIC_VALUES: IntrospectOptions = { maxExamples: 16, maxExampleChars: 40, exampleScanRows: 5000 };
/** Seed of the synthetic questions (fixed: the corpus key names the count, not the seed). */
const SYNTHETIC_SEED = 20261130;

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function str(o: Record<string, unknown>, k: string, where: string): string {
  const v = o[k];
  if (typeof v !== "string") throw new Error(`${where}: field ${k} is not a string`);
  return v;
}

async function jsonl(path: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(path);
  return text.split("\n").filter((l) => l.trim() !== "").map((l, i) => {
    const o: unknown = JSON.parse(l);
    if (!isRecord(o)) throw new Error(`${path}:${i + 1}: not a JSON object`);
    return o;
  });
}

function isExecResult(x: unknown): x is { columns: string[]; values: unknown[][] }[] {
  return Array.isArray(x) && x.every((r) => isRecord(r) && Array.isArray(r.columns) && Array.isArray(r.values));
}

/** The schema of the SQLite file at `path`. */
export async function schemaOfFile(path: string, dbId: string, opts: IntrospectOptions = {}): Promise<DbSchema> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database(await Deno.readFile(path));
  try {
    const q: SqlQueryable = {
      exec: (sql) => {
        const r: unknown = db.exec(sql);
        if (!isExecResult(r)) throw new Error("sql.js exec returned an unexpected shape");
        return r;
      },
    };
    return introspectSchema(q, dbId, opts);
  } finally {
    db.close();
  }
}

/** Questions and schemas of the corpus, and what was excluded to keep the evaluation clean. */
export async function loadCorpusSources(p: CorpusPaths): Promise<CorpusSources & { excluded: { heldOutDb: number; evalText: number; evalSql?: number } }> {
  const evalQuestions = new Set<string>();
  const evalSql = new Set<string>();
  for (const split of ["test", "heldout"]) {
    for (const o of await jsonl(join(p.demoDir, `${split}.jsonl`))) {
      evalQuestions.add(str(o, "question", split).trim());
      evalSql.add(maskSql(str(o, "gold_sql", split)));
    }
  }
  const questions: CorpusQuestion[] = [];
  let heldOutDb = 0, evalText = 0;
  for (const o of await jsonl(join(p.demoDir, "train.jsonl"))) {
    const q: CorpusQuestion = {
      source: "demo", db_id: str(o, "db_id", "train.jsonl"), question: str(o, "question", "train.jsonl"),
      evidence: typeof o.evidence === "string" ? o.evidence : undefined, gold_sql: str(o, "gold_sql", "train.jsonl"),
    };
    if (q.db_id === HELD_OUT_DB) heldOutDb++;
    else if (evalQuestions.has(q.question.trim())) evalText++;
    else questions.push(q);
  }
  if (p.spiderDir) {
    const all = await jsonl(join(p.spiderDir, "questions.jsonl"));
    for (const o of all.slice(0, p.spiderLimit ?? all.length)) {
      const q: CorpusQuestion = { source: "spider", db_id: str(o, "db_id", "questions.jsonl"), question: str(o, "question", "questions.jsonl"), gold_sql: str(o, "query", "questions.jsonl") };
      if (q.db_id === HELD_OUT_DB || p.spiderHoldout?.includes(q.db_id)) heldOutDb++;
      else if (evalQuestions.has(q.question.trim())) evalText++;
      else questions.push(q);
    }
  }
  const schemas = new Map<string, DbSchema>();
  const dbs: { id: string; source: CorpusQuestion["source"]; path: string }[] = [];
  for (const q of questions) {
    if (schemas.has(q.db_id)) continue;
    const path = q.source === "demo" ? join(p.demoDir, q.db_id, `${q.db_id}.sqlite`) : join(p.spiderDir ?? "", "database", q.db_id, `${q.db_id}.sqlite`);
    schemas.set(q.db_id, await schemaOfFile(path, q.db_id));
    dbs.push({ id: q.db_id, source: q.source, path });
  }
  let dropped = 0;
  if (p.synthetic && p.synthetic > 0) {
    const rng = new Rng(SYNTHETIC_SEED);
    const keep = (sql: string) => {
      const ok = !evalSql.has(maskSql(sql));
      if (!ok) dropped++;
      return ok;
    };
    for (const d of dbs) {
      const values = await schemaOfFile(d.path, d.id, SYNTHETIC_VALUES);
      const n = d.source === "demo" ? 4 * p.synthetic : p.synthetic;
      for (const s of syntheticQuestions(values, n, new Rng(rng.nextU32()), keep)) {
        if (evalQuestions.has(s.question.trim())) {
          evalText++;
          continue;
        }
        questions.push({ source: d.source, db_id: d.id, question: s.question, gold_sql: s.gold_sql, synthetic: true });
      }
    }
  }
  return { questions, schemas, excluded: { heldOutDb, evalText, ...(p.synthetic ? { evalSql: dropped } : {}) } };
}
