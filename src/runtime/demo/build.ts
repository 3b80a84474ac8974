// Builds the demo: SQLite files through sql.js, questions from the templates, and splits — train
// and test by question template, and the clinic database held out entirely.
import type { SqlJsStatic } from "sql.js";
import { Rng } from "../../core/rng.ts";
import type { Task } from "../../core/types.ts";
import { CLINIC_TEMPLATES, clinicDatabase } from "./clinic.ts";
import { type DemoDatabase, fill, type QuestionTemplate } from "./gen.ts";
import { SCHOOL_TEMPLATES, schoolDatabase } from "./school.ts";
import { SHOP_TEMPLATES, shopDatabase } from "./shop.ts";
import { SUBSCRIPTION_TEMPLATES, subscriptionsDatabase } from "./subscriptions.ts";

/** One demo task with the template it came from (splits are by template). */
export interface DemoTask extends Task {
  template: string;
}

/** What the generator produces. */
export interface Demo {
  databases: { id: string; bytes: Uint8Array; rows: Record<string, number> }[];
  splits: { train: DemoTask[]; test: DemoTask[]; heldout: DemoTask[] };
}

const SOURCES: { make: (rng: Rng) => DemoDatabase; templates: QuestionTemplate[]; heldOut: boolean }[] = [
  { make: shopDatabase, templates: SHOP_TEMPLATES, heldOut: false },
  { make: subscriptionsDatabase, templates: SUBSCRIPTION_TEMPLATES, heldOut: false },
  { make: schoolDatabase, templates: SCHOOL_TEMPLATES, heldOut: false },
  { make: clinicDatabase, templates: CLINIC_TEMPLATES, heldOut: true },
];

/** Fraction of each training database's templates kept for the test split. */
export const TEST_TEMPLATE_FRACTION = 0.25;

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

/** Generates the whole demo from `seed`. */
export function buildDemo(SQL: SqlJsStatic, seed = 20261129): Demo {
  const rng = new Rng(seed);
  const demo: Demo = { databases: [], splits: { train: [], test: [], heldout: [] } };
  for (const src of SOURCES) {
    const d = src.make(new Rng(rng.nextU32()));
    demo.databases.push({ id: d.id, bytes: toSqlite(SQL, d), rows: Object.fromEntries(Object.entries(d.tables).map(([k, v]) => [k, v.length])) });
    const qrng = new Rng(rng.nextU32());
    if (src.heldOut) {
      for (const t of src.templates) demo.splits.heldout.push(...expandTemplate(t, d.id, qrng));
      continue;
    }
    const ids = qrng.shuffle(src.templates.map((t) => t.id).sort());
    const nTest = Math.max(2, Math.round(ids.length * TEST_TEMPLATE_FRACTION));
    const testIds = new Set(ids.slice(0, nTest));
    for (const t of src.templates) {
      (testIds.has(t.id) ? demo.splits.test : demo.splits.train).push(...expandTemplate(t, d.id, qrng));
    }
  }
  return demo;
}
