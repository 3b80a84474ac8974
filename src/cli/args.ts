// Argument parsing shared by every command (node:util's parseArgs, which Deno provides).
import { parseArgs } from "node:util";

/** An error the user caused (bad flag, missing file): printed without a stack trace. */
export class UsageError extends Error {
  constructor(msg: string) {
    super(msg);
    this.name = "UsageError";
  }
}

export type FlagSpec = Record<
  string,
  { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }
>;

/** Parses `argv` against `spec`; unknown flags are a UsageError naming the flag. */
export function parseFlags(
  argv: string[],
  spec: FlagSpec,
): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
  try {
    const { values, positionals } = parseArgs({ args: argv, options: spec, allowPositionals: true, strict: true });
    return { values: values as Record<string, string | boolean | string[] | undefined>, positionals };
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
}

/** A required string flag. */
export function req(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== "string" || v === "") throw new UsageError(`--${name} is required`);
  return v;
}

/** The range a numeric flag accepts: bounds inclusive; `integer` refuses fractions. */
export interface NumRange {
  min: number;
  max: number;
  integer?: boolean;
}

/** The largest delay a JavaScript timer takes (2^31 - 1 ms); a larger one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Worker or process counts: more than this is a typo, not a machine. */
export const MAX_WORKERS = 256;

/** Seeds are unsigned 32-bit words (the RNG's state is seeded from one). */
export const SEED: NumRange = { min: 0, max: 2 ** 32 - 1, integer: true };

/** Counts of steps, questions or rows: integers up to a billion. */
export const COUNT_MAX = 1e9;

function showRange(r: NumRange): string {
  return `${r.integer ? "an integer" : "a number"} from ${r.min} to ${r.max}`;
}

/**
 * An optional number flag, checked against its range: every numeric flag of every command goes
 * through here, so a value past a timer's limit, a zero cap or a runaway worker count is a usage
 * error naming the flag and what it accepts.
 */
export function num(values: Record<string, unknown>, name: string, dflt: number, range: NumRange): number {
  const v = values[name];
  if (v === undefined) return dflt;
  const n = typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  if (!Number.isFinite(n) || n < range.min || n > range.max || (range.integer && !Number.isInteger(n))) {
    throw new UsageError(`--${name} must be ${showRange(range)}, got ${JSON.stringify(v)}`);
  }
  return n;
}

/** An optional integer flag within [min, max]. */
export function int(values: Record<string, unknown>, name: string, dflt: number, min: number, max: number): number {
  return num(values, name, dflt, { min, max, integer: true });
}

/**
 * Checks that output file `path` can be written, before any work: opened for writing (created and
 * removed again when it did not exist), so an unwritable --out fails at once, not after the work.
 */
export async function checkWritable(path: string, flag: string): Promise<void> {
  let existed = true;
  try {
    const i = await Deno.stat(path);
    if (!i.isFile) throw new UsageError(`${flag} ${path} is not a regular file`);
  } catch (e) {
    if (e instanceof UsageError) throw e;
    if (!(e instanceof Deno.errors.NotFound)) {
      throw new UsageError(`cannot write ${flag} ${path}: ${e instanceof Error ? e.message : String(e)}`);
    }
    existed = false;
  }
  try {
    (await Deno.open(path, { write: true, create: true })).close();
  } catch (e) {
    throw new UsageError(`cannot write ${flag} ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (!existed) await Deno.remove(path).catch(() => undefined);
}
