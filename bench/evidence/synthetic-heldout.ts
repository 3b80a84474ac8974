// Evidence data for issue #6 that a 15.7M demo model can partly answer: synthetic-pattern questions
// (synthetic.ts: counts, filters, lists, groups, aggregates, comparisons, top-k, distinct, years,
// joins) over the 8 Spider-train databases held out of the demo model's pretraining. The model has
// seen the question patterns on other databases, never these databases (their schemas, values,
// questions or SQL), so accuracy here is generalisation to new schemas in known patterns. Written
// with two notebooks: the recipe (evaluate -> warm-up -> evaluate -> GRPO -> evaluate -> self-
// consistency) and the same without the warm-up (does the warm-up help online RL?).
// Run: deno run -A bench/evidence/synthetic-heldout.ts OUT_DIR [SPIDER=../shared/datasets/spider-train]
//      npx rlvr run OUT_DIR/synthetic-heldout.json --model "$(pwd)/public/model" --out OUT_DIR/run --seed 1
import { Rng } from "../../src/core/rng.ts";
import { schemaOfFile, SYNTHETIC_VALUES } from "../../src/runtime/pretrain/corpus.deno.ts";
import { BASIC_PATTERNS, syntheticQuestions } from "../../src/runtime/pretrain/synthetic.ts";

const [out, spider = "../shared/datasets/spider-train"] = Deno.args;
if (!out) throw new Error("usage: synthetic-heldout.ts OUT_DIR [SPIDER_DIR]");
/** bench/evidence/prepare-spider-heldout.sh's list: the --spider-holdout of the demo model's pretraining. */
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
const dev = Math.round(lines.length * 0.35);
const data = {
  id: "data",
  type: "dataset",
  params: {
    source: "url",
    questionsUrl: "synthetic-heldout/questions.jsonl",
    dbRoot: "synthetic-heldout/db",
    name: "synthetic-heldout",
    format: "rlvr",
    split: "train",
    devFraction: 0.35,
    seed: 1,
  },
};
const head = [
  data,
  { id: "model", type: "model", params: { source: "demo", dtype: "f32", loraRank: 16, loraAlpha: 32 } },
  { id: "prompt", type: "prompt", params: { template: "omnisql@1", maxPromptTokens: 800 } },
  { id: "reward", type: "reward", params: { comparison: "set" } },
  { id: "baseline", type: "evaluate", params: { split: "dev", k: 1, maxNewTokens: 128 } },
];
const tail = [
  {
    id: "grpo",
    type: "grpo",
    params: { G: 8, steps: 20, batchQuestions: 8, lr: 0.0002, kl: 0, maxNewTokens: 128, evalEvery: 10, evalN: dev },
  },
  { id: "after", type: "evaluate", params: { split: "dev", k: 1, maxNewTokens: 128 } },
  { id: "sc", type: "selfconsistency", params: { N: 8, vote: "count", split: "dev", maxNewTokens: 128 } },
];
const recipe = {
  version: 1,
  title: "Evidence: the recipe on synthetic-pattern questions over Spider databases held out of pretraining",
  cells: [
    ...head,
    {
      id: "warmup",
      type: "warmup",
      params: { rounds: 1, method: "rft", samplesPerQuestion: 4, lr: 0.0002, maxNewTokens: 128 },
    },
    { id: "after_warmup", type: "evaluate", params: { split: "dev", k: 1, maxNewTokens: 128 } },
    ...tail,
  ],
};
const grpoOnly = { version: 1, title: recipe.title + ", GRPO without the warm-up", cells: [...head, ...tail] };
await Deno.writeTextFile(`${out}/synthetic-heldout.json`, JSON.stringify(recipe, null, 2) + "\n");
await Deno.writeTextFile(`${out}/synthetic-heldout-grpo.json`, JSON.stringify(grpoOnly, null, 2) + "\n");
console.log(
  `${lines.length} questions on ${HOLD.length} databases (${dev} dev), notebooks ${out}/synthetic-heldout.json, synthetic-heldout-grpo.json`,
);
