// The dataset view's question files: fetched by split name and parsed. Kept apart from
// dataset-client.ts (which loads the SQL worker through Vite-only imports) so it runs under Deno.
import { parseQuestions } from "../core/loaders.ts";
import type { Task } from "../core/types.ts";

/** Questions of each split, with the problems met while reading them. */
export interface DatasetQuestions {
  splits: Record<string, Task[]>;
  problems: string[];
}

/** Fetches and parses question files by split name; a missing or bad file is a problem, not a failure. */
export async function loadQuestionFiles(files: Record<string, string>): Promise<DatasetQuestions> {
  // Fetched in parallel, gathered in the order given: the splits' order (and so the one shown
  // first) must not depend on which response arrives first.
  const loaded = await Promise.all(
    Object.entries(files).map(async ([split, url]) => {
      try {
        const res = await fetch(url);
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        const q = parseQuestions(await res.text());
        return {
          split,
          tasks: q.items.map((i) => i.task),
          problems: q.problems.slice(0, 5).map((p) => `${url} ${p.where}: ${p.message}`),
        };
      } catch (e) {
        return { split, tasks: null, problems: [`${url}: ${e instanceof Error ? e.message : String(e)}`] };
      }
    }),
  );
  const out: DatasetQuestions = { splits: {}, problems: [] };
  for (const l of loaded) {
    if (l.tasks) out.splits[l.split] = l.tasks;
    out.problems.push(...l.problems);
  }
  return out;
}
