import { assert, assertEquals } from "../../../tests/assert.ts";
import { sharedDatasets } from "../../../tests/shared.ts";
import { renderDdl } from "../../core/ddl.ts";
import { extractSql, formatCheck } from "../../core/extract.ts";
import { PROMPT_TEMPLATES } from "../../core/prompts.ts";
import { BpeEncoder } from "../../model/bpe/encode.ts";
import { addedId, DEMO_CHAT_TEMPLATE } from "../../model/bpe/files.ts";
import { answerText, buildDocuments, corpusHash, DEFAULT_CORPUS_OPTIONS, packDocuments, tablesIn } from "./corpus.ts";
import { CONCEPT_SPLITS } from "../demo/concepts.ts";
import { contaminates, demoContamination, HELD_OUT_DB, loadCorpusSources, schemaOfFile } from "./corpus.deno.ts";
import { trainDemoTokenizer } from "./tokenizer.ts";

const demoDir = new URL("../../../public/demo", import.meta.url).pathname;
const src = await loadCorpusSources({ demoDir });
const opts = { ...DEFAULT_CORPUS_OPTIONS, chatTemplate: DEMO_CHAT_TEMPLATE };

Deno.test("corpus: the same seed gives the same documents, tokenizer and packed rows; another seed draws other documents", () => {
  const docs = buildDocuments(src, opts);
  const again = buildDocuments(src, opts);
  assertEquals(again.map((d) => d.text), docs.map((d) => d.text));
  const bpe = trainDemoTokenizer(docs, 1024);
  assertEquals(trainDemoTokenizer(again, 1024), bpe);
  const enc = new BpeEncoder(bpe);
  const eos = addedId(bpe, "<|endoftext|>");
  const a = packDocuments(docs, (t) => enc.encode(t), eos, 256);
  const b = packDocuments(again, (t) => enc.encode(t), eos, 256);
  assertEquals(corpusHash(b.rows), corpusHash(a.rows));
  const otherDocs = buildDocuments(src, { ...opts, seed: opts.seed + 1 });
  const other = packDocuments(otherDocs, (t) => enc.encode(t), eos, 256);
  assert(corpusHash(other.rows) !== corpusHash(a.rows), "another seed, another corpus");
  const plain = (ds: typeof docs) => ds.filter((d) => d.kind !== "chat").map((d) => d.text).sort();
  assertEquals(plain(otherDocs), plain(docs), "the SQL and DDL documents are the same, in another order");
  console.log(
    `demo-only corpus: ${docs.length} documents, ${a.tokens} tokens in ${a.rows.length} rows of <= 256 (fill ${
      a.fill.toFixed(3)
    }); mix ${JSON.stringify(a.mix)}; hash ${corpusHash(a.rows)}`,
  );
});

Deno.test("corpus: packing keeps every document whole and contiguous in one row (or cut into seqLen pieces), rows <= seqLen, each document ends with EOS, chat documents answer in the template's format", () => {
  const bpe = trainDemoTokenizer(buildDocuments(src, opts), 800);
  const enc = new BpeEncoder(bpe);
  const eos = addedId(bpe, "<|endoftext|>");
  const seqLen = 1024;
  // Prompts budgeted as the pipeline does, counted with the tokenizer through the chat template.
  const docs = buildDocuments(src, {
    ...opts,
    maxPromptTokens: seqLen - 160,
    countTokens: (t) => enc.encode(t).length,
  });
  const p = packDocuments(docs, (t) => enc.encode(t), eos, seqLen);
  assert(p.rows.every((r) => r.length >= 1 && r.length <= seqLen), "row lengths in 1..seqLen");
  assertEquals(p.rows.reduce((s, r) => s + r.length, 0), p.tokens);
  // Every row is a concatenation of whole documents (or one piece of a long one): decode, split at EOS.
  const rowTexts = p.rows.map((r) => enc.decode([...r]));
  const pieces = new Map<string, number>();
  for (const t of rowTexts) {
    for (const part of t.split("<|endoftext|>")) if (part !== "") pieces.set(part, (pieces.get(part) ?? 0) + 1);
  }
  let whole = 0;
  for (const d of docs) {
    const n = enc.encode(d.text).length + 1;
    if (n > seqLen) continue;
    whole++;
    const c = pieces.get(d.text) ?? 0;
    assert(c > 0, `document not found whole in a row: ${d.text.slice(0, 60)}`);
    pieces.set(d.text, c - 1);
  }
  assert(
    whole >= docs.filter((d) => d.kind === "chat").length,
    `${whole} of ${docs.length} documents fit a row, every chat among them`,
  );
  const rowsOfDocs = p.rows.filter((r) => r[r.length - 1] === eos).length;
  assert(rowsOfDocs >= p.rows.length / 2, "most rows end at a document boundary");
  console.log(`seqLen ${seqLen}: ${p.rows.length} rows, fill ${p.fill.toFixed(3)}`);
  assertEquals(Object.values(p.mix).reduce((s, m) => s + m.docs, 0), docs.length);
  const chats = docs.filter((d) => d.kind === "chat");
  assert(
    chats.length === src.questions.length * opts.demoRepeat,
    `${chats.length} chat documents: every generic demo question x ${opts.demoRepeat}`,
  );
  for (const d of chats) {
    assert(
      d.text.startsWith("<|im_start|>") && d.text.endsWith("```<|im_end|>\n") ||
        d.text.endsWith("</answer><|im_end|>\n"),
      `answer format: ${d.text.slice(-60)}`,
    );
    assert(d.text.includes("<|im_start|>assistant\n"), "rendered with the generation prompt before the answer");
  }
  assert(
    chats.some((d) => d.text.includes("<think>")) && chats.some((d) => !d.text.includes("<think>")),
    "both prompt formats are present",
  );
});

Deno.test("corpus: nothing of the demo's concepts leaks — no concept question of any split (train included), no definition, no concept word on a demo database, no clinic database or schema (with and without synthetic questions)", async () => {
  const withSynthetic = await loadCorpusSources({ demoDir, synthetic: 40 });
  // Reworded as people write (surface.ts): a synonym must not bring a concept in either.
  const reworded = await loadCorpusSources({ demoDir, synthetic: 40, surface: 1 });
  assert(
    reworded.questions.filter((q, i) => q.question !== withSynthetic.questions[i]?.question).length > 200,
    "the surface share rewords questions",
  );
  const all = [...buildDocuments(src, opts), ...buildDocuments(withSynthetic, opts), ...buildDocuments(reworded, opts)]
    .map((d) => d.text).join("\n");
  const rows = (s: string) =>
    Deno.readTextFileSync(`${demoDir}/${s}.jsonl`).split("\n").filter((l) => l).map((l) =>
      JSON.parse(l) as { question: string; gold_sql: string }
    );
  const concept = CONCEPT_SPLITS.flatMap(rows);
  assert(concept.length > 400, `${concept.length} concept questions`);
  for (const q of concept) {
    assert(!all.includes(q.question), `concept question in the corpus: ${q.question}`);
    assert(!all.includes(q.gold_sql), `concept query in the corpus: ${q.gold_sql}`);
  }
  const defs: { term: string; fragment: string; definition: string }[] = JSON.parse(
    Deno.readTextFileSync(`${demoDir}/concepts.json`),
  );
  const lower = all.toLowerCase();
  for (const d of defs) {
    assert(!lower.includes(d.term.toLowerCase()), `concept word "${d.term}" in the corpus`);
    assert(!all.includes(d.fragment) && !all.includes(d.definition), `definition of ${d.term} in the corpus`);
  }
  assert(src.questions.every((q) => q.db_id !== HELD_OUT_DB), "no clinic question");
  assert(!all.includes(`database: ${HELD_OUT_DB}`), "no clinic document");
  const clinic = await schemaOfFile(`${demoDir}/${HELD_OUT_DB}/${HELD_OUT_DB}.sqlite`, HELD_OUT_DB);
  for (const t of clinic.tables) {
    const ddl = renderDdl(clinic, { tables: [t.name], examplesPerColumn: 0 });
    const head = ddl.split("\n").slice(0, 3).join("\n");
    assert(!all.includes(head), `clinic table ${t.name} DDL in the corpus`);
  }
  assertEquals(new Set(src.questions.map((q) => q.db_id)), new Set(["shop", "subscriptions", "school"]));
});

Deno.test("contaminates: a concept's question, its masked SQL, its definition inside another query, its word on a demo database", async () => {
  const c = await demoContamination(demoDir);
  const t = JSON.parse(Deno.readTextFileSync(`${demoDir}/test-concepts.jsonl`).split("\n")[0]) as {
    question: string;
    gold_sql: string;
  };
  const base = {
    source: "demo" as const,
    question: "How many users are there?",
    gold_sql: "SELECT COUNT(*) FROM users",
  };
  assertEquals(contaminates(c, base), null);
  assertEquals(contaminates(c, { ...base, question: t.question }), "question");
  assertEquals(
    contaminates(c, { ...base, gold_sql: t.gold_sql.replace(/'[^']*'/g, "'other'").replace(/\b\d+\b/g, "7") }),
    "sql",
  );
  const churn = JSON.parse(Deno.readTextFileSync(`${demoDir}/concepts.json`)).find((d: { id: string }) =>
    d.id === "subs.churned"
  ).fragment as string;
  assertEquals(
    contaminates(c, { ...base, gold_sql: `SELECT user_id FROM   users WHERE ${churn.toUpperCase()} ORDER BY 1` }),
    "definition",
  );
  // The senior teacher (hired_on < '2012-01-01') said by its year is the same condition.
  for (const [cond, why] of [["< '2012'", "definition"], ["<= '2011'", "definition"], ["< '2013'", null]] as const) {
    const gold_sql = `SELECT COUNT(*) FROM teachers WHERE strftime('%Y', hired_on) ${cond}`;
    assertEquals(contaminates(c, { ...base, gold_sql }), why, cond);
  }
  assertEquals(contaminates(c, { ...base, question: "How many churned users are there in Lyon?" }), "term");
  assertEquals(
    contaminates(c, { ...base, source: "spider", question: "How many churned users are there in Lyon?" }),
    null,
    "a word is only a concept on the demo's databases",
  );
});

Deno.test("corpus: every template's gold answer is read back by the project's SQL extractor and passes its strict format check", () => {
  for (const tpl of Object.values(PROMPT_TEMPLATES)) {
    for (const q of src.questions.slice(0, 40)) {
      const schema = src.schemas.get(q.db_id);
      assert(schema !== undefined, q.db_id);
      const a = answerText(tpl.id, q, schema);
      const got = extractSql(a, { mode: tpl.extractMode });
      assertEquals(got.sql, q.gold_sql.trim().replace(/;\s*$/, ""), `${tpl.id}: ${a}`);
      if (tpl.formatTags.length > 0) assert(formatCheck(a, tpl.formatTags).strict, `${tpl.id} strict format: ${a}`);
      for (const t of tablesIn(q.gold_sql, schema)) assert(a.includes(t) || tpl.formatTags.length === 0, `${t} named`);
    }
  }
});

Deno.test({
  name: "corpus: --spider-holdout leaves the named Spider databases out entirely (questions and schemas)",
  ignore: sharedDatasets === null,
  fn: async () => {
    const spiderDir = `${sharedDatasets}/spider-train`;
    const hold = ["coffee_shop", "protein_institute"];
    const full = await loadCorpusSources({ demoDir, spiderDir, spiderLimit: 2000 });
    const held = await loadCorpusSources({ demoDir, spiderDir, spiderLimit: 2000, spiderHoldout: hold });
    const inFull = full.questions.filter((q) => hold.includes(q.db_id)).length;
    assert(inFull > 0, "the first 2000 Spider questions include the held-out databases");
    assertEquals(held.questions.filter((q) => hold.includes(q.db_id)).length, 0);
    assertEquals(held.questions.length, full.questions.length - inFull);
    for (const db of hold) assert(!held.schemas.has(db), `${db} schema left out`);
    assertEquals(held.excluded.heldOutDb - full.excluded.heldOutDb, inFull);
    // Spider-Syn (issue #49): Spider's questions reworded by hand, added beside them, held-out databases still out.
    const syn = await loadCorpusSources({
      demoDir,
      spiderDir,
      spiderLimit: 2000,
      spiderHoldout: hold,
      spiderSynDir: `${sharedDatasets}/spider-syn`,
    });
    const added = syn.questions.slice(held.questions.length);
    assertEquals(syn.questions.slice(0, held.questions.length), held.questions);
    assert(added.length > 1000, `${added.length} Spider-Syn questions added`);
    assert(
      added.every((q) => held.schemas.has(q.db_id) && !hold.includes(q.db_id)),
      "only on the corpus's own databases",
    );
    assert(
      added.every((q) => !held.questions.some((h) => h.question === q.question && h.db_id === q.db_id)),
      "only the rewritten ones",
    );
  },
});

Deno.test("corpus: --chat-turns chains questions of one database per document — every question answered demoRepeat times, first turn the full prompt, later turns the question alone, each document within the budget", () => {
  const bpe = trainDemoTokenizer(buildDocuments(src, opts), 800);
  const enc = new BpeEncoder(bpe);
  const countTokens = (t: string) => enc.encode(t).length;
  const seqLen = 1024;
  const chained = { ...opts, chatTurns: 6, maxPromptTokens: seqLen - 160, countTokens };
  const docs = buildDocuments(src, chained);
  assertEquals(buildDocuments(src, chained).map((d) => d.text), docs.map((d) => d.text), "deterministic");
  const chats = docs.filter((d) => d.kind === "chat");
  const single = buildDocuments(src, { ...opts, maxPromptTokens: seqLen - 160, countTokens }).filter((d) =>
    d.kind === "chat"
  );
  assert(chats.length < single.length * 0.75, `${chats.length} chained documents instead of ${single.length}`);
  // The prompts of one-question documents under each template alone: the first turns must be among them.
  const firstTurn = (text: string) =>
    text.slice(0, text.indexOf("<|im_start|>assistant\n") + "<|im_start|>assistant\n".length);
  const heads = new Set<string>();
  for (const t of opts.templates) {
    for (
      const d of buildDocuments(src, {
        ...opts,
        templates: [{ id: t.id, weight: 1 }],
        maxPromptTokens: seqLen - 160,
        countTokens,
      })
    ) {
      if (d.kind === "chat") heads.add(firstTurn(d.text));
    }
  }
  let turns = 0;
  for (const d of chats) {
    assert(countTokens(d.text) + 1 <= seqLen, `document of ${countTokens(d.text)} tokens`);
    const users = d.text.split("<|im_start|>user\n").slice(1);
    turns += users.length;
    assert(users[0].includes("Database Schema:"), "the first turn carries the schema");
    for (const u of users.slice(1)) {
      assert(
        !u.includes("Database Schema:") && u.startsWith("External Knowledge:\n") || u.startsWith("Question:\n"),
        `later turn: ${u.slice(0, 80)}`,
      );
    }
    assertEquals(d.text.split("<|im_start|>assistant\n").length - 1, users.length, "every turn answered");
    // The first turn is exactly a one-question document's prompt: the format the model is evaluated on.
    assert(heads.has(firstTurn(d.text)), "first turn = a single-question prompt");
  }
  assert(turns > chats.length * 1.5, `${(turns / chats.length).toFixed(2)} questions per document`);
  // Every question is answered demoRepeat times (demo passes), across first and later turns.
  const all = chats.map((d) => d.text).join("\n");
  for (const q of src.questions.slice(0, 30)) {
    const n = all.split(`Question:\n${q.question.trim()}<|im_end|>`).length - 1 +
      all.split(`Question:\n${q.question.trim()}\n\n`).length - 1;
    assertEquals(n, opts.demoRepeat, q.question);
  }
  console.log(
    `chained: ${chats.length} chat documents, ${
      (turns / chats.length).toFixed(2)
    } questions each (single: ${single.length})`,
  );
});
