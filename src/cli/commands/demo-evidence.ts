// `rlvr demo-evidence RUN_DIR... --out FILE.json`: the demo's evidence figures from finished `rlvr run`
// folders (summary.json + notebook.json): execution accuracy per split, prompt mode and stage for
// every seed, with mean, spread and gain over baseline; optionally the markdown tables and an SVG
// chart for docs/evidence.md.
import { join } from "node:path";
import { parseFlags, UsageError } from "../args.ts";
import { parseNotebook } from "../../core/notebook.ts";
import { demoEvidence, evidenceMarkdown, type RecallInputs, type RunOutputs } from "../../runtime/demo-evidence.ts";
import { DEMO_SPLITS } from "../../core/demo.ts";
import { evidenceSvg } from "../../runtime/demo-evidence-svg.ts";
import type { RunSummary } from "../../runtime/recipe/runner.ts";
import { readTextBounded } from "../../model/files.deno.ts";
import type { Command } from "./index.ts";

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** A summary.json as `rlvr run` writes it (cells with ids and types; reports are the runner's own). */
function isRunSummary(x: unknown): x is RunSummary {
  return isRecord(x) && typeof x.title === "string" && Array.isArray(x.cells) &&
    x.cells.every((c) => isRecord(c) && typeof c.id === "string" && typeof c.type === "string");
}

/** One run folder's summary and notebook; an unfinished run (no summary.json) is an error naming it. */
export async function readRun(folder: string): Promise<RunOutputs> {
  let summary: unknown, doc: unknown;
  try {
    summary = JSON.parse(await readTextBounded(join(folder, "summary.json"), { what: "run summary" }));
    doc = JSON.parse(await readTextBounded(join(folder, "notebook.json"), { what: "notebook" }));
  } catch (e) {
    throw new Error(`${folder}: not a finished run (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRunSummary(summary)) throw new Error(`${folder}/summary.json is not a run summary`);
  const nb = parseNotebook(doc);
  if (!nb.ok) throw new Error(`${folder}/notebook.json: ${nb.errors.map((i) => `${i.path}: ${i.message}`).join("; ")}`);
  // Each evaluation's answers, for concept recall (a folder without them still gives the accuracies).
  const predictions: Record<string, Record<string, string>> = {};
  for (const c of summary.cells) {
    try {
      const p: unknown = JSON.parse(await Deno.readTextFile(join(folder, "predictions", `${c.id}.json`)));
      if (isRecord(p) && Object.values(p).every((v) => typeof v === "string")) {
        predictions[c.id] = p as Record<string, string>;
      }
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
  }
  return { folder, summary, cells: nb.doc.cells, predictions };
}

/** The demo's splits and definitions (public/demo) for concept recall; null where the folder lacks them. */
export async function readRecallInputs(demoDir: string): Promise<RecallInputs | null> {
  try {
    const definitions: unknown = JSON.parse(await Deno.readTextFile(join(demoDir, "concepts.json")));
    if (!Array.isArray(definitions)) return null;
    const splits: RecallInputs["splits"] = {};
    for (const s of DEMO_SPLITS) {
      splits[s] = (await Deno.readTextFile(join(demoDir, `${s}.jsonl`))).split("\n").filter((l) => l.trim()).map((l) =>
        JSON.parse(l)
      );
    }
    return { splits, definitions };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

export const command: Command = {
  name: "demo-evidence",
  summary: "the demo's evidence figures (accuracy per split, prompt mode, stage and seed) from rlvr run folders",
  usage: [
    "rlvr demo-evidence RUN_DIR... --out FILE.json [--markdown FILE.md] [--svg FILE.svg] [--title TEXT] [--demo DIR]",
    "  each RUN_DIR: a finished `rlvr run` of the demo notebook (summary.json, notebook.json); its prompt cell's",
    "  evidence switch is the mode (off: knowledge, on: bird), `rlvr run --seed` the seed; --demo: the demo's folder",
    "  (default public/demo) whose splits and definitions give concept recall (the share of answers holding the",
    "  question's definitions) beside the accuracies",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      out: { type: "string" },
      markdown: { type: "string" },
      svg: { type: "string" },
      title: { type: "string" },
      demo: { type: "string" },
    });
    if (!positionals.length) throw new UsageError("give at least one run folder");
    if (typeof values.out !== "string") throw new UsageError("--out FILE.json is required");
    const runs = [];
    for (const f of positionals) runs.push(await readRun(f));
    const demo = await readRecallInputs(typeof values.demo === "string" ? values.demo : "public/demo");
    const e = demoEvidence(runs, new Date().toISOString(), demo ?? undefined);
    await Deno.writeTextFile(values.out, JSON.stringify(e, null, 1) + "\n");
    const md = evidenceMarkdown(e);
    if (typeof values.markdown === "string") await Deno.writeTextFile(values.markdown, md);
    if (typeof values.svg === "string") {
      await Deno.writeTextFile(
        values.svg,
        evidenceSvg(
          e,
          typeof values.title === "string" ? values.title : "Demo: execution accuracy per split and stage",
        ),
      );
    }
    console.log(md);
    return { out: values.out, runs: e.runs.length, splits: Object.keys(e.splits) };
  },
};
