// `rlvr run NOTEBOOK.json`: runs a notebook's cells in order, headless. Metrics, samples,
// predictions, checkpoints and the final PEFT adapter land in --out; running again into the same
// folder resumes from the checkpoints.
import { dirname, resolve } from "node:path";
import { COUNT_MAX, int, MAX_WORKERS, num, parseFlags, SEED, UsageError } from "../args.ts";
import { formatIssues, parseNotebook } from "../../core/notebook.ts";
import { denoEnv } from "../../runtime/recipe/env.deno.ts";
import { runNotebook } from "../../runtime/recipe/runner.ts";
import { readInputJson } from "../inputs.ts";
import type { Command } from "./index.ts";
import type { AskAnswer, AskReport } from "../../runtime/records.ts";

/** An ask cell's answers in the summary: each one's SQL, row count or error, and definitions used (the log has the rows). */
function askLine(r: AskReport) {
  const one = (a: AskAnswer) => ({
    sql: a.sql,
    // Without SQL, what the model wrote instead.
    ...(a.sql === null ? { completion: a.completion } : {}),
    ...(a.result ? { rows: a.result.rowCount } : { error: a.error?.message ?? "" }),
    definitions: a.definitions.map((d) => d.term),
  });
  return {
    question: r.question,
    db: r.db,
    base: one(r.base),
    ...(r.trained?.stage ? { stage: r.trained.stage.cellId, trained: one(r.trained) } : { note: r.note ?? "" }),
  };
}

export const command: Command = {
  name: "run",
  summary: "run a notebook's cells in order headless (metrics, checkpoints, predictions, adapter in --out)",
  usage: [
    "rlvr run NOTEBOOK.json [--out DIR] [--max-steps N] [--seed S] [--model DIR] [--samples-per-step K] [--sql-workers W] [--micro-batch M] [--sample-batch P]",
    "",
    "  --out DIR             output folder (default runs/<notebook name>); an existing run there is resumed (evaluations it finished are not run again)",
    "  --max-steps N         stop every GRPO cell after N steps (its schedules keep the cell's step count)",
    "  --seed S              overrides the seeds of the warm-up, GRPO and sampling stages",
    "  --model DIR           use this model folder (or URL, or owner/name) instead of the model cell's source",
    "  --samples-per-step K  sample records kept per step in samples.jsonl (default 16)",
    "  --sql-workers W       SQL worker processes (default 2)",
    "  --micro-batch M       sequences per trainer forward/backward pass, gradients accumulated (default 8)",
    "  --sample-batch P      prompts per sampling call (x k samples each: the decoding batch; default 16)",
    "",
    "The last line of standard output is a JSON summary with each stage's execution accuracy (and each ask cell's answers).",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      out: { type: "string" },
      "max-steps": { type: "string" },
      seed: { type: "string" },
      model: { type: "string" },
      "samples-per-step": { type: "string" },
      "sql-workers": { type: "string" },
      "micro-batch": { type: "string" },
      "sample-batch": { type: "string" },
    });
    if (positionals.length !== 1) throw new UsageError("expected exactly one notebook file: rlvr run NOTEBOOK.json");
    const file = positionals[0];
    const json = await readInputJson(file, "notebook");
    const parsed = parseNotebook(json);
    if (!parsed.ok) throw new UsageError(`${file} is not a valid notebook:\n${formatIssues(parsed.errors)}`);
    for (const w of parsed.warnings) console.error(`rlvr run: warning: ${w.path}: ${w.message}`);
    const name = file.replace(/^.*\//, "").replace(/\.json$/i, "");
    const out = typeof values.out === "string" ? values.out : `runs/${name}`;
    const maxSteps = values["max-steps"] === undefined ? null : int(values, "max-steps", 0, 0, COUNT_MAX);
    const seed = values.seed === undefined ? null : num(values, "seed", 0, SEED);
    const sampleBatch = int(values, "sample-batch", 16, 1, 4096);
    const log = (m: string) => console.error(`rlvr run: ${m}`);
    const env = denoEnv({
      out,
      base: dirname(resolve(file)),
      sqlWorkers: int(values, "sql-workers", 2, 1, MAX_WORKERS),
      onLog: log,
    });
    let lastLine = 0;
    // Ctrl-C stops at the next step boundary; the checkpoints written so far let a rerun resume.
    const abort = new AbortController();
    const onInt = () => {
      log("interrupted: stopping after the current step (run again to resume)");
      abort.abort(new Error("interrupted"));
    };
    Deno.addSignalListener("SIGINT", onInt);
    const summary = await runNotebook(parsed.doc, env, {
      signal: abort.signal,
      opts: {
        maxSteps,
        seed,
        samplesPerStep: int(values, "samples-per-step", 16, 0, COUNT_MAX),
        trainMicroBatch: int(values, "micro-batch", 8, 1, 4096),
        sampleBatchPrompts: sampleBatch,
      },
      modelOverride: typeof values.model === "string" ? values.model : undefined,
      reuseFinished: true,
      onLog: log,
      onProgress: (p) => {
        const now = Date.now();
        if (now - lastLine < 2000 && p.fraction < 1) return;
        lastLine = now;
        const eta = p.etaSeconds === null ? "" : `, eta ${Math.round(p.etaSeconds)}s`;
        log(`[${p.cellId}] ${(p.fraction * 100).toFixed(0)}% ${p.message}${eta}`);
      },
    }).finally(() => Deno.removeSignalListener("SIGINT", onInt));
    return {
      out,
      title: summary.title,
      accuracy: summary.accuracy,
      cells: summary.cells.map((c) => ({
        id: c.id,
        type: c.type,
        ms: c.ms,
        ...(c.accuracy !== undefined ? { accuracy: c.accuracy } : {}),
        ...(c.report?.kind === "ask" ? { ask: askLine(c.report) } : {}),
      })),
      files: summary.files,
    };
  },
};
