// A plain filter on a table's own column said the many ways people say it (issue #49): before the
// row noun where the value reads as a modifier ("vip customers", "2025 orders", "DE-based users"),
// after it ("customers in DE", "located in DE", "with a segment of vip", "who signed up in 2025",
// "hired before 2012"), or first, as the scope of the question ("In the vip segment, ..."). Every
// form is chosen from the column's kind, its words and the value, so it works on any database; none
// changes the SQL, and every value the SQL quotes is said exactly as quoted (surface.ts's invariant).
import type { Rng } from "../../core/rng.ts";
import { quoteIdent, quoteLiteral } from "../../core/schema.ts";
import type { Col } from "./synthetic.ts";

/** Place-like columns: a value is a place ("in DE", "based in DE", "from DE"). */
export const PLACE = /\b(country|nation|city|state|region|location|hometown|place)\b/;
/** Columns whose values are names, codes or free text, never a category to say before a noun. */
const NOT_CATEGORY =
  /\b(name|names|title|email|login|address|description|details|code|id|url|phone|comment|comments|notes?)\b/;
/** Values that are flags, not words ("yes customers"). */
const FLAG = /^(yes|no|true|false|y|n|t|f|none|null|unknown|other|n\/a)$/i;
/** Row nouns of people: "customers who signed up", not "that signed up". */
const PERSON =
  /\b(customer|user|student|employee|member|person|people|teacher|staff|player|author|patient|client|driver|artist|actor|singer|manager|worker|instructor|professor|guest|visitor|owner|host|candidate|participant|musician|editor|pilot|doctor|director|writer|athlete|coach|voter|subscriber|buyer|seller|volunteer|resident|passenger|captain|engineer|scientist|journalist|gymnast|wrestler|conductor|architect)s?$/;

/**
 * What a date column's name says happened on that day: the verb and whether the rows did it ("customers
 * who signed up in 2025") or had it done to them ("teachers hired before 2012"). A column is matched
 * only when its words, less "date", "day", "time", "on", "at", "of", are one of the roots: "first order
 * date" names another thing's day and gets no verb.
 */
const DATE_VERBS: { roots: string[]; verb: string; active: boolean }[] = [
  { roots: ["signup", "sign up", "signed up"], verb: "signed up", active: true },
  { roots: ["join", "joined", "joining"], verb: "joined", active: true },
  { roots: ["registration", "registered", "register"], verb: "registered", active: true },
  { roots: ["enrolled", "enrollment", "enrolment", "enroll"], verb: "enrolled", active: true },
  { roots: ["start", "started", "starting"], verb: "started", active: true },
  { roots: ["end", "ended", "ending"], verb: "ended", active: true },
  { roots: ["opening", "opened", "open"], verb: "opened", active: true },
  { roots: ["death", "died"], verb: "died", active: true },
  { roots: ["hire", "hired", "hiring"], verb: "hired", active: false },
  { roots: ["birth", "born"], verb: "born", active: false },
  { roots: ["creation", "created", "create"], verb: "created", active: false },
  { roots: ["founded", "founding", "foundation"], verb: "founded", active: false },
  { roots: ["formed", "formation"], verb: "formed", active: false },
  { roots: ["release", "released"], verb: "released", active: false },
  { roots: ["publication", "published", "publish"], verb: "published", active: false },
  { roots: ["ship", "shipped", "shipping", "shipment"], verb: "shipped", active: false },
  { roots: ["order", "ordered"], verb: "placed", active: false },
  { roots: ["delivery", "delivered"], verb: "delivered", active: false },
  { roots: ["paid", "payment"], verb: "paid", active: false },
  { roots: ["built", "build", "construction"], verb: "built", active: false },
  { roots: ["issue", "issued"], verb: "issued", active: false },
];

/** The verb a date column's name gives (see DATE_VERBS), or null. */
export function dateVerb(c: Col): { verb: string; active: boolean } | null {
  const root = c.w.replace(/\b(date|day|time|on|at|of|the)\b/g, " ").replace(/\s+/g, " ").trim();
  return DATE_VERBS.find((d) => d.roots.includes(root)) ?? null;
}

/** A text value said before the row noun: one short word of a column of a few categories ("vip", "Premium"; not "John Faso"). */
export function modifierValue(c: Col, v: string | number): boolean {
  return c.kind === "text" && c.values.length <= 8 && typeof v === "string" && !PLACE.test(c.w) &&
    !NOT_CATEGORY.test(c.w) && /^[A-Za-z][a-z]{2,14}$|^[A-Z]{3,5}$/.test(v) && !FLAG.test(v);
}

/** A text value of a place-like column that reads as a place ("DE", "Lyon", "New York"; not "active"). */
export function placeValue(c: Col, v: string | number): boolean {
  return c.kind === "text" && PLACE.test(c.w) && typeof v === "string" && /^[A-Z][A-Za-z.' -]{1,30}$/.test(v);
}

/** A filter as SQL and in words: before the row noun, after it, and as the scope of a sentence. */
export interface Filter {
  sql: string;
  col: Col;
  /** Modifiers before the plural row noun: "vip", "2025", "DE-based" (often none). */
  pre: string[];
  /** Phrases after the row noun: "in DE", "whose segment is vip", "who signed up in 2025". */
  post: string[];
  /** Openings of a sentence that state the filter first: "In the vip segment", "In DE", "In 2025" (often none). */
  scope: string[];
}

/** A comparison of a year: in it, before it, after it. */
export type YearOp = "=" | "<" | ">";
const YEAR_WORD: Record<YearOp, string> = { "=": "in", "<": "before", ">": "after" };

/**
 * The ways to say `c = v` (or, for a date column, that its year is `op` v's) of rows called `rows`
 * (plural) on a table whose columns are `cols`.
 */
export function sayFilter(rows: string, cols: readonly Col[], c: Col, v: string | number, op: YearOp = "="): Filter {
  const col = quoteIdent(c.c.name);
  if (c.kind === "date") {
    const y = String(v).slice(0, 4), when = `${YEAR_WORD[op]} ${y}`;
    // The year alone ("2025 orders", "in 2025") names the column only where the table has no other date.
    const only = cols.filter((k) => k.kind === "date").length === 1;
    const verb = dateVerb(c);
    const post = [`with a ${c.w} ${when}`, `whose ${c.w} is ${when}`];
    if (verb?.active) post.push(`${PERSON.test(rows) ? "who" : "that"} ${verb.verb} ${when}`);
    if (verb && !verb.active) post.push(`${verb.verb} ${when}`, `that were ${verb.verb} ${when}`);
    if (only && op === "=") post.push(`in ${y}`, `during ${y}`, `from ${y}`);
    return {
      sql: `strftime('%Y', ${col}) ${op} '${y}'`,
      col: c,
      pre: only && op === "=" ? [y] : [],
      post,
      scope: only && op === "=" ? [`In ${y}`, `For ${y}`] : [],
    };
  }
  const s = String(v);
  const post = [
    `with ${c.w} ${s}`,
    `whose ${c.w} is ${s}`,
    `with a ${c.w} of ${s}`,
    `where ${c.w} = ${s}`,
    `where the ${c.w} is ${s}`,
    `having ${c.w} ${s}`,
  ];
  const pre: string[] = [], scope: string[] = [];
  if (modifierValue(c, v)) {
    pre.push(s);
    post.push(`in the ${s} ${c.w}`);
    scope.push(`In the ${s} ${c.w}`);
  }
  if (placeValue(c, v)) {
    pre.push(`${s}-based`);
    post.push(`in ${s}`, `located in ${s}`, `based in ${s}`, `that are in ${s}`, `from ${s}`);
    scope.push(`In ${s}`);
  }
  if (c.kind === "text" && c.w === "name") post.push(`named ${s}`, `called ${s}`);
  return { sql: `${col} = ${typeof v === "number" ? String(v) : quoteLiteral(v)}`, col: c, pre, post, scope };
}

const pick = <T>(rng: Rng, xs: readonly T[]): T => xs[rng.int(xs.length)];

/**
 * The rows with the filter as one noun phrase, the filter before the noun (where it has such a form,
 * 40% of the time) or after it: "vip customers", "customers based in DE"; `adj` (a defined term) first.
 */
export function filteredRows(rng: Rng, f: Filter, rows: string, adj = ""): string {
  const a = adj ? `${adj} ` : "";
  if (f.pre.length && rng.next() < 0.4) return `${a}${pick(rng, f.pre)} ${rows}`;
  return `${a}${rows} ${pick(rng, f.post)}`;
}

/** The filter stated first, as the sentence's opening ("In the vip segment"), or null where it has none. */
export function scopeOf(rng: Rng, f: Filter): string | null {
  return f.scope.length ? pick(rng, f.scope) : null;
}
