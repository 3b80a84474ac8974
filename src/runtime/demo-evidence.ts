// The demo's evidence figures from `rlvr run` outputs: per split, prompt mode (knowledge: no
// evidence in the prompt; bird: the definitions given) and stage (baseline, after the warm-up,
// after GRPO, self-consistency), the execution accuracy of every seed; their mean and spread; and
// the gain over baseline. Pure: the command (src/cli/commands/demo-evidence.ts) reads the folders.
import type { Cell } from "../core/notebook.ts";
import type { RunSummary } from "./recipe/runner.ts";

/** The stages, as the evidence file names them. */
export const EVIDENCE_STAGES = ["baseline", "warmup", "grpo", "sc"] as const;
export type EvidenceStage = (typeof EVIDENCE_STAGES)[number];
export type PromptMode = "knowledge" | "bird";

/** What one run folder holds that the figures need. */
export interface RunOutputs {
  folder: string;
  summary: RunSummary;
  /** The notebook the run executed (notebook.json). */
  cells: readonly Cell[];
  /** Each evaluate cell's answers (predictions/<cell>.json: question index -> BIRD line "SQL\t----- bird -----\tdb"); for recall. */
  predictions?: Record<string, Record<string, string>>;
}

/** What concept recall needs of the demo: each split's questions (their concepts) and each concept's definition fragment. */
export interface RecallInputs {
  splits: Record<string, readonly { concepts?: readonly string[] }[]>;
  definitions: readonly { id: string; fragment: string }[];
}

/** SQL as recall compares it: lower case, no table qualifiers ("o.status" is "status"), spacing normalised. */
export function recallNorm(sql: string): string {
  return sql.toLowerCase().replace(/\b[a-z_][a-z0-9_]*\.(?=[a-z_"])/g, "").replace(/\s+/g, " ").replace(
    /\s*([(),=<>*+\-/])\s*/g,
    "$1",
  ).trim();
}

/**
 * The pieces of a concept's definition an answer must hold to use it: an entity concept's whole
 * condition; a measure's aggregate and each of its conditions (revenue: the SUM and status =
 * 'delivered'), since a question adds its own joins and filters between them.
 */
export function recallParts(fragment: string): string[] {
  const m = /^(SUM\([^)]*\)) FROM .*? WHERE (.*)$/.exec(fragment);
  if (!m) return [recallNorm(fragment)];
  return [m[1], ...m[2].split(/ AND (?![^(]*\))/)].map(recallNorm);
}

/** Whether `sql` holds every definition of `concepts` (recallParts). */
export function usesDefinitions(
  sql: string,
  concepts: readonly string[],
  parts: ReadonlyMap<string, string[]>,
): boolean {
  const n = recallNorm(sql);
  return concepts.every((c) => (parts.get(c) ?? [""]).every((p) => p !== "" && n.includes(p)));
}

/** Concept recall of one evaluation: the share of its questions with concepts whose answer holds their definitions. */
export function recallOf(
  pred: Record<string, string>,
  tasks: readonly { concepts?: readonly string[] }[],
  parts: ReadonlyMap<string, string[]>,
): number | null {
  let n = 0, hit = 0;
  for (const [i, line] of Object.entries(pred)) {
    const cs = tasks[Number(i)]?.concepts;
    if (!cs?.length) continue;
    n++;
    if (usesDefinitions(line.split("\t")[0], cs, parts)) hit++;
  }
  return n ? hit / n : null;
}

/** One run's figures: its mode, seed and accuracy per split and stage. */
export interface RunFigures {
  folder: string;
  mode: PromptMode;
  seed: number | null;
  model: string | null;
  accuracy: Record<string, Partial<Record<EvidenceStage, number>>>;
  /** Concept recall per split and stage (recallOf), where predictions and the split's questions were given. */
  recall: Record<string, Partial<Record<EvidenceStage, number>>>;
  questions: Record<string, number>;
}

/** Mean, sample standard deviation, min and max of a seed list. */
export interface Spread {
  n: number;
  mean: number;
  sd: number;
  min: number;
  max: number;
}

/** The evidence file (bench/evidence/summaries/<date>-demo-evidence.json). */
export interface DemoEvidence {
  generated: string;
  runs: { folder: string; mode: PromptMode; seed: number | null; model: string | null }[];
  /** split -> mode -> stage -> execution accuracy (0..1) per seed, in `seeds` order; `questions` per split. */
  splits: Record<
    string,
    Partial<Record<PromptMode, Partial<Record<EvidenceStage, number[]>> & { seeds: (number | null)[] }>> & {
      questions?: number;
    }
  >;
  /** The same as mean / sd / min / max, and the gain of each stage over baseline (seed by seed, then summarised). */
  summary: Record<
    string,
    Partial<Record<PromptMode, Partial<Record<EvidenceStage | `gain_${Exclude<EvidenceStage, "baseline">}`, Spread>>>>
  >;
  /**
   * Concept recall (issue #49): split -> mode -> stage -> the share of answers whose SQL holds the
   * question's definitions (recallParts), per seed in `seeds` order; absent without predictions.
   */
  recall?: Record<string, Partial<Record<PromptMode, Partial<Record<EvidenceStage, number[]>>>>>;
}

/** The prompt mode of a notebook: its (last) prompt cell's evidence switch. */
export function promptMode(cells: readonly Cell[]): PromptMode {
  const p = [...cells].reverse().find((c) => c.type === "prompt");
  return p && p.type === "prompt" && p.params.evidence ? "bird" : "knowledge";
}

/** One run's accuracy per split and stage (the last cell of a split and stage wins). */
export function runFigures(r: RunOutputs, demo?: RecallInputs): RunFigures {
  const typeOf = new Map(r.summary.cells.map((c) => [c.id, c.type]));
  const accuracy: RunFigures["accuracy"] = {};
  const recall: RunFigures["recall"] = {};
  const questions: Record<string, number> = {};
  const parts = new Map((demo?.definitions ?? []).map((d) => [d.id, recallParts(d.fragment)]));
  const put = (split: string, stage: EvidenceStage, acc: number, n: number, cellId: string) => {
    (accuracy[split] ??= {})[stage] = acc;
    questions[split] = n;
    const pred = r.predictions?.[cellId], tasks = demo?.splits[split];
    const rc = pred && tasks ? recallOf(pred, tasks, parts) : null;
    if (rc !== null) (recall[split] ??= {})[stage] = rc;
  };
  for (const c of r.summary.cells) {
    const rep = c.report;
    if (rep?.kind === "evaluate") {
      const after = /^after (.+)$/.exec(rep.label)?.[1];
      const t = after ? typeOf.get(after) : undefined;
      const stage: EvidenceStage | null = rep.label === "baseline"
        ? "baseline"
        : t === "warmup"
        ? "warmup"
        : t === "grpo"
        ? "grpo"
        : null;
      if (stage) put(rep.split, stage, rep.overall.greedy, rep.overall.questions, c.id);
    } else if (rep?.kind === "selfconsistency") {
      put(rep.split, "sc", rep.voteAccuracy, rep.questions, c.id);
    }
  }
  const model = r.summary.cells.find((c) => c.model)?.model?.name ?? null;
  return {
    folder: r.folder,
    mode: promptMode(r.cells),
    seed: r.summary.options?.seed ?? null,
    model,
    accuracy,
    recall,
    questions,
  };
}

/** Mean, sample sd (0 for one value), min, max. */
export function spread(xs: readonly number[]): Spread {
  const n = xs.length;
  const mean = n ? xs.reduce((a, b) => a + b, 0) / n : Number.NaN;
  const sd = n > 1 ? Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { n, mean, sd, min: n ? Math.min(...xs) : Number.NaN, max: n ? Math.max(...xs) : Number.NaN };
}

/** The evidence of many runs: grouped by split and mode, seeds in ascending order. */
export function demoEvidence(runs: readonly RunOutputs[], generated: string, demo?: RecallInputs): DemoEvidence {
  const figs = runs.map((r) => runFigures(r, demo)).sort((a, b) =>
    a.mode.localeCompare(b.mode) || (a.seed ?? 0) - (b.seed ?? 0) || a.folder.localeCompare(b.folder)
  );
  const out: DemoEvidence = {
    generated,
    runs: figs.map(({ folder, mode, seed, model }) => ({ folder, mode, seed, model })),
    splits: {},
    summary: {},
  };
  const splits = [...new Set(figs.flatMap((f) => Object.keys(f.accuracy)))];
  for (const split of splits) {
    const s: DemoEvidence["splits"][string] = {};
    const sum: DemoEvidence["summary"][string] = {};
    for (const mode of ["knowledge", "bird"] as const) {
      const mine = figs.filter((f) => f.mode === mode && f.accuracy[split]);
      if (!mine.length) continue;
      const m: Partial<Record<EvidenceStage, number[]>> & { seeds: (number | null)[] } = {
        seeds: mine.map((f) => f.seed),
      };
      const ms: NonNullable<DemoEvidence["summary"][string][PromptMode]> = {};
      for (const stage of EVIDENCE_STAGES) {
        // A stage some run lacks is left out rather than mixing seed sets.
        if (!mine.every((f) => f.accuracy[split][stage] !== undefined)) continue;
        const xs = mine.map((f) => f.accuracy[split][stage] ?? 0);
        m[stage] = xs;
        ms[stage] = spread(xs);
        if (stage !== "baseline" && m.baseline) {
          ms[`gain_${stage}`] = spread(xs.map((x, i) => x - (m.baseline?.[i] ?? 0)));
        }
      }
      s[mode] = m;
      sum[mode] = ms;
      s.questions = mine[0].questions[split];
    }
    out.splits[split] = s;
    out.summary[split] = sum;
  }
  for (const split of splits) {
    for (const mode of ["knowledge", "bird"] as const) {
      const mine = figs.filter((f) => f.mode === mode && f.accuracy[split]);
      for (const stage of EVIDENCE_STAGES) {
        if (!mine.length || !mine.every((f) => f.recall[split]?.[stage] !== undefined)) continue;
        (((out.recall ??= {})[split] ??= {})[mode] ??= {})[stage] = mine.map((f) => f.recall[split][stage] ?? 0);
      }
    }
  }
  return out;
}

const pct = (x: number) => (100 * x).toFixed(1);

/** The figures as markdown tables (one per mode): mean ± sd over seeds, and the seeds' values. */
export function evidenceMarkdown(e: DemoEvidence): string {
  const lines: string[] = [];
  for (const mode of ["knowledge", "bird"] as const) {
    const splits = Object.keys(e.splits).filter((s) => e.splits[s][mode]);
    if (!splits.length) continue;
    lines.push(
      `**${
        mode === "knowledge" ? "Knowledge mode (no evidence in the prompt)" : "BIRD mode (definitions in the prompt)"
      }**, execution accuracy %, mean ± sd over seeds (each seed):`,
      "",
    );
    lines.push(
      `| split | ${EVIDENCE_STAGES.join(" | ")} | GRPO − baseline |`,
      `|---|${EVIDENCE_STAGES.map(() => "---").join("|")}|---|`,
    );
    for (const split of splits) {
      const m = e.splits[split][mode]!;
      const sm = e.summary[split][mode]!;
      const cell = (
        st: EvidenceStage,
      ) => (m[st] && sm[st] ? `${pct(sm[st]!.mean)} ± ${pct(sm[st]!.sd)} (${m[st]!.map(pct).join(", ")})` : "—");
      const gain = sm.gain_grpo
        ? `${sm.gain_grpo.mean >= 0 ? "+" : ""}${pct(sm.gain_grpo.mean)} (${pct(sm.gain_grpo.min)} … ${
          pct(sm.gain_grpo.max)
        })`
        : "—";
      lines.push(
        `| ${split} (${e.splits[split].questions ?? "?"}) | ${EVIDENCE_STAGES.map(cell).join(" | ")} | ${gain} |`,
      );
    }
    lines.push("");
    const withRecall = splits.filter((sp) => e.recall?.[sp]?.[mode]);
    if (withRecall.length) {
      lines.push(
        `Concept recall %, ${mode} mode (answers whose SQL holds the question's definitions), mean over seeds (each seed):`,
        "",
      );
      lines.push(`| split | ${EVIDENCE_STAGES.join(" | ")} |`, `|---|${EVIDENCE_STAGES.map(() => "---").join("|")}|`);
      for (const split of withRecall) {
        const m = e.recall![split][mode]!;
        const cell = (
          st: EvidenceStage,
        ) => (m[st] ? `${pct(spread(m[st]!).mean)} (${m[st]!.map(pct).join(", ")})` : "—");
        lines.push(`| ${split} | ${EVIDENCE_STAGES.map(cell).join(" | ")} |`);
      }
      lines.push("");
    }
  }
  return lines.join("\n");
}
