// Reads the corpus sources from disk: the demo's generic questions (never a concept question of any
// split, nor a concept's definition, nor the clinic database: those are what RLVR teaches and the
// evaluation measures) and Spider's training questions, with every database's schema introspected
// through sql.js.
import { join } from "node:path";
import { Rng } from "../../core/rng.ts";
import { type DbSchema, type IntrospectOptions, introspectSchema, type SqlQueryable } from "../../core/schema.ts";
import { loadSqlJs } from "../sql-wasm.ts";
import type { CorpusQuestion, CorpusSources } from "./corpus.ts";
import { CONCEPT_SPLITS } from "../demo/concepts.ts";
import { maskSql, PATTERNS, type SyntheticQuestion, syntheticQuestions } from "./synthetic.ts";
import { vary } from "./surface.ts";

/** The demo database held out of every training set. */
export const HELD_OUT_DB = "clinic";

/** Where the sources are. */
export interface CorpusPaths {
  /** public/demo (generic.jsonl, the concept splits, concepts.json and <db>/<db>.sqlite). */
  demoDir: string;
  /** Spider's training folder (questions.jsonl, database/<db>/<db>.sqlite); absent: demo only. */
  spiderDir?: string;
  /** At most this many Spider questions, in file order (tests). */
  spiderLimit?: number;
  /** Spider databases left out of the corpus entirely (their questions, DDL and SQL), for held-out evaluation. */
  spiderHoldout?: string[];
  /**
   * Synthetic questions per Spider database (synthetic.ts), four times as many per demo database;
   * 0 or absent: none. Any that holds a demo concept is dropped (`contaminates`).
   */
  synthetic?: number;
  /**
   * Share of each database's synthetic questions made by the evidence patterns (synthetic.ts's
   * EVIDENCE_PATTERNS: made-up terms defined in the evidence); default DEFAULT_DEFINED_SHARE.
   */
  definedShare?: number;
  /**
   * Spider-Syn's folder (train.jsonl: Spider's training questions rewritten by hand with synonyms,
   * same SQL and databases as spiderDir's): each rewritten question that differs from Spider's own
   * is added beside it, under the same rules (held-out databases, decontamination). Needs spiderDir.
   */
  spiderSynDir?: string;
  /** Share of synthetic questions reworded by surface.ts's `vary` (imperatives, casing, numbers in words, typos …); default 0. */
  surface?: number;
}

/** The default share of evidence-pattern questions among the synthetic ones (uniform drawing gives 4 of 21 patterns, 19%). */
export const DEFAULT_DEFINED_SHARE = 0.3;

/** Values per column the synthetic questions draw from (the evidence probes draw theirs the same way). */
export const SYNTHETIC_VALUES: IntrospectOptions = { maxExamples: 16, maxExampleChars: 40, exampleScanRows: 5000 };
/** Seed of the synthetic questions (fixed: the corpus key names the count, not the seed). */
const SYNTHETIC_SEED = 20261130;
/** Seed of the surface rewording (its own stream: the synthetic questions drawn are the same with or without it). */
const SURFACE_SEED = 20261207;

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

/** What the corpus must never hold: every concept question of the demo, and the concepts themselves. */
export interface Contamination {
  /** Question texts of every concept split (train included: RLVR is what teaches them). */
  questions: Set<string>;
  /** Their gold queries with literals masked (maskSql). */
  maskedSql: Set<string>;
  /** The concepts' defining SQL, normalised (normSql): no corpus query may contain one. */
  fragments: string[];
  /** The concepts' words (terms, lower-case): no question or evidence on a demo database may use one. */
  terms: string[];
}

/** SQL with case and spacing normalised (literals kept): for finding a concept's definition inside a query. */
export function normSql(sql: string): string {
  return sql.replace(/\s+/g, " ").replace(/\s*([(),=<>])\s*/g, "$1").trim().toLowerCase();
}

function isDefinition(x: unknown): x is { id: string; db: string; term: string; fragment: string } {
  return isRecord(x) && typeof x.term === "string" && typeof x.fragment === "string" && typeof x.db === "string";
}

/** FNV-1a over the demo files the corpus depends on (generic questions, concept splits, definitions): part of the corpus cache's key. */
export async function demoFingerprint(demoDir: string): Promise<string> {
  let h = 0x811c9dc5;
  for (const f of ["generic.jsonl", ...CONCEPT_SPLITS.map((s) => `${s}.jsonl`), "concepts.json"]) {
    for (const b of await Deno.readFile(join(demoDir, f))) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/** The demo's concept questions and definitions (public/demo: the four splits and concepts.json). */
export async function demoContamination(demoDir: string): Promise<Contamination> {
  const c: Contamination = { questions: new Set(), maskedSql: new Set(), fragments: [], terms: [] };
  for (const split of CONCEPT_SPLITS) {
    for (const o of await jsonl(join(demoDir, `${split}.jsonl`))) {
      c.questions.add(str(o, "question", split).trim());
      c.maskedSql.add(maskSql(str(o, "gold_sql", split)));
    }
  }
  const defs: unknown = JSON.parse(await Deno.readTextFile(join(demoDir, "concepts.json")));
  if (!Array.isArray(defs) || !defs.every(isDefinition)) {
    throw new Error(`${demoDir}/concepts.json: not a list of definitions`);
  }
  for (const d of defs) {
    c.fragments.push(normSql(d.fragment));
    c.terms.push(d.term.toLowerCase());
  }
  return c;
}

/**
 * normSql'd SQL with year comparisons said as day comparisons, `strftime('%y',c)<'2012'` as `c<'2012-01-01'` (and >=,
 * > and <= likewise): a concept defined by a date ("hired_on < '2012-01-01'") is the same condition said by its year.
 */
export function yearsAsDays(sql: string): string {
  return sql.replace(/strftime\('%y',([^()]+)\)(<=|>=|<|>)'(\d{4})'/g, (_, col: string, op: string, y: string) => {
    const next = `${Number(y) + 1}-01-01`;
    const day = { "<": [`<`, `${y}-01-01`], ">=": [`>=`, `${y}-01-01`], ">": [`>=`, next], "<=": [`<`, next] }[op]!;
    return `${col}${day[0]}'${day[1]}'`;
  });
}

/** Why a candidate question breaks the contamination rules (null: it may enter the corpus). */
export function contaminates(
  c: Contamination,
  q: { source: CorpusQuestion["source"]; question: string; gold_sql: string; evidence?: string },
): "question" | "sql" | "definition" | "term" | null {
  if (c.questions.has(q.question.trim())) return "question";
  if (c.maskedSql.has(maskSql(q.gold_sql))) return "sql";
  const sql = normSql(q.gold_sql);
  const days = yearsAsDays(sql);
  if (c.fragments.some((f) => sql.includes(f) || days.includes(f))) return "definition";
  if (q.source === "demo") {
    const text = `${q.question} ${q.evidence ?? ""}`.toLowerCase();
    // A prefix match: "churned user" also finds "churned users".
    if (c.terms.some((t) => new RegExp(`\\b${t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`).test(text))) return "term";
  }
  return null;
}

/** What was left out of the corpus to keep the evaluation clean, by reason. */
export interface Excluded {
  heldOutDb: number;
  evalText: number;
  evalSql?: number;
  definition?: number;
  term?: number;
}

/**
 * Questions and schemas of the corpus, and what was excluded to keep the evaluation clean: the demo
 * part is its generic questions (generic.jsonl: no concept in them) and, with `synthetic`, questions
 * made from its databases; no concept question of any split, no concept's definition (its SQL, in
 * any query) and, on the demo databases, no concept's word enters it; the clinic never does.
 */
export async function loadCorpusSources(p: CorpusPaths): Promise<CorpusSources & { excluded: Excluded }> {
  const bad = await demoContamination(p.demoDir);
  const questions: CorpusQuestion[] = [];
  const excluded: Excluded = {
    heldOutDb: 0,
    evalText: 0,
    ...(p.synthetic ? { evalSql: 0, definition: 0, term: 0 } : {}),
  };
  const admit = (q: CorpusQuestion): boolean => {
    const why = contaminates(bad, q);
    if (why === null) return true;
    if (why === "question") excluded.evalText++;
    else if (!q.synthetic) {
      throw new Error(
        `corpus: the ${q.source} question "${q.question}" on ${q.db_id} holds a demo concept (${why}); the demo's generic questions must not`,
      );
    } else if (why === "sql") excluded.evalSql = (excluded.evalSql ?? 0) + 1;
    else excluded[why] = (excluded[why] ?? 0) + 1;
    return false;
  };
  for (const o of await jsonl(join(p.demoDir, "generic.jsonl"))) {
    const q: CorpusQuestion = {
      source: "demo",
      db_id: str(o, "db_id", "generic.jsonl"),
      question: str(o, "question", "generic.jsonl"),
      evidence: typeof o.evidence === "string" ? o.evidence : undefined,
      gold_sql: str(o, "gold_sql", "generic.jsonl"),
    };
    if (q.db_id === HELD_OUT_DB) excluded.heldOutDb++;
    else if (admit(q)) questions.push(q);
  }
  if (p.spiderDir) {
    const all = await jsonl(join(p.spiderDir, "questions.jsonl"));
    for (const o of all.slice(0, p.spiderLimit ?? all.length)) {
      const q: CorpusQuestion = {
        source: "spider",
        db_id: str(o, "db_id", "questions.jsonl"),
        question: str(o, "question", "questions.jsonl"),
        gold_sql: str(o, "query", "questions.jsonl"),
      };
      if (q.db_id === HELD_OUT_DB || p.spiderHoldout?.includes(q.db_id)) excluded.heldOutDb++;
      else if (admit(q)) questions.push(q);
    }
    if (p.spiderSynDir) {
      const have = new Set(all.map((o) => o.db_id));
      const inCorpus = new Set(questions.map((x) => x.db_id));
      for (const o of await jsonl(join(p.spiderSynDir, "train.jsonl"))) {
        const q: CorpusQuestion = {
          source: "spider",
          db_id: str(o, "db_id", "spider-syn"),
          question: str(o, "question", "spider-syn"),
          gold_sql: str(o, "query", "spider-syn"),
        };
        // Spider-Syn's own copy of a question is already in; a database Spider's folder lacks has no schema.
        if (q.question.trim() === String(o.original ?? "").trim() || !have.has(q.db_id)) continue;
        if (p.spiderLimit !== undefined && !inCorpus.has(q.db_id)) continue;
        if (q.db_id === HELD_OUT_DB || p.spiderHoldout?.includes(q.db_id)) excluded.heldOutDb++;
        else if (admit(q)) questions.push(q);
      }
    }
  }
  const schemas = new Map<string, DbSchema>();
  const dbs: { id: string; source: CorpusQuestion["source"]; path: string }[] = [];
  for (const q of questions) {
    if (schemas.has(q.db_id)) continue;
    const path = q.source === "demo"
      ? join(p.demoDir, q.db_id, `${q.db_id}.sqlite`)
      : join(p.spiderDir ?? "", "database", q.db_id, `${q.db_id}.sqlite`);
    schemas.set(q.db_id, await schemaOfFile(path, q.db_id));
    dbs.push({ id: q.db_id, source: q.source, path });
  }
  if (p.synthetic && p.synthetic > 0) {
    const rng = new Rng(SYNTHETIC_SEED);
    const srng = new Rng(SURFACE_SEED);
    const surface = p.surface ?? 0;
    for (const d of dbs) {
      const values = await schemaOfFile(d.path, d.id, SYNTHETIC_VALUES);
      const n = d.source === "demo" ? 4 * p.synthetic : p.synthetic;
      const keep = (s: SyntheticQuestion) =>
        admit({
          source: d.source,
          db_id: d.id,
          question: s.question,
          gold_sql: s.gold_sql,
          evidence: s.evidence,
          synthetic: true,
        });
      for (
        const s of syntheticQuestions(
          values,
          n,
          new Rng(rng.nextU32()),
          keep,
          PATTERNS,
          p.definedShare ?? DEFAULT_DEFINED_SHARE,
        )
      ) {
        let question = s.question;
        if (surface > 0 && srng.next() < surface) {
          // Reworded only where the new wording breaks no rule either (a synonym could name a concept).
          const v = vary(s.question, s.gold_sql, srng);
          if (
            contaminates(bad, { source: d.source, question: v, gold_sql: s.gold_sql, evidence: s.evidence }) === null
          ) question = v;
        }
        questions.push({
          source: d.source,
          db_id: d.id,
          question,
          gold_sql: s.gold_sql,
          synthetic: true,
          ...(s.evidence ? { evidence: s.evidence } : {}),
        });
      }
    }
  }
  return { questions, schemas, excluded };
}
