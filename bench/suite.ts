// What a benchmark suite is (bench/suites/*.ts, run by bench/run.ts) and the helpers the suites share:
// the GPU, step timing, and the reference scripts (bench/torch/*.py) run in the same process tree.
import type { Gpu } from "../src/gpu/device.ts";
import type { BenchRecord } from "./records.ts";

/** A suite's measurement: the parts of a record the suite knows (run.ts adds commit, date, device, engine, command). */
export type SuiteResult = Pick<BenchRecord, "figures" | "reference"> & { notes?: string; runs?: number };

/** What run.ts hands a suite. */
export interface SuiteContext {
  /** The key=value arguments after the suite's name (engine flag, record= and commit= removed). */
  args: ReadonlyMap<string, string>;
  /** A folder for logs and the reference scripts' JSON (out=, default a temporary folder). */
  out: string;
  /** The GPU, requested on first use (the record's device comes from it). */
  gpu(): Promise<Gpu>;
  /** False under torch=0: the suite skips its reference (then no record can be written for suites that need one). */
  reference: boolean;
}

/** A named suite: what it measures, its options, and the measurement. */
export interface Suite {
  about: string;
  usage: string;
  run(ctx: SuiteContext): Promise<SuiteResult | SuiteResult[]>;
}

/** A number option: args[key], else the default; throws on a non-number. */
export function numArg(args: ReadonlyMap<string, string>, key: string, dflt: number): number {
  const v = args.get(key);
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`${key}=${v}: not a number`);
  return n;
}

/** Best, median and every time of n runs of fn, each waited for on the GPU, after `warmup` untimed runs. */
export async function timeSteps(device: GPUDevice, n: number, fn: () => Promise<unknown>, warmup = 1) {
  for (let i = 0; i < warmup; i++) {
    await fn();
    await device.queue.onSubmittedWorkDone();
  }
  const allMs: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    await fn();
    await device.queue.onSubmittedWorkDone();
    allMs.push(performance.now() - s);
  }
  const sorted = [...allMs].sort((a, b) => a - b);
  return { bestMs: sorted[0], medianMs: sorted[Math.floor(sorted.length / 2)], allMs };
}

/**
 * Runs `python3 bench/torch/<script> --out <ctx.out> ...args` in the repository root (its output goes to the
 * console) and returns the JSON it wrote as `name`; throws with the script's exit code if it failed.
 */
export async function pythonReference(
  ctx: SuiteContext,
  script: string,
  args: string[],
  name: string,
): Promise<unknown> {
  // From the working folder, not this file: a bundle of run.ts lives elsewhere; run it from the repository root.
  const path = `bench/torch/${script}`;
  const p = await new Deno.Command("python3", {
    args: [path, "--out", ctx.out, ...args],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!p.success) throw new Error(`python3 bench/torch/${script} exited with ${p.code}`);
  return JSON.parse(await Deno.readTextFile(`${ctx.out}/${name}`));
}

/** The median (the mean of the middle two of an even count). */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** The device bundle's folder (bench/device-prep.sh, suites/peers-prep.sh: bin/a/b/run.js), or null from the sources. */
export function bundleDir(): string | null {
  const here = new URL(".", import.meta.url);
  return here.pathname.endsWith("/bin/a/b/") ? new URL("../../../", here).pathname : null;
}

/** Rounds to `digits` decimals (records keep no float noise). */
export const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * The device as the driver names it: NVIDIA's driver's name for the card where nvidia-smi answers (Dawn's adapter info
 * gives only the driver's version there), else the adapter's description, else its vendor, architecture and device.
 */
export function deviceName(info: Gpu["info"]): string {
  try {
    const p = new Deno.Command("nvidia-smi", {
      args: ["--query-gpu=name", "--format=csv,noheader"],
      stdout: "piped",
      stderr: "null",
    })
      .outputSync();
    const name = new TextDecoder().decode(p.stdout).split("\n")[0].trim();
    if (p.success && name) return name;
  } catch { /* no NVIDIA driver here */ }
  return info.description.trim() || [info.vendor, info.architecture, info.device].filter(Boolean).join(" ") ||
    "unknown adapter";
}
