// SQL extraction from a model completion, and the format checks behind the format rewards.

/** Where extraction looks: "auto" tries the answer tag, then the last SQL block, then the whole text. */
export type ExtractMode = "auto" | "answer-tag" | "sql-block";

/** Where the SQL came from. */
export type ExtractSource = "answer-tag" | "sql-block" | "whole-text";

/** Why no SQL was found. */
export type ExtractFailure =
  | "empty completion"
  | "empty answer"
  | "empty sql block"
  | "no answer tag"
  | "no sql block"
  | "no answer tag and no sql block";

/** The SQL found in a completion, or why there is none. */
export type Extraction = { sql: string; source: ExtractSource } | { sql: null; reason: ExtractFailure };

/** The result of a format check: strict implies soft. */
export interface FormatResult {
  strict: boolean;
  soft: boolean;
}

/**
 * Extracts the SQL of a completion. Rules, in order ("auto"): the content of the last closed
 * <answer>…</answer> (its last fenced block when it holds one); else the last fenced block whose
 * language is sql/sqlite or empty; else the whole text when it starts with SELECT or WITH (after
 * any <think>…</think>), up to a closing fence that was never opened. The SQL is trimmed and trailing semicolons are removed.
 */
export function extractSql(completion: string, opts: { mode?: ExtractMode } = {}): Extraction {
  const mode = opts.mode ?? "auto";
  if (completion.trim() === "") return { sql: null, reason: "empty completion" };
  if (mode !== "sql-block") {
    const answer = lastAnswer(completion);
    if (answer !== null) {
      const sql = clean(lastBlock(answer) ?? unfence(answer));
      return sql === "" ? { sql: null, reason: "empty answer" } : { sql, source: "answer-tag" };
    }
    if (mode === "answer-tag") return { sql: null, reason: "no answer tag" };
  }
  // SQL written first and closed by a bare fence that was never opened: that fence ends the query,
  // and only blocks after it are fenced blocks.
  const text = completion.replace(/^\s*<think>[\s\S]*?<\/think>/i, "");
  const fence = /```[ \t]*([A-Za-z0-9_+-]*)/.exec(text);
  const lead = fence && fence[1] === "" ? clean(text.slice(0, fence.index)) : null;
  const unopened = lead !== null && /^(select|with)\b/i.test(lead);
  const block = lastBlock(unopened ? text.slice(fence!.index + 3) : completion);
  if (block !== null) {
    const sql = clean(block);
    return sql === "" ? { sql: null, reason: "empty sql block" } : { sql, source: "sql-block" };
  }
  if (unopened) return { sql: lead!, source: "whole-text" };
  const rest = clean(text);
  if (/^(select|with)\b/i.test(rest)) return { sql: rest, source: "whole-text" };
  return { sql: null, reason: mode === "sql-block" ? "no sql block" : "no answer tag and no sql block" };
}

/**
 * Checks the tag format of a completion. Strict: each tag exactly once, in order, as
 * `<t>…</t>` with only whitespace between them and around them. Soft: each tag opened and closed,
 * the pairs in order, anything else around them. `prefix` is text the prompt already ended with
 * (for example "<think>\n" when the chat template opens the thinking block).
 */
export function formatCheck(
  completion: string,
  tags: readonly string[] = ["think", "answer"],
  prefix = "",
): FormatResult {
  if (tags.length === 0) throw new Error("formatCheck: no tags given");
  for (const t of tags) {
    if (!/^[A-Za-z][\w-]*$/.test(t)) throw new Error(`formatCheck: bad tag name ${JSON.stringify(t)}`);
  }
  const text = prefix + completion;
  const pairs = tags.map((t) => `<${t}>[\\s\\S]*?</${t}>`);
  const soft = new RegExp(pairs.join("[\\s\\S]*?")).test(text);
  const shape = new RegExp(`^\\s*${pairs.join("\\s*")}\\s*$`).test(text);
  // Exactly one opening and one closing tag each: a second <answer> inside the first would pass the shape.
  const once = tags.every((t) => count(text, `<${t}>`) === 1 && count(text, `</${t}>`) === 1);
  return { strict: shape && once, soft };
}

function lastAnswer(text: string): string | null {
  const re = /<answer>([\s\S]*?)<\/answer>/gi;
  let last: string | null = null;
  for (const m of text.matchAll(re)) last = m[1];
  return last;
}

// Closed fences only: a block cut off by the token limit is not an answer.
function lastBlock(text: string): string | null {
  const re = /```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n([\s\S]*?)```/g;
  let last: string | null = null;
  for (const m of text.matchAll(re)) {
    const lang = m[1].toLowerCase();
    if (lang === "" || lang === "sql" || lang === "sqlite") last = m[2];
  }
  return last;
}

// Inside an answer tag: a one-line fence, or a fence opened and never closed, still holds the SQL.
function unfence(answer: string): string {
  const oneLine = /^\s*```(?:(?:sql|sqlite)\b)?[ \t]*([^\n]*?)[ \t]*```\s*$/i.exec(answer);
  if (oneLine) return oneLine[1];
  return answer.replace(/^\s*```[^\n]*(\n|$)/, "").replace(/```\s*$/, "");
}

function clean(sql: string): string {
  return sql.trim().replace(/[\s;]+$/, "").trim();
}

function count(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}
