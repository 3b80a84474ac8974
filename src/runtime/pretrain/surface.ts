// Surface forms for the pretraining corpus's synthetic questions (issue #49): the generator's
// questions say one intent in two or three fixed wordings, and a model pretrained on them cannot
// read a question as an analyst types it ("show me …", "I need …", lower case, no question mark,
// "five" for 5, a filter before the noun, a typo). `vary` rewrites a question's wording and leaves
// what the SQL needs intact: every value the question quotes stays as written (case included),
// numbers become words only where the SQL holds the same number outside a string, typos touch
// only common function words. Pure; drawn with the caller's Rng.
import type { Rng } from "../../core/rng.ts";

function pick<T>(rng: Rng, xs: readonly T[]): T {
  return xs[rng.int(xs.length)];
}

/** Sentence-level rewrites: a pattern on the whole question and the wordings that may replace it. */
const OPENERS: { re: RegExp; to: string[] }[] = [
  {
    re: /^How many (.+) are there\?$/,
    to: [
      "How many $1 do we have?",
      "Number of $1?",
      "how many $1 exist",
      "Tell me how many $1 there are.",
      "I need the number of $1.",
      "Give me a count of $1.",
      "Count of $1, please.",
      "What's the count of $1?",
    ],
  },
  {
    re: /^How many (.+)\?$/,
    to: [
      "Can you tell me how many $1?",
      "how many $1",
      "Do you know how many $1?",
      "I'd like to know how many $1.",
      "So how many $1?",
      "How many $1? Just the number.",
    ],
  },
  {
    re: /^Count the (.+)\.$/,
    to: [
      "Give me a count of the $1.",
      "count $1",
      "Please count the $1.",
      "I need a count of the $1.",
      "How many $1 are there?",
      "Count all $1.",
    ],
  },
  {
    re: /^(?:List|Give|Show) the (.+)\.$/,
    to: [
      "Show me the $1.",
      "Give me the $1.",
      "I need the $1.",
      "What are the $1?",
      "Pull up the $1.",
      "Can you list the $1?",
      "list $1",
      "Get me the $1, please.",
      "Return the $1.",
      "Find the $1.",
    ],
  },
  {
    re: /^What is the (.+)\?$/,
    to: [
      "What's the $1?",
      "Tell me the $1.",
      "Give me the $1.",
      "I want to know the $1.",
      "$1?",
      "what is the $1",
      "Find the $1.",
    ],
  },
  {
    re: /^What are the (.+)\?$/,
    to: ["Show me the $1.", "List the $1.", "What're the $1?", "Give me the $1.", "I need the $1."],
  },
  {
    re: /^Which (.+?)(?: are there)?\? Give (their|its) (.+)\.$/,
    to: [
      "Which $1? I need $2 $3.",
      "Which $1? Just the $3, please.",
      "Show me the $3 of the $1.",
      "Which $1 ($3 only)?",
      "Which $1? List $2 $3.",
    ],
  },
  {
    re: /^What (fraction|share|proportion) of (.+)\?$/,
    to: ["What share of $2?", "What proportion of $2?", "what fraction of $2", "Of all $2, what fraction?"],
  },
  {
    re: /^For each (.+), count the (.+)\.$/,
    to: ["Count the $2 per $1.", "How many $2 does each $1 have?", "$2 by $1, please.", "Break the $2 down by $1."],
  },
  {
    re: /^Count the (.+) (?:per|by) (.+)\.$/,
    to: [
      "How many $1 are there per $2?",
      "$1 per $2?",
      "Give me the number of $1 for each $2.",
      "Break down the $1 by $2.",
    ],
  },
];

/** Phrase-level rewrites anywhere in the question (filters said another way). */
const PHRASES: { re: RegExp; to: string[] }[] = [
  {
    re: /\bwhose (\w+(?: \w+)?) is ([^,.?]+)/,
    to: ["with $1 $2", "that have $1 $2", "with a $1 of $2", "where the $1 is $2", "having $1 = $2"],
  },
  { re: /\bwith (\w+(?: \w+)?) equal to ([^,.?]+)/, to: ["whose $1 is $2", "with $1 $2", "where $1 = $2"] },
  { re: /\b(greater|more) than\b/, to: ["above", "over", "more than", "greater than", "bigger than"] },
  { re: /\bless than\b/, to: ["below", "under", "lower than", "fewer than"] },
  { re: /\bhighest\b/, to: ["largest", "biggest", "top", "greatest"] },
  { re: /\blowest\b/, to: ["smallest", "least", "minimum"] },
  { re: /\baverage\b/, to: ["mean", "avg"] },
  { re: /\bnumber of\b/, to: ["count of", "number of", "total number of"] },
];

/** Common words a typo may touch (never a schema word or a value; none whose typo is another word: "there" -> "three"). */
const TYPO_WORDS = new Set([
  "many",
  "number",
  "which",
  "whose",
  "with",
  "show",
  "list",
  "give",
  "count",
  "total",
  "average",
  "every",
  "each",
  "what",
  "have",
  "their",
  "please",
  "highest",
  "lowest",
  "greater",
  "less",
  "than",
  "also",
  "both",
]);

const NUMBER_WORDS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
  "twenty",
];

/** SQL's numbers outside string literals. */
function sqlNumbers(sql: string): Set<string> {
  // Whole numbers only: the 18 of 88.18 is not a number of the query.
  return new Set(sql.replace(/'(?:[^']|'')*'/g, "''").match(/(?<![\d.])\b\d+\b(?!\.\d)/g) ?? []);
}

function typo(word: string, rng: Rng): string {
  const i = 1 + rng.int(word.length - 2);
  return rng.int(2) === 0
    ? word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2)
    : word.slice(0, i) + word.slice(i + 1);
}

/** The values a question quotes: the SQL's string literals and numbers, as the question writes them. */
function protectedSpans(question: string, sql: string): string[] {
  const lits = [...sql.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1].replace(/''/g, "'")).filter((v) =>
    v.length > 0 && question.includes(v)
  );
  return lits;
}

/**
 * Another wording of `question` (its gold SQL unchanged): one opener or phrase rewrite where one
 * matches, then maybe numbers in words, lower case, no final punctuation and one typo. Values the
 * SQL quotes keep their spelling; a rewrite that would change one is not made.
 */
export function vary(question: string, sql: string, rng: Rng): string {
  const keep = protectedSpans(question, sql);
  const intact = (q: string) => keep.every((v) => q.includes(v));
  let q = question;
  const openers = OPENERS.filter((o) => o.re.test(q));
  if (openers.length && rng.int(4) !== 0) {
    const o = openers[0];
    const next = q.replace(o.re, pick(rng, o.to));
    if (intact(next)) q = next;
  }
  for (const p of PHRASES) {
    if (p.re.test(q) && rng.int(2) === 0) {
      const next = q.replace(p.re, pick(rng, p.to));
      if (intact(next)) q = next;
    }
  }
  const nums = sqlNumbers(sql);
  if (rng.int(3) === 0) {
    q = q.replace(
      // Not a part of a decimal: 88.18 is never "88.eighteen".
      /(?<![\d.])\b(\d{1,2})\b(?!\.\d)/g,
      (m) => (nums.has(m) && Number(m) <= 20 && !keep.some((v) => v.includes(m)) ? NUMBER_WORDS[Number(m)] : m),
    );
  }
  if (rng.int(4) === 0 && !keep.some((v) => q.startsWith(v))) q = q[0].toLowerCase() + q.slice(1);
  if (rng.int(5) === 0) q = q.replace(/[.?]$/, "");
  if (rng.int(8) === 0) {
    const words = [...q.matchAll(/\b[a-z]{4,}\b/g)].filter((m) => TYPO_WORDS.has(m[0]));
    if (words.length) {
      const m = pick(rng, words);
      const next = q.slice(0, m.index) + typo(m[0], rng) + q.slice(m.index! + m[0].length);
      if (intact(next)) q = next;
    }
  }
  return q;
}
