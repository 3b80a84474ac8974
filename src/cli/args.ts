// Argument parsing shared by every command (node:util's parseArgs, which Deno provides).
import { parseArgs } from "node:util";

/** An error the user caused (bad flag, missing file): printed without a stack trace. */
export class UsageError extends Error {
  constructor(msg: string) {
    super(msg);
    this.name = "UsageError";
  }
}

export type FlagSpec = Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean; default?: string | boolean }>;

/** Parses `argv` against `spec`; unknown flags are a UsageError naming the flag. */
export function parseFlags(argv: string[], spec: FlagSpec): { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] } {
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

/** An optional number flag, checked. */
export function num(values: Record<string, unknown>, name: string, dflt: number): number {
  const v = values[name];
  if (v === undefined) return dflt;
  const n = Number(v);
  if (typeof v !== "string" || !Number.isFinite(n)) throw new UsageError(`--${name} must be a number, got ${JSON.stringify(v)}`);
  return n;
}
