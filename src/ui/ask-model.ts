// What the ask cell shows before it runs: the databases it can ask about and the run's
// checkpointed stages (read from the run folder, so a reload finds them). Pure: rl-cell-ask.ts
// renders it, ask-model.test.ts checks it.
import type { Cell } from "../core/notebook.ts";

/** The demo's databases (public/demo/manifest.json), in the order the demo introduces them. */
export const DEMO_DATABASES = ["shop", "subscriptions", "school", "clinic"] as const;

/** A training cell of the notebook with a checkpoint in the run folder. */
export interface StageChoice {
  cellId: string;
  type: "warmup" | "grpo";
  step: number;
}

/** The notebook's warm-up and GRPO cells that have a checkpoint (`checkpoints`: cell id -> step), in notebook order. */
export function stageChoices(cells: readonly Cell[], checkpoints: Readonly<Record<string, number>>): StageChoice[] {
  const out: StageChoice[] = [];
  for (const c of cells) {
    const step = checkpoints[c.id];
    if ((c.type === "warmup" || c.type === "grpo") && step !== undefined) {
      out.push({ cellId: c.id, type: c.type, step });
    }
  }
  return out;
}

/** "GRPO \"grpo\", step 40". */
export function stageLabel(s: { cellId: string; type?: string; kind?: string; step: number }): string {
  const kind = (s.type ?? s.kind) === "warmup" ? "warm-up" : "GRPO";
  return `${kind} "${s.cellId}", ${kind === "warm-up" ? "round" : "step"} ${s.step}`;
}

/**
 * The databases an ask cell offers for a demo dataset (the demo's, and the one it names if another);
 * null for other datasets, whose database ids the cell takes as typed.
 */
export function databaseChoices(cells: readonly Cell[], current: string): string[] | null {
  const data = cells.find((c) => c.type === "dataset");
  if (!data || data.type !== "dataset" || data.params.source !== "demo") return null;
  const list: string[] = [...DEMO_DATABASES];
  return list.includes(current) || !current ? list : [...list, current];
}
