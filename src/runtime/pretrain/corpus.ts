// The pretraining corpus of the demo model: documents that look like what the model will see
// (prompts rendered with its chat template followed by the gold answer in the template's answer
// format), plus plain SQL and schema DDL, shuffled with a seed, tokenized, and packed into rows of
// at most seqLen tokens. Pure: the sources are passed in (corpus.deno.ts reads them from disk).
import { ChatTemplate } from "../../core/chat-template.ts";
import { renderDdl } from "../../core/ddl.ts";
import { buildPrompt, type ChatMessage, getPromptTemplate } from "../../core/prompts.ts";
import { Rng } from "../../core/rng.ts";
import type { DbSchema } from "../../core/schema.ts";

/** One training question with its gold SQL and where it came from. */
export interface CorpusQuestion {
  source: "demo" | "spider";
  db_id: string;
  question: string;
  evidence?: string;
  gold_sql: string;
  /** Made by synthetic.ts from the database's schema and values (one pass; not in the SQL documents). */
  synthetic?: boolean;
}

/** Everything the corpus is made of: questions and the schema of every database they use. */
export interface CorpusSources {
  questions: CorpusQuestion[];
  schemas: Map<string, DbSchema>;
}

/** A document kind: a chat (prompt + answer), a chat of synthetic questions, a database's gold queries, or a database's DDL. */
export type DocKind = "chat" | "synthetic" | "sql" | "ddl";

/** One document of the corpus. */
export interface CorpusDoc {
  kind: DocKind;
  source: CorpusQuestion["source"];
  text: string;
}

/** How documents are made. */
export interface CorpusOptions {
  seed: number;
  /** The chat template the model is trained with (ChatML for the demo model). */
  chatTemplate: string;
  /** Prompt templates and their weights; each question is rendered with one, drawn with the seed. */
  templates: readonly { id: string; weight: number }[];
  /** Copies of every demo document (the data RLVR later trains on is small; default 4). */
  demoRepeat: number;
  /** Example values per column in prompts and DDL documents (default 3). */
  examplesPerColumn?: number;
  /** With countTokens: prompts are shrunk (examples, then tables) to fit this many tokens. */
  maxPromptTokens?: number;
  countTokens?: (text: string) => number;
  /**
   * Questions per chat document (default 1). Above 1, the questions of one database are chained
   * in one conversation: the first turn is the full prompt (schema and question), each later turn
   * a user message with only the next question (and its evidence), each answered in the template's
   * format, while the document fits `maxPromptTokens + ANSWER_ROOM` tokens (with countTokens) — the SQL
   * answers then make up a much larger share of the tokens than with one schema per question.
   */
  chatTurns?: number;
  /** With chatTurns > 1: how many times Spider's questions are chained, each pass in another seeded order (default 1; demo questions get demoRepeat passes). */
  chatPasses?: number;
}

/** The default mix: OmniSQL prompts for three questions in four, think/answer for the fourth. */
export const DEFAULT_CORPUS_OPTIONS: CorpusOptions = {
  seed: 20261129,
  chatTemplate: "",
  templates: [{ id: "omnisql@1", weight: 3 }, { id: "think-answer@1", weight: 1 }],
  demoRepeat: 4,
};

/** Tables of `schema` named in `sql` (word match, case-insensitive), in schema order. */
export function tablesIn(sql: string, schema: DbSchema): string[] {
  const words = new Set(sql.toLowerCase().split(/[^a-z0-9_]+/));
  return schema.tables.map((t) => t.name).filter((n) => words.has(n.toLowerCase()));
}

/** The assistant's answer to a question in a template's answer format. */
export function answerText(templateId: string, q: Pick<CorpusQuestion, "gold_sql">, schema: DbSchema): string {
  const sql = q.gold_sql.trim().replace(/;\s*$/, "");
  const block = "```sql\n" + sql + "\n```";
  const tables = tablesIn(sql, schema);
  // A short, true statement about the query (the tables it reads); no invented reasoning.
  const note = tables.length > 0 ? `The query reads ${tables.join(", ")}.` : "The query needs no table.";
  const tpl = getPromptTemplate(templateId);
  if (tpl.extractMode === "sql-block") return block;
  if (tpl.formatTags[0] === "think") return `<think>\n${note}\n</think>\n<answer>\n${block}\n</answer>`;
  if (tpl.formatTags[0] === "reasoning") return `<reasoning>\n${note}\n</reasoning>\n<answer>\n${sql}\n</answer>`;
  throw new Error(`corpus: no answer format for template ${templateId}`);
}

function pick(rng: Rng, templates: CorpusOptions["templates"]): string {
  const total = templates.reduce((a, t) => a + t.weight, 0);
  let x = rng.next() * total;
  for (const t of templates) if ((x -= t.weight) < 0) return t.id;
  return templates[templates.length - 1].id;
}

/** Gold queries per SQL document. */
const SQL_GROUP = 8;

/** The user message of a later turn of a chained conversation: the next question and its evidence. */
export function followUpText(q: CorpusQuestion): string {
  const ev = q.evidence?.trim();
  return [...(ev ? [`External Knowledge:\n${ev}`] : []), `Question:\n${q.question.trim()}`].join("\n\n");
}

/**
 * Tokens kept for the answer after a budgeted prompt: the pipeline budgets prompts to seqLen minus
 * this, and a chained conversation may grow to maxPromptTokens plus this (that is, to seqLen).
 */
export const ANSWER_ROOM = 160;

/** A question's prompt messages in `template`, budgeted to o.maxPromptTokens when o.countTokens is given. */
function promptMessages(
  q: CorpusQuestion,
  schema: DbSchema,
  template: string,
  o: CorpusOptions,
  chat: ChatTemplate,
): ChatMessage[] {
  return buildPrompt(q, schema, {
    template,
    examplesPerColumn: o.examplesPerColumn ?? 3,
    maxPromptTokens: o.countTokens ? o.maxPromptTokens : undefined,
    countTokens: o.countTokens,
    render: (ms) => chat.render(ms),
  }).messages;
}

/** Chat documents with several questions of one database each (CorpusOptions.chatTurns > 1). */
function chainedChats(
  src: CorpusSources,
  o: CorpusOptions,
  chat: ChatTemplate,
  rng: Rng,
  schemaOf: (db: string) => DbSchema,
): CorpusDoc[] {
  const turns = o.chatTurns ?? 1;
  const docs: CorpusDoc[] = [];
  const byDb = new Map<string, CorpusQuestion[]>();
  for (const q of src.questions) {
    const key = `${q.source}\u0000${q.db_id}\u0000${q.synthetic ? "synthetic" : "gold"}`;
    const list = byDb.get(key);
    if (list) list.push(q);
    else byDb.set(key, [q]);
  }
  const limit = o.countTokens && o.maxPromptTokens !== undefined ? o.maxPromptTokens + ANSWER_ROOM : Infinity;
  for (const qs of byDb.values()) {
    const source = qs[0].source;
    const schema = schemaOf(qs[0].db_id);
    const passes = qs[0].synthetic ? 1 : source === "demo" ? o.demoRepeat : (o.chatPasses ?? 1);
    for (let pass = 0; pass < passes; pass++) {
      const order = rng.shuffle([...qs]);
      let i = 0;
      while (i < order.length) {
        const template = pick(rng, o.templates);
        const messages: ChatMessage[] = [...promptMessages(order[i], schema, template, o, chat)];
        const answer0 = answerText(template, order[i], schema);
        let text = chat.render(messages) + answer0 + "<|im_end|>\n";
        messages.push({ role: "assistant", content: answer0 });
        i++;
        for (let t = 1; t < turns && i < order.length; t++) {
          const q = order[i];
          const answer = answerText(template, q, schema);
          const next = [...messages, { role: "user" as const, content: followUpText(q) }];
          const prefix = chat.render(next);
          // A template that does not render conversations as prefixes of each other gets one turn.
          if (!prefix.startsWith(text)) break;
          const candidate = prefix + answer + "<|im_end|>\n";
          if (o.countTokens && o.countTokens(candidate) + 1 > limit) break;
          text = candidate;
          messages.push(next[next.length - 1], { role: "assistant", content: answer });
          i++;
        }
        docs.push({ kind: qs[0].synthetic ? "synthetic" : "chat", source, text });
      }
    }
  }
  return docs;
}

/** The documents of the corpus, shuffled with the seed. */
export function buildDocuments(src: CorpusSources, o: CorpusOptions): CorpusDoc[] {
  const chat = new ChatTemplate(o.chatTemplate);
  const rng = new Rng(o.seed);
  const docs: CorpusDoc[] = [];
  const schemaOf = (db: string) => {
    const s = src.schemas.get(db);
    if (!s) throw new Error(`corpus: no schema for database ${db}`);
    return s;
  };
  const copies = (source: CorpusQuestion["source"]) => (source === "demo" ? o.demoRepeat : 1);
  if ((o.chatTurns ?? 1) > 1) docs.push(...chainedChats(src, o, chat, rng, schemaOf));
  else {for (const q of src.questions) {
      const schema = schemaOf(q.db_id);
      const template = pick(rng, o.templates);
      const text = chat.render(promptMessages(q, schema, template, o, chat)) + answerText(template, q, schema) +
        "<|im_end|>\n";
      for (let c = 0; c < (q.synthetic ? 1 : copies(q.source)); c++) {
        docs.push({ kind: q.synthetic ? "synthetic" : "chat", source: q.source, text });
      }
    }}
  // Per database: its DDL, and its gold queries (deduplicated, in file order) in small groups.
  const byDb = new Map<string, { source: CorpusQuestion["source"]; sql: string[] }>();
  for (const q of src.questions) {
    if (q.synthetic) continue;
    const e = byDb.get(q.db_id) ?? { source: q.source, sql: [] };
    const s = q.gold_sql.trim().replace(/;\s*$/, "") + ";";
    if (!e.sql.includes(s)) e.sql.push(s);
    byDb.set(q.db_id, e);
  }
  for (const [db, e] of byDb) {
    const ddl = `-- database: ${db}\n${renderDdl(schemaOf(db), { examplesPerColumn: o.examplesPerColumn ?? 3 })}\n`;
    for (let c = 0; c < copies(e.source); c++) {
      docs.push({ kind: "ddl", source: e.source, text: ddl });
      // Gold queries in groups of SQL_GROUP: small documents that also fill the rows' ends.
      for (let i = 0; i < e.sql.length; i += SQL_GROUP) {
        docs.push({
          kind: "sql",
          source: e.source,
          text: `-- database: ${db}\n${e.sql.slice(i, i + SQL_GROUP).join("\n")}\n`,
        });
      }
    }
  }
  return rng.shuffle(docs);
}

/** Packed token rows and the size of every part of the mix. */
export interface PackedCorpus {
  seqLen: number;
  /** Token rows, each at most seqLen long; documents end with EOS. */
  rows: Uint32Array[];
  tokens: number;
  /** Documents and tokens (EOS included) per "kind/source". */
  mix: Record<string, { docs: number; tokens: number }>;
  /** Tokens / (rows * seqLen): how full the rows are. */
  fill: number;
}

/**
 * Tokenizes the documents and packs them best-fit decreasing: longest first, each document
 * (ids + EOS) whole into the row with the least room that still holds it, else a new row, so a
 * prompt and its answer always share a row. A document longer than seqLen is cut into seqLen
 * pieces: full pieces are rows of their own, the tail is placed like a document. Ties keep the
 * documents' (seeded) order, so the result is deterministic; the trainer shuffles rows anyway.
 */
export function packDocuments(
  docs: readonly CorpusDoc[],
  encode: (text: string) => number[],
  eos: number,
  seqLen: number,
): PackedCorpus {
  if (!(seqLen >= 2)) throw new Error(`pack: seqLen ${seqLen} must be at least 2`);
  const rows: number[][] = [];
  const mix: PackedCorpus["mix"] = {};
  let tokens = 0;
  const items: number[][] = [];
  for (const d of docs) {
    const ids = [...encode(d.text), eos];
    const key = `${d.kind}/${d.source}`;
    const m = mix[key] ?? (mix[key] = { docs: 0, tokens: 0 });
    m.docs++;
    m.tokens += ids.length;
    tokens += ids.length;
    let i = 0;
    for (; ids.length - i > seqLen; i += seqLen) rows.push(ids.slice(i, i + seqLen));
    items.push(ids.slice(i));
  }
  const order = items.map((_, i) => i).sort((a, b) => items[b].length - items[a].length || a - b);
  // byFree[f]: rows (indices) with exactly f free tokens, in creation order.
  const byFree: number[][] = Array.from({ length: seqLen + 1 }, () => []);
  for (const k of order) {
    const it = items[k];
    let f = it.length;
    while (f <= seqLen && byFree[f].length === 0) f++;
    let r: number;
    if (f > seqLen) {
      rows.push([]);
      r = rows.length - 1;
    } else r = byFree[f].shift() ?? -1;
    for (const x of it) rows[r].push(x);
    byFree[seqLen - rows[r].length].push(r);
  }
  const out = rows.map((r) => Uint32Array.from(r));
  return { seqLen, rows: out, tokens, mix, fill: tokens / (out.length * seqLen) };
}

/** FNV-1a over every row (lengths included): a fingerprint that shows two corpora are identical. */
export function corpusHash(rows: readonly Uint32Array[]): string {
  let h = 0x811c9dc5;
  const mixIn = (x: number) => {
    for (let k = 0; k < 4; k++) {
      h ^= (x >>> (8 * k)) & 0xff;
      h = Math.imul(h, 0x01000193) >>> 0;
    }
  };
  for (const r of rows) {
    mixIn(r.length);
    for (const x of r) mixIn(x);
  }
  return h.toString(16).padStart(8, "0");
}
