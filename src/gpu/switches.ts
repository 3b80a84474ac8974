// The trainer's tuning knobs: each trades one thing for another, and benchmarks time them (docs/kernels.md, "Tuning
// knobs", says what each trades and why its default). Read once from RLVR_PERF under Deno (a comma-separated list of
// name=value) and changed by benchmarks with setPerfSwitches. Variants that only kept an earlier behaviour alive are
// gone (docs/kernels.md, "Tried and dropped").
import { denoEnv } from "../core/deno-env.ts";

/** The knobs. */
export interface PerfSwitches {
  /** "merged": consecutive dispatches of a step's encoder share one compute pass; "split": a pass per dispatch (per-kernel timing). */
  passes: "merged" | "split";
  /**
   * K slices for a product on 128-column tiles whose grid is a few workgroups per multiprocessor of a big GPU (fewer
   * than matmul-plan.ts's WIDE_SPLIT_TILES tiles): the slices run as more workgroups and a reduce sums them. Up to 4 the
   * partials fit a 64 MiB split scratch; 5-8 may take up to 192 MiB, in the call scratch where it already holds them.
   */
  wideSplit: 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;
  /**
   * The narrow kernel's split along K (the LoRA rank products): slices until the grid has about `narrowWg` workgroups
   * with at least `narrowMinK` contracted elements each. More, shorter slices put more loads in flight and a larger
   * partial sum through the reduce.
   */
  narrowWg: 256 | 512 | 1024 | 2048;
  narrowMinK: 64 | 128 | 256;
  /**
   * LoRA training on f32 projections uploads each frozen projection a second time, transposed (1: the forward's x W^T
   * then reads W row-fastest), or once (0: half the projections' memory). Read by the callers of uploadModel that train
   * adapters (the notebook's runtime, the benchmarks), never by full fine-tuning.
   */
  wT: 0 | 1;
  /**
   * q4 products of at least Q4_DEQUANT_MIN_ROWS rows dequantise W whole into the call scratch and run the f32 kernels
   * on it (1); 2 at any rows (tests); 0: the q4 kernels, which dequantise in their tile loaders (no f32 copy of W).
   */
  q4deq: 0 | 1 | 2;
}

/** The defaults. */
export const DEFAULT_SWITCHES: Readonly<PerfSwitches> = {
  passes: "merged",
  wideSplit: 7,
  narrowWg: 1024,
  narrowMinK: 128,
  wT: 1,
  q4deq: 1,
};

const CHOICES: { [K in keyof PerfSwitches]: readonly string[] } = {
  passes: ["merged", "split"],
  wideSplit: ["1", "2", "3", "4", "5", "6", "7", "8"],
  narrowWg: ["256", "512", "1024", "2048"],
  narrowMinK: ["64", "128", "256"],
  wT: ["0", "1"],
  q4deq: ["0", "1", "2"],
};

function isKey(k: string): k is keyof PerfSwitches {
  return Object.prototype.hasOwnProperty.call(CHOICES, k);
}

/** Parses "default" or "name=value,..." (on top of `base`) into knobs; throws on unknown names or values. */
export function parsePerfSwitches(spec: string, base: Readonly<PerfSwitches> = DEFAULT_SWITCHES): PerfSwitches {
  const out: PerfSwitches = { ...base };
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
    if (!CHOICES[k].includes(v)) throw new Error(`perf switch ${k}: one of ${CHOICES[k].join(", ")}, got ${v}`);
    switch (k) {
      case "passes":
        out.passes = v === "split" ? "split" : "merged";
        break;
      case "wideSplit":
        out.wideSplit = Number(v) as PerfSwitches["wideSplit"];
        break;
      case "narrowWg":
        out.narrowWg = Number(v) as PerfSwitches["narrowWg"];
        break;
      case "narrowMinK":
        out.narrowMinK = Number(v) as PerfSwitches["narrowMinK"];
        break;
      case "wT":
        out.wT = v === "1" ? 1 : 0;
        break;
      case "q4deq":
        out.q4deq = v === "1" ? 1 : v === "2" ? 2 : 0;
        break;
    }
  }
  return out;
}

/** "passes=merged,wideSplit=7,...": the form RLVR_PERF and the benches' perf= take. */
export function formatPerfSwitches(s: Readonly<PerfSwitches>): string {
  return `passes=${s.passes},wideSplit=${s.wideSplit},narrowWg=${s.narrowWg},narrowMinK=${s.narrowMinK},wT=${s.wT},q4deq=${s.q4deq}`;
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
