// Benchmark records: one JSON object a line in bench/results/records.jsonl. Every suite of
// bench/run.ts appends records through appendRecords, which validates them first; the summary
// (bench/summary.mjs) and docs/performance.md's test read them back through readRecords.
import { appendFileSync, existsSync, readFileSync } from "node:fs";

/** The engine that ran the suite: Dawn (npm `webgpu`, Chrome's engine) or Deno's own WebGPU (wgpu). */
export type Engine = "dawn" | "deno";
export const ENGINES: readonly Engine[] = ["dawn", "deno"];

/** One measurement of one suite at one commit on one device. */
export type BenchRecord = {
  /** Suite name, e.g. "train-step" (bench/run.ts's suites). */
  suite: string;
  /** The commit measured (short or full hash). */
  commit: string;
  /** When it was measured, ISO 8601. */
  date: string;
  /** The device as the driver names it (adapter info: vendor, architecture, description). */
  device: string;
  engine: Engine;
  /** The command that produced it, runnable from the repository root. */
  command: string;
  /**
   * Our figures, name -> value (units in the name: tok_s, _ms, _s, _bytes). train-step's peak_bytes is the
   * stored-activation step's peak of the trainer's own buffer accounting; recompute_peak_bytes the recomputed one's.
   */
  figures: Record<string, number>;
  /** The reference system's figures from the same run (PyTorch, transformers), name -> value. */
  reference: Record<string, number>;
  notes?: string;
  /** How many timed runs each figure summarises. */
  runs?: number;
};

/** Figures (and reference figures) that a record of each known suite must carry. Other suites need none. */
export const REQUIRED: Readonly<Record<string, { figures: readonly string[]; reference: readonly string[] }>> = {
  "train-step": { figures: ["tok_s", "recompute_tok_s", "peak_bytes"], reference: ["torch_tok_s"] },
  pretrain: { figures: ["tok_s"], reference: ["torch_tok_s"] },
  "grpo-step": { figures: ["hub_step_s", "demo_step_s"], reference: ["torch_hub_step_s"] },
  decode: {
    figures: ["tok_s_b8", "tok_s_b64", "first_token_ms_b8"],
    reference: ["transformers_tok_s_b8", "transformers_tok_s_b64"],
  },
};

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

function bad(field: string, why: string): never {
  throw new Error(`bench record: ${field} ${why}`);
}

function str(o: Record<string, unknown>, field: string): string {
  const v = o[field];
  if (typeof v !== "string" || v.trim() === "") bad(field, `must be a non-empty string (got ${JSON.stringify(v)})`);
  return v;
}

function numbers(o: Record<string, unknown>, field: string): Record<string, number> {
  const v = o[field];
  if (!isObject(v)) bad(field, "must be an object of name -> number");
  const out: Record<string, number> = {};
  for (const [k, n] of Object.entries(v)) {
    if (typeof n !== "number" || !Number.isFinite(n)) {
      bad(`${field}.${k}`, `must be a finite number (got ${JSON.stringify(n)})`);
    }
    out[k] = n;
  }
  return out;
}

const KNOWN = new Set([
  "suite",
  "commit",
  "date",
  "device",
  "engine",
  "command",
  "figures",
  "reference",
  "notes",
  "runs",
]);

/** Checks that x is a BenchRecord (the suite's required figures included); throws naming the bad field. */
export function validateRecord(x: unknown): BenchRecord {
  if (!isObject(x)) bad("(record)", "must be an object");
  for (const k of Object.keys(x)) if (!KNOWN.has(k)) bad(k, "is not a record field");
  const suite = str(x, "suite");
  const commit = str(x, "commit");
  if (!/^[0-9a-f]{7,40}$/.test(commit)) bad("commit", `must be a git hash (got ${JSON.stringify(commit)})`);
  const date = str(x, "date");
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(date) || Number.isNaN(Date.parse(date))) {
    bad("date", `must be an ISO 8601 date (got ${JSON.stringify(date)})`);
  }
  const device = str(x, "device");
  const engine = x.engine;
  if (engine !== "dawn" && engine !== "deno") {
    bad("engine", `must be one of ${ENGINES.join(", ")} (got ${JSON.stringify(engine)})`);
  }
  const command = str(x, "command");
  const figures = numbers(x, "figures");
  const reference = numbers(x, "reference");
  const need = REQUIRED[suite];
  if (need) {
    for (const f of need.figures) if (!(f in figures)) bad(`figures.${f}`, `is required for suite ${suite}`);
    for (const f of need.reference) if (!(f in reference)) bad(`reference.${f}`, `is required for suite ${suite}`);
  }
  const rec: BenchRecord = { suite, commit, date, device, engine, command, figures, reference };
  if (x.notes !== undefined) {
    if (typeof x.notes !== "string") bad("notes", "must be a string");
    rec.notes = x.notes;
  }
  if (x.runs !== undefined) {
    if (typeof x.runs !== "number" || !Number.isInteger(x.runs) || x.runs < 1) {
      bad("runs", "must be a positive integer");
    }
    rec.runs = x.runs;
  }
  return rec;
}

/** Validates every record, then appends them to path (JSON Lines); nothing is written if one is bad. */
export function appendRecords(path: string, records: readonly unknown[]): BenchRecord[] {
  const valid = records.map((r, i) => {
    try {
      return validateRecord(r);
    } catch (e) {
      throw new Error(`record ${i}: ${(e as Error).message}`);
    }
  });
  if (valid.length) appendFileSync(path, valid.map((r) => JSON.stringify(r) + "\n").join(""));
  return valid;
}

/** Reads and validates the records of a JSON Lines file (blank lines skipped); a missing file has none. */
export function readRecords(path: string): BenchRecord[] {
  if (!existsSync(path)) return [];
  const out: BenchRecord[] = [];
  readFileSync(path, "utf8").split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (e) {
      throw new Error(`${path}:${i + 1}: not JSON (${(e as Error).message})`);
    }
    try {
      out.push(validateRecord(parsed));
    } catch (e) {
      throw new Error(`${path}:${i + 1}: ${(e as Error).message}`);
    }
  });
  return out;
}

/** The newest record of each suite (by date, then file order), keyed by suite. */
export function latestBySuite(records: readonly BenchRecord[]): Map<string, BenchRecord> {
  const out = new Map<string, BenchRecord>();
  for (const r of records) {
    const have = out.get(r.suite);
    if (!have || Date.parse(r.date) >= Date.parse(have.date)) out.set(r.suite, r);
  }
  return out;
}
