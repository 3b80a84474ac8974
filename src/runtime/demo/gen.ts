// Building blocks of the demo data generator: dates, skewed choices, names. Everything draws
// from a seeded Rng, so the same seed gives the same databases byte for byte.
import type { Rng } from "../../core/rng.ts";

/** The demo's "today": organisation definitions such as churn are stated relative to it. */
export const TODAY = "2026-06-30";

const DAY_MS = 86_400_000;

/** ISO date `days` after `iso`. */
export function addDays(iso: string, days: number): string {
  return new Date(Date.parse(`${iso}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b`. */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** A uniformly random date in [from, to]. */
export function randomDate(rng: Rng, from: string, to: string): string {
  return addDays(from, rng.int(daysBetween(from, to) + 1));
}

/** A date-time 'YYYY-MM-DD HH:MM:SS' on `iso`, skewed towards working hours. */
export function randomTime(rng: Rng, iso: string): string {
  const hour = rng.next() < 0.8 ? 8 + rng.int(11) : rng.int(24);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${iso} ${pad(hour)}:${pad(rng.int(60))}:${pad(rng.int(60))}`;
}

/** Picks from `items` with the given relative weights. */
export function weighted<T>(rng: Rng, items: readonly T[], weights: readonly number[]): T {
  const total = weights.reduce((s, w) => s + w, 0);
  let x = rng.next() * total;
  for (let i = 0; i < items.length; i++) {
    x -= weights[i];
    if (x < 0) return items[i];
  }
  return items[items.length - 1];
}

/** Picks uniformly. */
export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[rng.int(items.length)];
}

/** A Zipf-like index in [0, n): a few values are very common, most are rare. */
export function zipf(rng: Rng, n: number, s = 1.1): number {
  // Inverse-CDF on a precomputed harmonic table would be exact; this rejection-free power law is enough.
  const u = rng.next();
  return Math.min(n - 1, Math.floor(n * u ** (s + 1.5)));
}

/** Rounds to cents. */
export function money(x: number): number {
  return Math.round(x * 100) / 100;
}

/** Log-normal draw with the given median and spread. */
export function logNormal(rng: Rng, median: number, sigma: number): number {
  return median * Math.exp(sigma * rng.normal());
}

const FIRST = [
  "Ava",
  "Noah",
  "Mia",
  "Liam",
  "Zoe",
  "Omar",
  "Lena",
  "Ivan",
  "Sara",
  "Kenji",
  "Amara",
  "Lucas",
  "Priya",
  "Mateo",
  "Chloe",
  "Yusuf",
  "Elena",
  "Tariq",
  "Hana",
  "Jonas",
  "Nadia",
  "Felix",
  "Aiko",
  "Diego",
  "Ines",
  "Marek",
  "Leila",
  "Tomas",
  "Grace",
  "Ravi",
] as const;
const LAST = [
  "Smith",
  "Garcia",
  "Kim",
  "Novak",
  "Okafor",
  "Rossi",
  "Silva",
  "Tanaka",
  "Müller",
  "Haddad",
  "Nguyen",
  "Kowalski",
  "Dubois",
  "Jensen",
  "Patel",
  "Costa",
  "Ivanova",
  "Brown",
  "Lopez",
  "Sato",
  "Andersen",
  "Moreau",
  "Ali",
  "Schmidt",
  "Cohen",
] as const;

/** A person's full name. */
export function personName(rng: Rng): string {
  return `${pick(rng, FIRST)} ${pick(rng, LAST)}`;
}

/** A table's rows, in column order. */
export type Rows = (string | number | null)[][];

/** A generated database: DDL statements and each table's rows. */
export interface DemoDatabase {
  id: string;
  ddl: string[];
  tables: Record<string, Rows>;
}

/** A question template: phrasings with {slots}, the gold SQL for a parameter set, and evidence. */
export interface QuestionTemplate {
  id: string;
  difficulty: "simple" | "moderate" | "challenging";
  phrasings: string[];
  /** The organisation-specific knowledge the question needs, as BIRD's `evidence`. */
  evidence?: string;
  /** Parameter sets to instantiate; one entry `{}` for templates without slots. */
  params: Record<string, string | number>[];
  sql: (p: Record<string, string | number>) => string;
}

/** Fills {slot}s in `text`. */
export function fill(text: string, p: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (_m, k: string) => {
    if (!(k in p)) throw new Error(`template slot {${k}} has no value`);
    return String(p[k]);
  });
}

/** SQL string literal. */
export function q(s: string | number): string {
  return typeof s === "number" ? String(s) : `'${s.replace(/'/g, "''")}'`;
}
