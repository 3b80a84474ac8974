// Select: every candidate model x prompt template evaluated greedily on a dev split, ranked by
// execution accuracy (ties: the earlier candidate); the winner becomes the run's model and template.
import type { SelectParams } from "../../core/notebook-params.ts";
import type { SelectEntry, SelectReport } from "../records.ts";
import { checkAborted, nextIndex, requireSetup, type RunContext, splitTasks } from "./context.ts";
import { evaluateTasks } from "./evaluate.ts";
import type { ModelRuntime } from "./model-runtime.ts";

/** Builds a runtime for a candidate model name (the runner's model loader). */
export type RuntimeFactory = (model: string) => Promise<ModelRuntime>;

/** The select cell. A candidate named as the loaded model (the model cell's repo, URL or folder) reuses it; others are loaded in turn. */
export async function runSelect(
  ctx: RunContext,
  cellId: string,
  p: SelectParams,
  makeRuntime: RuntimeFactory,
): Promise<SelectReport> {
  const setup = requireSetup(ctx, cellId);
  const tasks = splitTasks(ctx, cellId, p.split).slice(0, p.n);
  const entries: SelectEntry[] = [];
  let bestRuntime: ModelRuntime | null = null;
  let bestAcc = -1;
  for (const model of p.models) {
    checkAborted(ctx);
    const current = setup.model.runtime;
    const reuse = model === current.hf.name;
    const runtime = reuse ? current : await makeRuntime(model);
    let keep = false;
    for (const template of p.templates) {
      const step = nextIndex(ctx, "select");
      const r = await evaluateTasks(ctx, cellId, tasks, {
        temperature: 0,
        topP: 1,
        k: 1,
        maxNewTokens: p.maxNewTokens,
        seed: 0,
      }, { runtime, template, phaseStep: { phase: "select", step } });
      entries.push({ model, template, accuracy: r.figures.greedy, questions: tasks.length, rank: 0 });
      if (r.figures.greedy > bestAcc) {
        bestAcc = r.figures.greedy;
        if (bestRuntime && bestRuntime !== current && bestRuntime !== runtime) await bestRuntime.release();
        bestRuntime = runtime;
        keep = true;
      }
    }
    if (!keep && runtime !== current) await runtime.release();
  }
  const order = entries.map((e, i) => i).sort((a, b) => entries[b].accuracy - entries[a].accuracy || a - b);
  order.forEach((i, r) => (entries[i].rank = r + 1));
  const win = entries[order[0]];
  if (bestRuntime && bestRuntime !== setup.model.runtime) {
    await setup.model.runtime.release();
    setup.model.runtime = bestRuntime;
  }
  ctx.prompt = { ...setup.prompt, template: win.template };
  return { kind: "select", cellId, split: p.split, entries, winner: { model: win.model, template: win.template } };
}
