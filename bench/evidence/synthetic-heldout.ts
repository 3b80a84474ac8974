// Evidence data that a 15.7M demo model can partly answer: synthetic-pattern questions (synthetic.ts: counts,
// filters, lists, groups, aggregates, comparisons, top-k, distinct, years, joins) over the 8 Spider-train databases
// held out of the demo model's pretraining. The model has seen the question patterns on other databases, never these
// databases (their schemas, values, questions or SQL), so accuracy here is generalisation to new schemas in known
// patterns. The PRM notebooks prm-synth*.json read them (OUT_DIR/synthetic-heldout/{questions.jsonl,db/}); the two
// notebooks of issue #6's runs that this script wrote beside them are in it at 7615547.
// Run: deno run -A bench/evidence/synthetic-heldout.ts OUT_DIR [SPIDER=../shared/datasets/spider-train]
import { Rng } from "../../src/core/rng.ts";
import { schemaOfFile, SYNTHETIC_VALUES } from "../../src/runtime/pretrain/corpus.deno.ts";
import { BASIC_PATTERNS, syntheticQuestions } from "../../src/runtime/pretrain/synthetic.ts";

const [out, spider = "../shared/datasets/spider-train"] = Deno.args;
if (!out) throw new Error("usage: synthetic-heldout.ts OUT_DIR [SPIDER_DIR]");
/** The --spider-holdout of the demo model's pretraining. */
const HOLD = [
  "train_station",
  "perpetrator",
  "candidate_poll",
  "news_report",
  "railway",
  "coffee_shop",
  "station_weather",
  "protein_institute",
];
/** Questions per database. */
const PER_DB = 24;
const lines: string[] = [];
const rng = new Rng(20261201);
for (const db of HOLD) {
  const file = `${spider}/database/${db}/${db}.sqlite`;
  const s = await schemaOfFile(file, db, SYNTHETIC_VALUES);
  const qs = syntheticQuestions(s, PER_DB, new Rng(rng.nextU32()), () => true, BASIC_PATTERNS);
  qs.forEach((q, i) =>
    lines.push(
      JSON.stringify({ id: `${db}.${i}`, db_id: db, question: q.question, gold_sql: q.gold_sql, pattern: q.pattern }),
    )
  );
  await Deno.mkdir(`${out}/synthetic-heldout/db/${db}`, { recursive: true });
  await Deno.copyFile(file, `${out}/synthetic-heldout/db/${db}/${db}.sqlite`);
}
await Deno.writeTextFile(`${out}/synthetic-heldout/questions.jsonl`, lines.join("\n") + "\n");
console.log(`${lines.length} questions on ${HOLD.length} databases -> ${out}/synthetic-heldout`);
