// The trainer's tuning knobs: each trades one thing for another, and benchmarks time them (docs/kernels.md, "Tuning
// knobs", says what each trades and why its default). Read once from RLVR_PERF under Deno (a comma-separated list of
// name=value) and changed by tests with setPerfSwitches.
import { denoEnv } from "../core/deno-env.ts";

/** The knobs. */
export interface PerfSwitches {
  /** "merged": consecutive dispatches of a step's encoder share one compute pass; "split": a pass per dispatch. */
  passes: "merged" | "split";
  /** K slices of a wide product whose grid is a few workgroups per multiprocessor (matmul-plan.ts). */
  wideSplit: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
  /** The narrow kernel's split along K (the LoRA rank products): about `narrowWg` workgroups of >= `narrowMinK` each. */
  narrowWg: 256 | 512 | 1024 | 2048;
  narrowMinK: 64 | 128 | 256;
  /** Frozen f32 projections also uploaded transposed; read by the callers of uploadModel that train adapters. */
  wT: 0 | 1;
  /** q4 products of >= Q4_DEQUANT_MIN_ROWS rows run the f32 kernels on W dequantised (1); at any rows (2); never (0). */
  q4deq: 0 | 1 | 2;
}

const CHOICES: { readonly [K in keyof PerfSwitches]: readonly PerfSwitches[K][] } = {
  passes: ["merged", "split"],
  wideSplit: [1, 2, 3, 4, 5, 6, 7, 8],
  narrowWg: [256, 512, 1024, 2048],
  narrowMinK: [64, 128, 256],
  wT: [0, 1],
  q4deq: [0, 1, 2],
};

/** The defaults. */
export const DEFAULT_SWITCHES: Readonly<PerfSwitches> = {
  passes: "merged",
  wideSplit: 7,
  narrowWg: 1024,
  narrowMinK: 128,
  wT: 1,
  q4deq: 1,
};

function isKey(k: string): k is keyof PerfSwitches {
  return Object.prototype.hasOwnProperty.call(CHOICES, k);
}

function set<K extends keyof PerfSwitches>(out: PerfSwitches, k: K, v: string): void {
  const c = CHOICES[k].find((c) => String(c) === v);
  if (c === undefined) throw new Error(`perf switch ${k}: one of ${CHOICES[k].join(", ")}, got ${v}`);
  out[k] = c;
}

/** Parses "default" or "name=value,..." (on top of the defaults) into knobs; throws on unknown names or values. */
export function parsePerfSwitches(spec: string): PerfSwitches {
  const out: PerfSwitches = { ...DEFAULT_SWITCHES };
  for (const part of spec.split(",").map((s) => s.trim()).filter(Boolean)) {
    if (part === "default") {
      Object.assign(out, DEFAULT_SWITCHES);
      continue;
    }
    const eq = part.indexOf("=");
    const k = part.slice(0, eq), v = part.slice(eq + 1);
    if (eq < 0 || !isKey(k)) {
      throw new Error(`perf switch '${part}': one of default, ${Object.keys(CHOICES).map((c) => `${c}=`).join(", ")}`);
    }
    set(out, k, v);
  }
  return out;
}

function fromEnv(): PerfSwitches {
  const spec = denoEnv("RLVR_PERF");
  return spec ? parsePerfSwitches(spec) : { ...DEFAULT_SWITCHES };
}

let current: PerfSwitches = fromEnv();

/** The knobs in force. */
export function perfSwitches(): Readonly<PerfSwitches> {
  return current;
}

/** Changes some knobs for every later step (benchmarks); returns the previous ones. */
export function setPerfSwitches(s: Partial<PerfSwitches>): PerfSwitches {
  const prev = current;
  current = { ...current, ...s };
  return prev;
}
