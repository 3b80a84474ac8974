// Builds the demo: SQLite files through sql.js; the organisation's concept questions in four splits
// (concepts.ts: train, test-concepts, test-templates, heldout-db), each carrying its concepts'
// definitions as evidence; and generic questions on the training databases, which only the
// pretraining corpus reads (no concept in them). Every kept gold query returns rows, and returns
// other rows than the same query with its concepts left out: the definition matters.
import type { SqlJsStatic } from "sql.js";
import { Rng } from "../../core/rng.ts";
import type { Task } from "../../core/types.ts";
import { CLINIC_TEMPLATES, clinicDatabase } from "./clinic.ts";
import { definitions, ENTITIES, ENTITY_CONCEPTS, MEASURE_CONCEPTS } from "./concept-defs.ts";
import {
  type ConceptQuestion,
  type ConceptSplit,
  type Definition,
  entityQuestions,
  measureQuestions,
  type Novelty,
  splitOf,
  spread,
} from "./concepts.ts";
import { type DemoDatabase, fill, type QuestionTemplate } from "./gen.ts";
import { SCHOOL_TEMPLATES, schoolDatabase } from "./school.ts";
import { SHOP_TEMPLATES, shopDatabase } from "./shop.ts";
import { SUBSCRIPTION_TEMPLATES, subscriptionsDatabase } from "./subscriptions.ts";
import { WRITTEN, type WrittenQuestion } from "./written.ts";

/** One demo question with where it came from. */
export interface DemoTask extends Task {
  /** The frame (concept questions) or template (generic questions) it was made from. */
  template: string;
  /** The concepts it asks about (absent: a generic question). */
  concepts?: string[];
  /** test-concepts: what is new about it against the train split. */
  novelty?: Novelty[];
}

/** What the generator produces. */
export interface Demo {
  databases: { id: string; bytes: Uint8Array; rows: Record<string, number> }[];
  splits: Record<ConceptSplit, DemoTask[]>;
  /** Generic questions on the training databases: pretraining material, never a concept. */
  generic: DemoTask[];
  definitions: Definition[];
}

/** The held-out database: evaluated only. */
export const HELD_OUT_DB = "clinic";

const SOURCES: { make: (rng: Rng) => DemoDatabase; templates: QuestionTemplate[] }[] = [
  { make: shopDatabase, templates: SHOP_TEMPLATES },
  { make: subscriptionsDatabase, templates: SUBSCRIPTION_TEMPLATES },
  { make: schoolDatabase, templates: SCHOOL_TEMPLATES },
  { make: clinicDatabase, templates: CLINIC_TEMPLATES },
];

/** Questions kept per split (at most), spread over concepts and frames. */
export const SPLIT_SIZES: Record<ConceptSplit, number> = {
  train: 240,
  "test-concepts": 96,
  "test-templates": 64,
  "heldout-db": 48,
  "test-written": WRITTEN.length,
};

/** Writes a generated database into SQLite bytes. */
export function toSqlite(SQL: SqlJsStatic, d: DemoDatabase): Uint8Array {
  const db = new SQL.Database();
  try {
    db.exec("PRAGMA page_size = 4096");
    for (const stmt of d.ddl) db.exec(stmt);
    db.exec("BEGIN");
    for (const [table, rows] of Object.entries(d.tables)) {
      if (!rows.length) continue;
      const ins = db.prepare(`INSERT INTO ${table} VALUES (${rows[0].map(() => "?").join(", ")})`);
      for (const r of rows) ins.run(r);
      ins.free();
    }
    db.exec("COMMIT");
    db.exec("VACUUM");
    return db.export();
  } finally {
    db.close();
  }
}

/** Instantiates a template's questions: each parameter set with phrasings in rotation. */
export function expandTemplate(t: QuestionTemplate, dbId: string, rng: Rng): DemoTask[] {
  const out: DemoTask[] = [];
  t.params.forEach((p, i) => {
    // Every phrasing appears; each parameter set gets two phrasings (or one when there is one).
    const count = Math.min(2, t.phrasings.length);
    const start = rng.int(t.phrasings.length);
    for (let k = 0; k < count; k++) {
      const phrasing = t.phrasings[(start + k) % t.phrasings.length];
      out.push({
        id: `${t.id}.${i}.${k}`,
        db_id: dbId,
        question: fill(phrasing, p),
        ...(t.evidence ? { evidence: t.evidence } : {}),
        gold_sql: t.sql(p),
        difficulty: t.difficulty,
        template: t.id,
      });
    }
  });
  return out;
}

type Db = InstanceType<SqlJsStatic["Database"]>;

/** The rows of `sql` as one comparable string (sorted: BIRD compares as sets), or null when it returns nothing. */
function resultKey(db: Db, sql: string): string | null {
  const rows = db.exec(sql)[0]?.values ?? [];
  if (rows.length === 0 || rows.every((r) => r.every((v) => v === null))) return null;
  return rows.map((r) => JSON.stringify(r)).sort().join("\n");
}

/** Questions whose gold returns rows, other rows than without its concepts; one per question text. */
function usable(db: Db, xs: readonly ConceptQuestion[]): ConceptQuestion[] {
  const seen = new Set<string>();
  const cache = new Map<string, string | null>();
  const run = (sql: string) => {
    if (!cache.has(sql)) cache.set(sql, resultKey(db, sql));
    return cache.get(sql) ?? null;
  };
  return xs.filter((x) => {
    if (seen.has(x.question)) return false;
    seen.add(x.question);
    const gold = run(x.gold_sql);
    return gold !== null && (x.ignoring === null || run(x.ignoring) !== gold);
  });
}

/** A concept question as a task of `split`; its evidence is its concepts' definitions. */
function toTask(x: ConceptQuestion, split: ConceptSplit, i: number, defs: Map<string, Definition>): DemoTask {
  const evidence = x.concepts.map((c) => defs.get(c)?.definition ?? "").filter(Boolean).join("; ");
  return {
    id: `${split}.${x.concepts.join("+")}.${x.frame}.${i}`,
    db_id: x.db_id,
    question: x.question,
    evidence,
    gold_sql: x.gold_sql,
    difficulty: x.difficulty,
    template: x.frame,
    concepts: x.concepts,
    ...(split === "test-concepts" ? { novelty: x.novelty } : {}),
  };
}

/** A hand-written question (written.ts) as a task of test-written; its evidence is its concepts' definitions. */
export function writtenTask(x: WrittenQuestion, i: number, defs: Map<string, Definition>): DemoTask {
  const evidence = x.concepts.map((c) => defs.get(c)?.definition ?? "").filter(Boolean).join("; ");
  return {
    id: `test-written.${i}`,
    db_id: x.db,
    question: x.question,
    evidence,
    gold_sql: x.sql,
    difficulty: x.concepts.length > 1 ? "challenging" : "moderate",
    template: "written",
    concepts: x.concepts,
  };
}

/** Generates the whole demo from `seed`. */
export function buildDemo(SQL: SqlJsStatic, seed = 20261129): Demo {
  const rng = new Rng(seed);
  const defs = definitions();
  const defById = new Map(defs.map((d) => [d.id, d]));
  const demo: Demo = {
    databases: [],
    splits: { train: [], "test-concepts": [], "test-templates": [], "heldout-db": [], "test-written": [] },
    generic: [],
    definitions: defs,
  };
  const pools: Record<ConceptSplit, ConceptQuestion[]> = {
    train: [],
    "test-concepts": [],
    "test-templates": [],
    "heldout-db": [],
    "test-written": [],
  };
  const heldGeneric: DemoTask[] = [];
  for (const src of SOURCES) {
    const d = src.make(new Rng(rng.nextU32()));
    const bytes = toSqlite(SQL, d);
    demo.databases.push({
      id: d.id,
      bytes,
      rows: Object.fromEntries(Object.entries(d.tables).map(([k, v]) => [k, v.length])),
    });
    const qrng = new Rng(rng.nextU32());
    const generic = src.templates.flatMap((t) => expandTemplate(t, d.id, qrng));
    const questions = [
      ...Object.values(ENTITIES).filter((e) => e.db === d.id).flatMap((e) => entityQuestions(e, ENTITY_CONCEPTS)),
      ...MEASURE_CONCEPTS.filter((m) => m.db === d.id).flatMap(measureQuestions),
    ];
    const db = new SQL.Database(bytes);
    try {
      for (const x of usable(db, questions)) pools[d.id === HELD_OUT_DB ? "heldout-db" : splitOf(x)].push(x);
    } finally {
      db.close();
    }
    if (d.id === HELD_OUT_DB) heldGeneric.push(...generic.map((t) => ({ ...t, id: `heldout-db.${t.id}` })));
    else demo.generic.push(...generic);
  }
  const srng = new Rng(rng.nextU32());
  for (const split of (Object.keys(pools) as ConceptSplit[]).filter((s) => s !== "test-written")) {
    // Spread over concepts (a pair under its first) and frames (test-concepts: and what is new).
    const key = (x: ConceptQuestion) =>
      `${x.concepts[0]}|${
        split === "test-concepts" ? x.novelty.filter((n) => n !== "phrasing").join("+") || "phrasing" : x.frame
      }`;
    const room = split === "heldout-db"
      ? SPLIT_SIZES[split] - Math.min(heldGeneric.length, SPLIT_SIZES[split] / 3)
      : SPLIT_SIZES[split];
    // In a seeded order, so that any first n questions (an evaluate cell's n, GRPO's evalN) are a fair sample.
    const kept = srng.shuffle(spread(pools[split], room, key, srng));
    demo.splits[split] = kept.map((x, i) => toTask(x, split, i, defById));
  }
  demo.splits["heldout-db"].push(
    ...spread(heldGeneric, SPLIT_SIZES["heldout-db"] - demo.splits["heldout-db"].length, (t) => t.template, srng),
  );
  // Written by hand, not drawn: the same for every seed.
  demo.splits["test-written"] = WRITTEN.map((x, i) => writtenTask(x, i, defById));
  return demo;
}
