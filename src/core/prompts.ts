// Prompt templates (named, versioned, comparable) and the prompt builder with its token budget.
import { renderDdl } from "./ddl.ts";
import type { ExtractMode } from "./extract.ts";
import type { DbSchema, TableInfo } from "./schema.ts";
import type { Task } from "./types.ts";

/** One chat message, as chat templates take them. */
export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What a template fills in. */
export interface PromptContext {
  question: string;
  /** External knowledge; empty or absent when there is none. */
  evidence?: string;
  /** The schema as CREATE TABLE statements. */
  ddl: string;
}

/** A named, versioned prompt format; the id changes whenever the text changes. */
export interface PromptTemplate {
  /** "name@version", for example "omnisql@1". */
  id: string;
  title: string;
  description: string;
  /** How to read the SQL out of answers in this format. */
  extractMode: ExtractMode;
  /** Tags the format rewards check, in order; empty when the format has none. */
  formatTags: readonly string[];
  /**
   * The answer's first characters, written after the rendered prompt (assistant prefill): the model
   * continues from them and they count as the answer's start when it is read (extraction, PRM steps,
   * SFT targets). Absent: the model writes the whole answer.
   */
  answerPrefix?: string;
  render(ctx: PromptContext): ChatMessage[];
}

/** Something left out of the prompt to fit the token budget, in the order it happened. */
export type Dropped =
  | { kind: "examples"; from: number; to: number }
  | { kind: "table"; table: string; score: number };

/** Options of `buildPrompt`. */
export interface BuildPromptOptions {
  /** Template id from `PROMPT_TEMPLATES`, or a template object. */
  template: string | PromptTemplate;
  /** Example values per column before any shrinking (default 3). */
  examplesPerColumn?: number;
  /** Show natural names and descriptions (default true). */
  descriptions?: boolean;
  /** Token budget of the prompt; needs `countTokens`. */
  maxPromptTokens?: number;
  countTokens?: (text: string) => number;
  /** The text that is counted (default: message contents joined by newlines); pass the chat template render to count exactly. */
  render?: (messages: ChatMessage[]) => string;
}

/** A built prompt and what was done to it. */
export interface BuiltPrompt {
  messages: ChatMessage[];
  meta: {
    templateId: string;
    dropped: Dropped[];
    examplesPerColumn: number;
    /** Tables shown, in schema order. */
    tables: string[];
    /** Counted size, or null without `countTokens`. */
    promptTokens: number | null;
  };
}

const SCHEMA_NOTE =
  "This schema describes the database's structure, including tables, columns, primary keys, foreign keys, and any relevant relationships or constraints.";

function schemaAndQuestion(ctx: PromptContext): string {
  const ev = ctx.evidence?.trim();
  return [
    "Database Engine:\nSQLite",
    `Database Schema:\n${ctx.ddl}\n${SCHEMA_NOTE}`,
    ...(ev ? [`External Knowledge:\n${ev}`] : []),
    `Question:\n${ctx.question.trim()}`,
  ].join("\n\n");
}

const INSTRUCTIONS = [
  "- Make sure you only output the information that is asked in the question. If the question asks for a specific column, make sure to only include that column in the SELECT clause, nothing more.",
  "- The generated query should return all of the information asked in the question without any missing or extra information.",
].join("\n");

const SQL_BLOCK = "```sql\n-- Your SQL query\n```";

const omnisql: PromptTemplate = {
  id: "omnisql@1",
  title: "OmniSQL",
  description:
    "OmniSQL's prompt: task overview, SQLite DDL with example values, question, instructions; answer in a ```sql block.",
  extractMode: "sql-block",
  formatTags: [],
  render: (ctx) => [{
    role: "user",
    content: [
      "Task Overview:\nYou are a data science expert. Below, you are provided with a database schema and a natural language question. Your task is to understand the schema and generate a valid SQL query to answer the question.",
      schemaAndQuestion(ctx),
      `Instructions:\n${INSTRUCTIONS}\n- Before generating the final SQL query, please think through the steps of how to write the query.`,
      `Output Format:\nIn your answer, please enclose the generated SQL query in a code block:\n${SQL_BLOCK}`,
      "Take a deep breath and think step by step to find the correct SQL query.",
    ].join("\n\n"),
  }],
};

const thinkAnswer: PromptTemplate = {
  id: "think-answer@1",
  title: "Think, then answer",
  description: "DeepSeek-R1-Zero style: reasoning in <think>…</think>, the SQL in <answer>…</answer>, nothing after.",
  extractMode: "answer-tag",
  formatTags: ["think", "answer"],
  render: (ctx) => [
    {
      role: "system",
      content:
        "A conversation between User and Assistant. The user asks a question, and the Assistant solves it. The Assistant first thinks about the reasoning process in the mind and then provides the user with the answer. The reasoning process and answer are enclosed within <think> </think> and <answer> </answer> tags, respectively, i.e., <think> reasoning process here </think><answer> answer here </answer>.",
    },
    {
      role: "user",
      content: [
        schemaAndQuestion(ctx),
        `Instructions:\n${INSTRUCTIONS}`,
        `Output Format:\nThink step by step inside <think>...</think>. Then write exactly one SQLite query inside <answer>...</answer> as a code block:\n<answer>\n${SQL_BLOCK}\n</answer>\nWrite nothing after </answer>.`,
      ].join("\n\n"),
    },
  ],
};

const reasoningAnswer: PromptTemplate = {
  id: "reasoning-answer@1",
  title: "Reasoning, then answer",
  description: "GRPO notebook style: <reasoning>…</reasoning> then <answer>…</answer> holding the SQL.",
  extractMode: "answer-tag",
  formatTags: ["reasoning", "answer"],
  render: (ctx) => [
    {
      role: "system",
      content: "Respond in the following format:\n<reasoning>\n...\n</reasoning>\n<answer>\n...\n</answer>",
    },
    {
      role: "user",
      content: [
        schemaAndQuestion(ctx),
        `Instructions:\n${INSTRUCTIONS}\n- Put your reasoning in <reasoning>...</reasoning> and only the final SQLite query in <answer>...</answer>.`,
      ].join("\n\n"),
    },
  ],
};

const chainOfCtesMessages = (ctx: PromptContext): ChatMessage[] => [{
  role: "user",
  content: [
    "Task Overview:\nYou are a data science expert. Below, you are provided with a database schema and a natural language question. Write one SQLite query that answers the question.",
    schemaAndQuestion(ctx),
    `Instructions:\n${INSTRUCTIONS}\n- Reason in SQL: write the query as WITH step_1 AS (...), step_2 AS (...), ... where each common table expression is one reasoning step, named for what it computes and preceded by a -- comment saying why. A simple question may need a single step.\n- End with one SELECT that reads from the steps and returns exactly the asked columns.`,
    `Output Format:\nAnswer with the whole query in one code block:\n${SQL_BLOCK}`,
  ].join("\n\n"),
}];

const chainOfCtes: PromptTemplate = {
  id: "chain-of-ctes@1",
  title: "Chain of CTEs",
  description:
    "Reasoning written as SQL: each step a named CTE with a comment, the final SELECT combines them; one ```sql block.",
  extractMode: "sql-block",
  formatTags: [],
  render: chainOfCtesMessages,
};

/** The answer chain-of-ctes@2 starts for the model: the code block opened and the chain begun. */
export const COCTE_ANSWER_PREFIX = "```sql\nWITH";

const chainOfCtesPrefilled: PromptTemplate = {
  id: "chain-of-ctes@2",
  title: "Chain of CTEs, answer started",
  description:
    "chain-of-ctes@1's prompt with the answer started as \"```sql\\nWITH\" (assistant prefill): the model writes the chain's steps from there.",
  extractMode: "sql-block",
  formatTags: [],
  answerPrefix: COCTE_ANSWER_PREFIX,
  render: chainOfCtesMessages,
};

/** Whether a template asks for a chain of CTEs (chain-of-ctes@1 or @2). */
export function isCocteTemplate(id: string): boolean {
  return id.startsWith("chain-of-ctes@");
}

/** All templates by id. */
export const PROMPT_TEMPLATES: Readonly<Record<string, PromptTemplate>> = Object.freeze(
  Object.fromEntries([omnisql, thinkAnswer, reasoningAnswer, chainOfCtes, chainOfCtesPrefilled].map((t) => [t.id, t])),
);

/** The template with this id; throws naming the known ids. */
export function getPromptTemplate(id: string): PromptTemplate {
  const t = PROMPT_TEMPLATES[id];
  if (!t) throw new Error(`unknown prompt template "${id}" (known: ${Object.keys(PROMPT_TEMPLATES).join(", ")})`);
  return t;
}

/**
 * Builds the chat messages of one question. Over `maxPromptTokens` it shrinks by a fixed rule:
 * fewer example values per column (3 -> 1 -> 0), then tables dropped lowest-ranked first (see
 * `rankTables`) until one is left; still too long is an error naming the sizes.
 */
export function buildPrompt(
  task: Pick<Task, "question" | "evidence">,
  schema: DbSchema,
  opts: BuildPromptOptions,
): BuiltPrompt {
  const template = typeof opts.template === "string" ? getPromptTemplate(opts.template) : opts.template;
  const start = opts.examplesPerColumn ?? 3;
  const { maxPromptTokens: max, countTokens } = opts;
  if (max !== undefined && !countTokens) throw new Error("buildPrompt: maxPromptTokens needs countTokens");
  const measureText = opts.render ?? ((ms: ChatMessage[]) => ms.map((m) => m.content).join("\n"));
  const make = (examples: number, tables: string[]) =>
    template.render({
      question: task.question,
      evidence: task.evidence,
      ddl: renderDdl(schema, { examplesPerColumn: examples, descriptions: opts.descriptions, tables }),
    });
  const size = (ms: ChatMessage[]) => (countTokens ? countTokens(measureText(ms)) : null);
  const done = (
    messages: ChatMessage[],
    examples: number,
    tables: string[],
    dropped: Dropped[],
    tokens: number | null,
  ): BuiltPrompt => ({
    messages,
    meta: { templateId: template.id, dropped, examplesPerColumn: examples, tables, promptTokens: tokens },
  });

  let tables = schema.tables.map((t) => t.name);
  const dropped: Dropped[] = [];
  let examples = start;
  let messages = make(examples, tables);
  let tokens = size(messages);
  if (max === undefined || tokens === null || tokens <= max) return done(messages, examples, tables, dropped, tokens);

  for (const next of [1, 0].filter((n) => n < start)) {
    dropped.push({ kind: "examples", from: examples, to: next });
    examples = next;
    messages = make(examples, tables);
    tokens = size(messages) ?? 0;
    if (tokens <= max) return done(messages, examples, tables, dropped, tokens);
  }
  const order = rankTables(schema, `${task.question} ${task.evidence ?? ""}`).reverse();
  for (const r of order) {
    if (tables.length <= 1) break;
    tables = tables.filter((t) => t !== r.table);
    dropped.push({ kind: "table", table: r.table, score: r.score });
    messages = make(examples, tables);
    tokens = size(messages) ?? 0;
    if (tokens <= max) return done(messages, examples, tables, dropped, tokens);
  }
  const bare = size(template.render({ question: task.question, evidence: task.evidence, ddl: "" })) ?? 0;
  throw new Error(
    `prompt does not fit: ${tokens} tokens with only table "${tables[0]}" and no example values, ` +
      `maxPromptTokens is ${max} (the template with question and evidence but no schema is ${bare} tokens; ` +
      `the full schema with ${start} examples per column was ${size(make(start, schema.tables.map((t) => t.name)))})`,
  );
}

/** One table's relevance to a question. */
export interface TableRank {
  table: string;
  score: number;
}

/**
 * Ranks tables by lexical overlap with the question and evidence, most relevant first:
 * 2 points per question word in the table's name (or natural name), 1 per further word found
 * in its column names; a table with no overlap that links by foreign keys two tables with
 * overlap (a join table) gets 0.5. Ties keep schema order.
 */
export function rankTables(schema: DbSchema, text: string): TableRank[] {
  const words = new Set(wordsOf(text));
  const direct = schema.tables.map((t) => {
    const tableWords = new Set([...wordsOf(t.name), ...wordsOf(t.naturalName ?? "")]);
    const colWords = new Set(t.columns.flatMap((c) => [...wordsOf(c.name), ...wordsOf(c.naturalName ?? "")]));
    let score = 0;
    for (const w of words) {
      if (tableWords.has(w)) score += 2;
      else if (colWords.has(w)) score += 1;
    }
    return score;
  });
  const hit = new Set(schema.tables.filter((_, i) => direct[i] > 0).map((t) => t.name.toLowerCase()));
  const scores = schema.tables.map((t, i) => (direct[i] === 0 && linkedHits(schema, t, hit) >= 2 ? 0.5 : direct[i]));
  return schema.tables
    .map((t, i) => ({ table: t.name, score: scores[i], i }))
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map(({ table, score }) => ({ table, score }));
}

function linkedHits(schema: DbSchema, t: TableInfo, hit: Set<string>): number {
  const linked = new Set<string>();
  for (const fk of t.foreignKeys) linked.add(fk.refTable.toLowerCase());
  for (const o of schema.tables) {
    if (o.foreignKeys.some((fk) => fk.refTable.toLowerCase() === t.name.toLowerCase())) {
      linked.add(o.name.toLowerCase());
    }
  }
  linked.delete(t.name.toLowerCase());
  return [...linked].filter((n) => hit.has(n)).length;
}

const STOP = new Set(
  "a an and are as at be by did do does for from give has have how i in is it list me of on or show than that the their them there these this those to was were what when where which who whom whose why will with"
    .split(" "),
);

/** Lower-case word stems of a text or identifier (camelCase and snake_case split, plurals folded). */
export function wordsOf(s: string): string[] {
  return s
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1 && !STOP.has(w))
    .map(stem);
}

function stem(w: string): string {
  if (w.length > 4 && w.endsWith("ies")) return w.slice(0, -3) + "y";
  if (w.length > 4 && /(ss|sh|ch|x)es$/.test(w)) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss")) return w.slice(0, -1);
  return w;
}
