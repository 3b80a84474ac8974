// Splits of a dataset cell: the source's own splits, `limit` applied, and a seeded "dev" split
// carved out of the training split (so model selection and held-out checks never see training questions).
import type { DatasetParams } from "../../core/notebook-params.ts";
import { Rng } from "../../core/rng.ts";
import type { Task } from "../../core/types.ts";

/** The splits a run works with: the source's splits (each cut to `limit`), the training split minus "dev", and "dev". */
export function buildSplits(p: DatasetParams, source: Record<string, Task[]>): Record<string, Task[]> {
  const train = source[p.split];
  if (!train) {
    throw new Error(`the dataset has no split "${p.split}" (it has ${Object.keys(source).join(", ") || "none"})`);
  }
  const cut = (ts: Task[]) => (p.limit !== undefined ? ts.slice(0, p.limit) : ts.slice());
  const out: Record<string, Task[]> = {};
  for (const [name, tasks] of Object.entries(source)) out[name] = cut(tasks);
  if (source.dev === undefined && p.devFraction > 0) {
    const shuffled = new Rng(p.seed).shuffle(cut(train));
    const nDev = Math.min(shuffled.length - 1, Math.max(1, Math.round(shuffled.length * p.devFraction)));
    const dev = new Set(shuffled.slice(0, nDev).map((t) => t.id));
    // Both keep the file order: only membership is random.
    out.dev = out[p.split].filter((t) => dev.has(t.id));
    out[p.split] = out[p.split].filter((t) => !dev.has(t.id));
  }
  for (const [name, tasks] of Object.entries(out)) {
    const ids = new Set<string>();
    for (const t of tasks) {
      if (ids.has(t.id)) throw new Error(`split "${name}" has question id "${t.id}" twice`);
      ids.add(t.id);
    }
  }
  return out;
}
