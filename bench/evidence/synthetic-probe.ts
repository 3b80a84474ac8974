// A probe of the demo model on easy questions over the demo's training databases: 4 synthetic
// questions per database (synthetic.ts; counts, filters, an aggregate — the patterns a model that
// reads the schema and copies the question's value gets right), written with a notebook that
// evaluates them greedily. It tells memorisation (the model recites its train queries whatever
// is asked) from grounding. The questions are drawn with another seed than the corpus's.
// Run: deno run -A bench/evidence/synthetic-probe.ts OUT_DIR
//      npx rlvr run OUT_DIR/probe.json --model "$(pwd)/public/model" --out OUT_DIR/run --seed 1
import { Rng } from "../../src/core/rng.ts";
import { schemaOfFile, SYNTHETIC_VALUES } from "../../src/runtime/pretrain/corpus.deno.ts";
import { BASIC_PATTERNS, syntheticQuestions } from "../../src/runtime/pretrain/synthetic.ts";

const out = Deno.args[0];
if (!out) throw new Error("usage: synthetic-probe.ts OUT_DIR");
const EASY = ["count_where", "list_where", "count_all", "aggregate_where", "year"];
const lines: string[] = [];
const rng = new Rng(99);
for (const db of ["shop", "subscriptions", "school"]) {
  const file = `public/demo/${db}/${db}.sqlite`;
  const s = await schemaOfFile(file, db, SYNTHETIC_VALUES);
  const qs = syntheticQuestions(s, 40, new Rng(rng.nextU32()), () => true, BASIC_PATTERNS).filter((q) =>
    EASY.includes(q.pattern)
  ).slice(0, 4);
  qs.forEach((q, i) =>
    lines.push(JSON.stringify({ id: `${db}.${i}`, db_id: db, question: q.question, gold_sql: q.gold_sql }))
  );
  await Deno.mkdir(`${out}/db/${db}`, { recursive: true });
  await Deno.copyFile(file, `${out}/db/${db}/${db}.sqlite`);
}
await Deno.writeTextFile(`${out}/questions.jsonl`, lines.join("\n") + "\n");
const notebook = {
  version: 1,
  title: "Probe: the demo model on synthetic-pattern questions over the demo's training databases",
  cells: [
    {
      id: "data",
      type: "dataset",
      params: {
        source: "url",
        questionsUrl: "questions.jsonl",
        dbRoot: "db",
        name: "probe",
        format: "rlvr",
        split: "test",
        devFraction: 0,
      },
    },
    { id: "model", type: "model", params: { source: "demo", dtype: "f32", loraRank: 16, loraAlpha: 32 } },
    { id: "prompt", type: "prompt", params: { template: "omnisql@1", maxPromptTokens: 800 } },
    { id: "reward", type: "reward", params: { comparison: "set" } },
    { id: "base", type: "evaluate", params: { split: "test", k: 1, maxNewTokens: 96 } },
  ],
};
await Deno.writeTextFile(`${out}/probe.json`, JSON.stringify(notebook, null, 2) + "\n");
console.log(`${lines.length} questions, notebook ${out}/probe.json`);
