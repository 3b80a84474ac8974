// Chain of CTEs (Reward-SQL's CoCTE): SQL written as WITH step_1 AS (...), step_2 AS (...) and a
// final SELECT. This module splits a model's answer into its steps — tolerantly: the answer may
// hold prose, a ```sql fence (closed or cut off), a truncated step, reused names, or no final
// SELECT — and builds, for each step k, the query over the first k+1 CTEs that shows its partial
// result. It never throws; what is wrong is listed in `problems`.
import { isWord, significant, type Token, tokenize } from "./sql-lex.ts";

/** One step of a chain: a named CTE. */
export interface CteStep {
  name: string;
  /** The CTE body (the SELECT inside the parentheses), as written. */
  sql: string;
  /** An explicit column list as written after the name, e.g. "(a, b)"; absent when none. */
  columns?: string;
  /** The `--` or block comment written just before the step, without its markers; absent when none. */
  comment?: string;
}

/** A split chain. `final` is the statement after the CTEs (null when there is none). */
export interface Chain {
  steps: CteStep[];
  final: string | null;
  /** What was wrong or repaired, in reading order; empty for a clean chain. */
  problems: string[];
  /** `WITH RECURSIVE` was written; the step queries keep it. */
  recursive?: boolean;
}

interface Spans {
  chain: Chain;
  /** For each step, the offset in the original text just after its closing parenthesis. */
  stepEnds: number[];
  /** Offset just after the final statement (before a `;`), or -1. */
  finalEnd: number;
}

/** Splits an answer into its CTE steps and final statement; never throws. */
export function splitChain(text: string): Chain {
  return splitSpans(typeof text === "string" ? text : "").chain;
}

/**
 * The query showing each step's result: for k = 0..steps.length-1,
 * `WITH <first k+1 CTEs> SELECT * FROM <name of step k>`; then, when `final` exists, the whole
 * chain with its final statement. So the array has steps.length + (final ? 1 : 0) entries, the
 * last being the answer's own query.
 */
export function stepQueries(chain: Chain): string[] {
  const head = chain.recursive ? "WITH RECURSIVE\n" : "WITH\n";
  const defs = chain.steps.map((s) => `${s.name}${s.columns ? ` ${s.columns}` : ""} AS (\n${s.sql}\n)`);
  const out = chain.steps.map((s, k) => `${head}${defs.slice(0, k + 1).join(",\n")}\nSELECT * FROM ${s.name}`);
  if (chain.final !== null) out.push(defs.length ? `${head}${defs.join(",\n")}\n${chain.final}` : chain.final);
  return out;
}

/**
 * Where each step ends in `text`: the offset just after the step's closing parenthesis, then the
 * offset just after the final statement — aligned with `stepQueries(chain)`. The PRM reads its
 * score at the token holding the character before each offset. A step that cannot be found in
 * `text` (a chain that was not split from it) gets -1.
 */
export function stepEndOffsets(text: string, chain: Chain): number[] {
  const spans = splitSpans(typeof text === "string" ? text : "");
  const same = spans.chain.steps.length === chain.steps.length &&
    spans.chain.steps.every((s, k) => s.name === chain.steps[k].name && s.sql === chain.steps[k].sql) &&
    spans.chain.final === chain.final;
  if (same) return [...spans.stepEnds, ...(chain.final !== null ? [spans.finalEnd] : [])];
  // Not split from this text: find each body in order, then the step's closing parenthesis.
  const out: number[] = [];
  let from = 0;
  for (const s of chain.steps) {
    const at = s.sql === "" ? -1 : text.indexOf(s.sql, from);
    if (at < 0) {
      out.push(-1);
      continue;
    }
    const close = text.indexOf(")", at + s.sql.length);
    const end = close < 0 ? at + s.sql.length : close + 1;
    out.push(end);
    from = end;
  }
  if (chain.final !== null) {
    const at = text.indexOf(chain.final, from);
    out.push(at < 0 ? -1 : at + chain.final.length);
  }
  return out;
}

/**
 * The SQL part of an answer: the last ```sql fence (a cut-off one counts; SQL before a bare
 * closing fence that was never opened counts as a block), else an <answer> tag's content, else the text.
 */
function sqlRegion(text: string, problems: string[]): { start: number; end: number } {
  const fences = [...text.matchAll(/```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n?/g)];
  // Fences alternate open/close; an odd count means the last one was opened and never closed.
  let best: { start: number; end: number } | null = null;
  let first = 0;
  // SQL written before a closing fence that was never opened: that text is the first block.
  if (
    fences.length > 0 && fences[0][1] === "" &&
    /^\s*(?:<think>[\s\S]*?<\/think>\s*)?(?:--[^\n]*\n\s*)*(select|with)\b/i.test(text.slice(0, fences[0].index))
  ) {
    const lead = /^\s*(?:<think>[\s\S]*?<\/think>)?/i.exec(text)![0].length;
    best = { start: lead, end: fences[0].index };
    problems.push("sql block not opened");
    first = 1;
  }
  for (let k = first; k < fences.length; k += 2) {
    const open = fences[k];
    const lang = open[1].toLowerCase();
    if (lang !== "" && lang !== "sql" && lang !== "sqlite") continue;
    const start = open.index + open[0].length;
    const close = fences[k + 1];
    best = { start, end: close ? close.index : text.length };
    if (!close) problems.push("sql block not closed (cut off?)");
  }
  if (best) return best;
  const answer = /<answer>([\s\S]*?)(<\/answer>|$)/i.exec(text);
  if (answer) {
    return { start: answer.index + "<answer>".length, end: answer.index + "<answer>".length + answer[1].length };
  }
  return { start: 0, end: text.length };
}

function commentText(t: Token): string {
  return t.text.startsWith("--") ? t.text.slice(2).trim() : t.text.replace(/^\/\*|\*\/$/g, "").trim();
}

/** Index in `sig` of the first token that starts a chain (WITH name ... AS) or, failing that, a SELECT/VALUES. */
function startIndex(sig: Token[]): number {
  for (let k = 0; k < sig.length; k++) {
    if (isWord(sig[k], "WITH") && isName(sig[k + 1])) return k;
  }
  return sig.findIndex((t) => isWord(t, "SELECT") || isWord(t, "VALUES"));
}

function isName(t: Token | undefined): boolean {
  return t !== undefined && (t.kind === "word" || t.kind === "qident") && !isWord(t, "AS") && !isWord(t, "SELECT");
}

/** Index of the token closing the parenthesis opened at `open`, or -1 when the input ends first. */
function matchParen(sig: Token[], open: number): number {
  let depth = 0;
  for (let k = open; k < sig.length; k++) {
    if (sig[k].text === "(" && sig[k].kind === "op") depth++;
    else if (sig[k].text === ")" && sig[k].kind === "op" && --depth === 0) return k;
  }
  return -1;
}

function splitSpans(text: string): Spans {
  const problems: string[] = [];
  const steps: CteStep[] = [];
  const stepEnds: number[] = [];
  const done = (final: string | null, finalEnd: number, recursive = false): Spans => {
    const seen = new Map<string, number>();
    steps.forEach((s, k) => {
      const key = s.name.replace(/^["`[]|["`\]]$/g, "").toLowerCase();
      const prev = seen.get(key);
      if (prev !== undefined) problems.push(`CTE name ${s.name} reused (steps ${prev + 1} and ${k + 1})`);
      else seen.set(key, k);
    });
    if (final === null && steps.length > 0) problems.push("no final SELECT after the steps");
    const chain: Chain = { steps, final, problems };
    if (recursive) chain.recursive = true;
    return { chain, stepEnds, finalEnd };
  };
  if (text.trim() === "") {
    problems.push("empty answer");
    return done(null, -1);
  }
  const region = sqlRegion(text, problems);
  const all = tokenize(text.slice(region.start, region.end)).map((t) => ({
    ...t,
    start: t.start + region.start,
    end: t.end + region.start,
  }));
  const sig = significant(all);
  let k = startIndex(sig);
  if (k < 0) {
    problems.push("no SQL found");
    return done(null, -1);
  }
  if (all.some((t) => t.start < sig[k].start && t.kind !== "ws" && t.kind !== "comment")) {
    problems.push("text before the SQL ignored");
  }
  const commentBefore = (pos: number, after: number): string | undefined => {
    // The last comment between the previous step's end and this step's name.
    let c: Token | undefined;
    for (const t of all) if (t.kind === "comment" && t.start >= after && t.end <= pos) c = t;
    return c ? commentText(c) : undefined;
  };
  let recursive = false;
  if (isWord(sig[k], "WITH")) {
    k++;
    if (isWord(sig[k], "RECURSIVE")) {
      recursive = true;
      k++;
    }
    // The first step may take a comment written before WITH.
    let after = region.start;
    for (;;) {
      const nameTok = sig[k];
      if (!isName(nameTok)) {
        problems.push(
          nameTok
            ? `step ${steps.length + 1}: expected a CTE name, found "${nameTok.text}"`
            : `step ${steps.length + 1}: the text ends after WITH or a comma`,
        );
        return done(null, -1, recursive);
      }
      let j = k + 1;
      let columns: string | undefined;
      if (sig[j]?.text === "(") {
        const close = matchParen(sig, j);
        if (close < 0) {
          problems.push(`step ${steps.length + 1} (${nameTok.text}): cut off in its column list`);
          return done(null, -1, recursive);
        }
        columns = text.slice(sig[j].start, sig[close].end);
        j = close + 1;
      }
      if (!isWord(sig[j], "AS")) {
        problems.push(
          `step ${steps.length + 1} (${nameTok.text}): expected AS, found ${sig[j] ? `"${sig[j].text}"` : "the end"}`,
        );
        return done(null, -1, recursive);
      }
      j++;
      if (isWord(sig[j], "NOT") && isWord(sig[j + 1], "MATERIALIZED")) j += 2;
      else if (isWord(sig[j], "MATERIALIZED")) j++;
      if (sig[j]?.text !== "(") {
        problems.push(`step ${steps.length + 1} (${nameTok.text}): expected "(" after AS`);
        return done(null, -1, recursive);
      }
      const close = matchParen(sig, j);
      if (close < 0) {
        problems.push(`step ${steps.length + 1} (${nameTok.text}): cut off before its closing parenthesis`);
        return done(null, -1, recursive);
      }
      const body = text.slice(sig[j].end, sig[close].start).trim();
      if (body === "") problems.push(`step ${steps.length + 1} (${nameTok.text}): empty body`);
      const step: CteStep = { name: nameTok.text, sql: body };
      if (columns !== undefined) step.columns = columns;
      const comment = commentBefore(nameTok.start, after);
      if (comment) step.comment = comment;
      steps.push(step);
      stepEnds.push(sig[close].end);
      after = sig[close].end;
      k = close + 1;
      const next = sig[k];
      if (next?.text === ",") {
        k++;
        // A comma straight before the final SELECT: drop it and read the SELECT as final.
        if (isWord(sig[k], "SELECT") || isWord(sig[k], "VALUES")) {
          problems.push(`comma after step ${steps.length} before the final SELECT`);
          break;
        }
        if (isWord(sig[k], "WITH") && isName(sig[k + 1])) {
          problems.push(`WITH repeated before step ${steps.length + 1}`);
          k++;
        }
        continue;
      }
      if (isWord(next, "WITH") && isName(sig[k + 1])) {
        problems.push(`WITH repeated before step ${steps.length + 1}`);
        k++;
        continue;
      }
      if (
        isName(next) && !isWord(next, "SELECT") && !isWord(next, "VALUES") &&
        (isWord(sig[k + 1], "AS") || sig[k + 1]?.text === "(")
      ) {
        problems.push(`missing comma between steps ${steps.length} and ${steps.length + 1}`);
        continue;
      }
      break;
    }
  }
  const first = sig[k];
  if (!first) return done(null, -1, recursive);
  if (!isWord(first, "SELECT") && !isWord(first, "VALUES")) {
    problems.push(`expected the final SELECT, found "${first.text}"`);
    return done(null, -1, recursive);
  }
  // The final statement runs to the first ";" outside parentheses, or to the end of the region.
  let depth = 0;
  let last = k;
  let m = k;
  for (; m < sig.length; m++) {
    const t = sig[m];
    if (t.kind === "op" && t.text === "(") depth++;
    else if (t.kind === "op" && t.text === ")") depth = Math.max(0, depth - 1);
    else if (t.kind === "op" && t.text === ";" && depth === 0) break;
    last = m;
  }
  if (m < sig.length && sig.slice(m + 1).some((t) => t.text !== ";")) {
    problems.push("text after the final statement ignored");
  }
  if (depth > 0) problems.push("final statement has unclosed parentheses (cut off?)");
  if (sig[last].unterminated) problems.push("final statement ends inside a string or quoted name (cut off?)");
  const final = text.slice(first.start, sig[last].end).trim();
  if (steps.length === 0) problems.push("no CTE steps (a plain query)");
  return done(final, sig[last].end, recursive);
}
