// Organisation concepts of the demo: what "churned", "active" or "revenue" mean *here*, as a SQL
// condition (or measure) and its definition (BIRD-style evidence). Questions about them are made
// from frames (count, count with a filter, list, per group, two concepts at once, ...) and split so
// that RLVR has something to teach and the test measures it:
//   train           questions the RL stages train on;
//   test-concepts   new questions about the same concepts: another phrasing, a value never trained
//                   on, a filter never combined with that concept, a pair of concepts never trained;
//   test-templates  question frames never trained on at all (share of, negation, which group most);
//   heldout-db      the clinic database's questions (its concepts never seen; clinic nowhere in train).
// None of these questions, SQL or definitions enter the pretraining corpus (corpus.deno.ts; tested).
import type { Rng } from "../../core/rng.ts";
import { fill, q } from "./gen.ts";

/** An attribute of an entity that questions filter or group by. */
export interface Attribute {
  id: string;
  /** The attribute as a noun, for per-group frames ("country"). */
  noun: string;
  /** SQL condition with {v} for the literal ("country = {v}"). */
  filter: string;
  /** The phrase after the entity noun with {v} ("from {v}", "who signed up in {v}"). */
  phrase: string;
  /** GROUP BY expression, when questions may group by it. */
  group?: string;
  /** Values; the last `heldOut` of them are never trained on (test-concepts "value"). */
  values: (string | number)[];
  heldOut: number;
}

/** A table whose rows concepts classify ("a churned user" is a row of users). */
export interface Entity {
  db: string;
  table: string;
  /** Singular and plural noun ("user", "users"). */
  noun: [string, string];
  /** The column list frames return and its plural noun ("name", "names"). */
  display: { col: string; noun: string };
  attributes: Attribute[];
}

/** An organisation concept over an entity: a SQL condition on its table, and its definition. */
export interface EntityConcept {
  kind: "entity";
  id: string;
  entity: string;
  /** Singular and plural ("churned user", "churned users"). */
  term: [string, string];
  /** What completes "are ___" / "are not ___" ("churned", "loyal customers"). */
  state: string;
  /** SQL condition over the entity's table, unqualified columns (subqueries may alias their own). */
  predicate: string;
}

/** A measure concept ("revenue"): its templates carry their own SQL. */
export interface MeasureConcept {
  kind: "measure";
  id: string;
  db: string;
  term: string;
  templates: MeasureTemplate[];
}

/** One question kind about a measure; `test` marks a template kept for test-templates. */
export interface MeasureTemplate {
  id: string;
  phrasings: string[];
  params: Record<string, string | number>[];
  /** How many of the last params are never trained on (test-concepts "value"). */
  heldOut: number;
  sql: (p: Record<string, string | number>) => string;
  test?: boolean;
}

export type Concept = EntityConcept | MeasureConcept;

/** The definition a question's evidence carries, as "<term> refers to <SQL>". */
export interface Definition {
  id: string;
  db: string;
  term: string;
  definition: string;
  /** The SQL fragment that defines it (decontamination looks for it in every corpus query). */
  fragment: string;
}

/** The demo's splits of concept questions (src/core/demo.ts, where the page reads them too). */
import type { DemoSplit } from "../../core/demo.ts";
export { DEMO_SPLITS as CONCEPT_SPLITS } from "../../core/demo.ts";
export type ConceptSplit = DemoSplit;

/** What makes a test-concepts question new. */
export type Novelty = "phrasing" | "value" | "filter" | "combination";

/** A question about one or two concepts, before its split is chosen. */
export interface ConceptQuestion {
  frame: string;
  db_id: string;
  question: string;
  gold_sql: string;
  /** The same query without the concepts (each condition replaced by 1): the question must differ from it. */
  ignoring: string | null;
  concepts: string[];
  novelty: Novelty[];
  /** Frames of test-templates are never trained on. */
  testFrame: boolean;
  difficulty: "simple" | "moderate" | "challenging";
}

/** Phrasings per frame; phrasing 0 is never trained on (test-concepts "phrasing"). */
export const FRAMES = {
  count: ["What is the number of {terms}?", "How many {terms} are there?", "Count the {terms}."],
  count_attr: [
    "What is the number of {terms} {phrase}?",
    "How many {terms} are there {phrase}?",
    "Count the {terms} {phrase}.",
  ],
  list_attr: [
    "What are the {display} of the {terms} {phrase}?",
    "List the {display} of the {terms} {phrase}.",
    "Give the {display} of all {terms} {phrase}.",
  ],
  group: [
    "For each {noun}, how many {terms} are there?",
    "How many {terms} are there per {noun}?",
    "Count the {terms} by {noun}.",
  ],
  both: [
    "How many {terms} are {state2} as well?",
    "How many {terms} are also {state2}?",
    "Count the {terms} that are {state2} too.",
  ],
  // Never trained on: test-templates.
  share: [
    "What fraction of {entities} {phrase} are {state}?",
    "Among {entities} {phrase}, what share are {state}?",
    "What proportion of {entities} {phrase} are {state}?",
  ],
  negation: [
    "How many {entities} are not {state}?",
    "Count the {entities} that are not {state}.",
    "What is the number of {entities} that are not {state}?",
  ],
  most: [
    "Which {noun} has the most {terms}?",
    "What {noun} counts the largest number of {terms}?",
    "Name the {noun} with the most {terms}.",
  ],
} as const;

const TEST_FRAMES = new Set(["share", "negation", "most"]);

/** A stable small hash of a string (which attribute or pair a concept holds out). */
function hashOf(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The attribute a concept never meets in training (filters seen with other concepts only). */
export function heldOutAttribute(c: EntityConcept, e: Entity): string | null {
  return e.attributes.length > 1 ? e.attributes[hashOf(c.id) % e.attributes.length].id : null;
}

/** Pairs of concepts on one entity never asked together in training: every other pair, by hash. */
export function heldOutPair(a: string, b: string): boolean {
  return hashOf([a, b].sort().join("+")) % 2 === 0;
}

const lit = (a: Attribute, v: string | number) => fill(a.filter, { v: q(v) });
const phrase = (a: Attribute, v: string | number) => fill(a.phrase, { v: String(v) });

/** Every question about an entity's concepts, with the novelties that would make it test-concepts. */
export function entityQuestions(e: Entity, concepts: readonly EntityConcept[]): ConceptQuestion[] {
  const out: ConceptQuestion[] = [];
  const mine = concepts.filter((c) => c.entity === `${e.db}.${e.table}`);
  const from = `FROM ${e.table}`;
  for (const c of mine) {
    const heldAttr = heldOutAttribute(c, e);
    const base = { db_id: e.db, concepts: [c.id] };
    const slots = { terms: c.term[1], state: c.state, entities: e.noun[1], display: e.display.noun };
    const push = (
      frame: keyof typeof FRAMES,
      sql: (pred: string) => string,
      extra: Record<string, string>,
      novelty: Novelty[],
      difficulty: ConceptQuestion["difficulty"],
    ) => {
      FRAMES[frame].forEach((ph, i) => {
        out.push({
          ...base,
          frame,
          question: fill(ph, { ...slots, ...extra }),
          gold_sql: sql(c.predicate),
          ignoring: sql("1"),
          novelty: i === 0 ? [...novelty, "phrasing"] : novelty,
          testFrame: TEST_FRAMES.has(frame),
          difficulty,
        });
      });
    };
    push("count", (p) => `SELECT COUNT(*) ${from} WHERE ${p}`, {}, [], "simple");
    push("negation", (p) => `SELECT COUNT(*) ${from} WHERE NOT (${p})`, {}, [], "moderate");
    for (const a of e.attributes) {
      const attrNovelty: Novelty[] = a.id === heldAttr ? ["filter"] : [];
      a.values.forEach((v, vi) => {
        const nov: Novelty[] = [...attrNovelty, ...(vi >= a.values.length - a.heldOut ? ["value" as const] : [])];
        const ex = { phrase: phrase(a, v) };
        push("count_attr", (p) => `SELECT COUNT(*) ${from} WHERE ${p} AND ${lit(a, v)}`, ex, nov, "moderate");
        push("list_attr", (p) => `SELECT ${e.display.col} ${from} WHERE ${p} AND ${lit(a, v)}`, ex, nov, "moderate");
        push(
          "share",
          (p) => `SELECT AVG(CASE WHEN ${p} THEN 1.0 ELSE 0.0 END) ${from} WHERE ${lit(a, v)}`,
          ex,
          nov,
          "challenging",
        );
      });
      if (a.group) {
        const g = a.group;
        push(
          "group",
          (p) => `SELECT ${g}, COUNT(*) ${from} WHERE ${p} GROUP BY ${g}`,
          { noun: a.noun },
          attrNovelty,
          "moderate",
        );
        push(
          "most",
          (p) => `SELECT ${g} ${from} WHERE ${p} GROUP BY ${g} ORDER BY COUNT(*) DESC LIMIT 1`,
          { noun: a.noun },
          attrNovelty,
          "challenging",
        );
      }
    }
    for (const d of mine) {
      if (d.id === c.id) continue;
      const nov: Novelty[] = heldOutPair(c.id, d.id) ? ["combination"] : [];
      FRAMES.both.forEach((ph, i) => {
        out.push({
          db_id: e.db,
          frame: "both",
          question: fill(ph, { ...slots, state2: d.state }),
          concepts: [c.id, d.id],
          gold_sql: `SELECT COUNT(*) ${from} WHERE ${c.predicate} AND ${d.predicate}`,
          ignoring: `SELECT COUNT(*) ${from} WHERE 1 AND 1`,
          novelty: i === 0 ? [...nov, "phrasing"] : nov,
          testFrame: false,
          difficulty: "challenging",
        });
      });
    }
  }
  return out;
}

/** Every question of a measure concept's templates. */
export function measureQuestions(m: MeasureConcept): ConceptQuestion[] {
  const out: ConceptQuestion[] = [];
  for (const t of m.templates) {
    t.params.forEach((p, pi) => {
      const value: Novelty[] = pi >= t.params.length - t.heldOut ? ["value"] : [];
      t.phrasings.forEach((ph, i) => {
        out.push({
          frame: t.id,
          db_id: m.db,
          question: fill(ph, p),
          gold_sql: t.sql(p),
          ignoring: null,
          concepts: [m.id],
          novelty: i === 0 ? [...value, "phrasing"] : value,
          testFrame: t.test === true,
          difficulty: "challenging",
        });
      });
    });
  }
  return out;
}

/** The split of a question on a training database: by its frame and novelties. */
export function splitOf(x: ConceptQuestion): Exclude<ConceptSplit, "heldout-db"> {
  if (x.testFrame) return "test-templates";
  return x.novelty.length ? "test-concepts" : "train";
}

/**
 * Keeps at most `n` questions, spread over groups (`key`): round-robin over the groups in a seeded
 * order, each group's questions in a seeded order. Deterministic for the same rng state.
 */
export function spread<T>(xs: readonly T[], n: number, key: (x: T) => string, rng: Rng): T[] {
  const groups = new Map<string, T[]>();
  for (const x of xs) {
    const k = key(x);
    const g = groups.get(k);
    if (g) g.push(x);
    else groups.set(k, [x]);
  }
  const order = rng.shuffle([...groups.keys()].sort()).map((k) => rng.shuffle([...(groups.get(k) ?? [])]));
  const out: T[] = [];
  for (let i = 0; out.length < n && order.some((g) => i < g.length); i++) {
    for (const g of order) if (i < g.length && out.length < n) out.push(g[i]);
  }
  return out;
}
