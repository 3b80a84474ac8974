// PRM data as files and its curation: the labelled chains a PRM data cell writes
// (prm-data/<cell>/labels.jsonl, one PrmRecord per line, and questions.jsonl with each question's
// prompt), the filters that turn them into the training set (train.jsonl), and the statistics the
// cell reports (labels per step position, first-error histogram). Pure.
import { Rng } from "./rng.ts";

/** One labelled chain. Offsets and labels follow core/prm-steps.ts's steps of `completion`. */
export interface PrmRecord {
  v: 1;
  taskId: string;
  dbId: string;
  completion: string;
  /** The SQL extracted from the completion (null: none found). */
  sql: string | null;
  ends: number[];
  names: (string | null)[];
  /** Labels of steps 0 .. labels.length - 1 (1: can reach the gold result; 0: the first error). */
  labels: number[];
  /** Fraction of rollouts from each labelled step that reached the gold result (null: none were needed). */
  rates: (number | null)[];
  correct: boolean;
  firstError: number | null;
  complete: boolean;
  source: "sample" | "rollout";
  prefixSteps: number;
}

/** One question of the data: its prompt as the PRM reads it (chat-rendered) and its gold. */
export interface PrmQuestion {
  v: 1;
  taskId: string;
  dbId: string;
  question: string;
  gold_sql: string;
  prompt: string;
  template: string;
  difficulty?: string;
}

/** Curation knobs (docs/prm.md, "PRM data"). */
export interface CurateOptions {
  /** Drop chains with no SQL in them (format failures: trivially wrong, they teach little). */
  dropUnparsed: boolean;
  /** A positive step whose rollouts reached the gold less often than this is not trusted: its label and later ones are dropped (0: off). */
  minPositiveRate: number;
  /** At most this many chains of the larger class (with an error / all correct) per chain of the smaller one (0: off). */
  balance: number;
  seed: number;
}

/** What curation removed or changed, by reason. */
export interface CurateReport {
  input: number;
  unparsed: number;
  unlabelled: number;
  /** Negative labels flipped: the same prefix text reached the gold from another chain (a sampling false negative). */
  flipped: number;
  /** Positive labels cut for a rate under minPositiveRate. */
  lowRate: number;
  duplicates: number;
  /** Chains left out to balance the classes. */
  balanced: number;
  kept: number;
}

const norm = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/** Filters, merges, deduplicates and balances labelled chains (input order kept among what remains). */
export function curate(records: readonly PrmRecord[], o: CurateOptions): { kept: PrmRecord[]; report: CurateReport } {
  const report: CurateReport = {
    input: records.length,
    unparsed: 0,
    unlabelled: 0,
    flipped: 0,
    lowRate: 0,
    duplicates: 0,
    balanced: 0,
    kept: 0,
  };
  let rs = records.map((r) => ({ ...r, labels: [...r.labels], rates: [...r.rates] }));
  if (o.dropUnparsed) {
    const before = rs.length;
    rs = rs.filter((r) => r.sql !== null);
    report.unparsed = before - rs.length;
  }
  // A prefix that reached the gold from any chain is correct by definition: zeros on it were sampling misses.
  const positive = new Set<string>();
  for (const r of rs) {
    r.labels.forEach((y, k) => y === 1 && positive.add(`${r.taskId}\u0000${norm(r.completion.slice(0, r.ends[k]))}`));
  }
  for (const r of rs) {
    const k = r.labels.length - 1;
    if (k >= 0 && r.labels[k] === 0 && positive.has(`${r.taskId}\u0000${norm(r.completion.slice(0, r.ends[k]))}`)) {
      r.labels[k] = 1;
      r.firstError = null;
      r.complete = false;
      report.flipped++;
    }
    if (o.minPositiveRate > 0) {
      const cut = r.labels.findIndex((y, j) => y === 1 && r.rates[j] !== null && (r.rates[j] ?? 1) < o.minPositiveRate);
      if (cut >= 0) {
        report.lowRate += r.labels.length - cut;
        r.labels = r.labels.slice(0, cut);
        r.rates = r.rates.slice(0, cut);
        r.firstError = null;
        r.complete = false;
      }
    }
  }
  const before = rs.length;
  rs = rs.filter((r) => r.labels.length > 0);
  report.unlabelled = before - rs.length;
  // Duplicates: the same answer to the same question; the copy with more labels stays.
  const byText = new Map<string, number>();
  const unique: typeof rs = [];
  for (const r of rs) {
    const k = `${r.taskId}\u0000${norm(r.completion)}`;
    const at = byText.get(k);
    if (at === undefined) {
      byText.set(k, unique.length);
      unique.push(r);
    } else {
      report.duplicates++;
      if (r.labels.length > unique[at].labels.length) unique[at] = r;
    }
  }
  rs = unique;
  if (o.balance > 0) {
    const neg = rs.filter((r) => r.labels.includes(0));
    const pos = rs.filter((r) => !r.labels.includes(0));
    const [small, large] = neg.length <= pos.length ? [neg, pos] : [pos, neg];
    const cap = Math.ceil(o.balance * small.length);
    if (small.length > 0 && large.length > cap) {
      const drop = new Set(new Rng(o.seed).shuffle([...large]).slice(cap));
      report.balanced = drop.size;
      rs = rs.filter((r) => !drop.has(r));
    }
  }
  report.kept = rs.length;
  return { kept: rs, report };
}

/** Labels per step position and the first-error histogram of a set of chains. */
export interface PrmDataStats {
  chains: number;
  correctChains: number;
  questions: number;
  labels: { positive: number; negative: number };
  /** Per step position k (0-based): positive and negative labels there. */
  byPosition: { positive: number[]; negative: number[] };
  /** First-error position -> chains ("none": every step correct and the answer right; "past": every step correct, the answer wrong; "unresolved": search stopped first). */
  firstError: Record<string, number>;
  /** Chains by how many steps they have. */
  stepCounts: Record<string, number>;
}

/** The statistics of `records`. */
export function prmDataStats(records: readonly PrmRecord[]): PrmDataStats {
  const s: PrmDataStats = {
    chains: records.length,
    correctChains: 0,
    questions: new Set(records.map((r) => r.taskId)).size,
    labels: { positive: 0, negative: 0 },
    byPosition: { positive: [], negative: [] },
    firstError: {},
    stepCounts: {},
  };
  const bump = (m: Record<string, number>, k: string) => (m[k] = (m[k] ?? 0) + 1);
  for (const r of records) {
    if (r.correct) s.correctChains++;
    bump(s.stepCounts, String(r.ends.length));
    r.labels.forEach((y, k) => {
      const side = y === 1 ? "positive" : "negative";
      s.labels[side]++;
      while (s.byPosition.positive.length <= k) {
        s.byPosition.positive.push(0);
        s.byPosition.negative.push(0);
      }
      s.byPosition[side][k]++;
    });
    const fe = r.firstError !== null ? String(r.firstError) : r.correct ? "none" : r.complete ? "past" : "unresolved";
    bump(s.firstError, fe);
  }
  return s;
}

function isRecordObj(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

const nums = (x: unknown): x is number[] =>
  Array.isArray(x) && x.every((v) => typeof v === "number" && Number.isFinite(v));

/** Type guard of one labels.jsonl line. */
export function isPrmRecord(x: unknown): x is PrmRecord {
  if (!isRecordObj(x) || x.v !== 1) return false;
  if (typeof x.taskId !== "string" || typeof x.dbId !== "string" || typeof x.completion !== "string") return false;
  if (
    !(x.sql === null || typeof x.sql === "string") || typeof x.correct !== "boolean" || typeof x.complete !== "boolean"
  ) return false;
  if (!nums(x.ends) || !nums(x.labels) || !Array.isArray(x.rates) || !Array.isArray(x.names)) return false;
  if (x.labels.length > x.ends.length || x.labels.some((y) => y < 0 || y > 1)) return false;
  return (x.firstError === null || typeof x.firstError === "number") &&
    (x.source === "sample" || x.source === "rollout");
}

/** JSON Lines of records, newline-terminated. */
export function encodeJsonl(rows: readonly unknown[]): string {
  return rows.map((r) => JSON.stringify(r) + "\n").join("");
}

/** Records out of JSON Lines, with the line numbers that were not records (a partial last line is ignored). */
export function decodePrmRecords(text: string): { records: PrmRecord[]; bad: number[] } {
  const records: PrmRecord[] = [];
  const bad: number[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      const v: unknown = JSON.parse(line);
      if (isPrmRecord(v)) records.push(v);
      else bad.push(i + 1);
    } catch {
      if (!(i === lines.length - 1 && !text.endsWith("\n"))) bad.push(i + 1);
    }
  });
  return { records, bad };
}
