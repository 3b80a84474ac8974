// The ask cell: a question typed by the user about one of the dataset's databases, answered
// greedily by the base model (no adapter) and by the adapter of a checkpointed training stage
// (warm-up, GRPO; the newest unless the cell names one), both executed, side by side with the
// definitions each answer's SQL holds. The stage's adapter is read from the run folder's
// checkpoints, so it works after a reload and in a run that trains nothing (the page's "Ask").
import type { AskParams } from "../../core/notebook-params.ts";
import { extractSql } from "../../core/extract.ts";
import type { Task } from "../../core/types.ts";
import type { LoraAdapter } from "../../model/lora.ts";
import type { Tensor, Weights } from "../../model/tensor.ts";
import { loadCheckpoint } from "../checkpoint.ts";
import { recallParts, usesDefinitions } from "../demo-evidence.ts";
import { type AskAnswer, type AskReport, type AskStage, displayResult } from "../records.ts";
import type { FileStore } from "../store.ts";
import { checkAborted, progressReporter, requireSetup, type RunContext } from "./context.ts";
import { toolsFor } from "./common.ts";

/** Rows of each answer's result the report keeps. */
export const ASK_ROWS = 10;
/** Time limit of each answer's query. */
const ASK_QUERY_MS = 10_000;

const dec = new TextDecoder();

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Which training stage a checkpoint's state is from (warm-up keeps its rounds, GRPO its held-out checks); null for others (a PRM's). */
export function stageKind(state: unknown): AskStage["kind"] | null {
  if (!isRecord(state) || typeof state.trainerStep !== "number") return null;
  if (Array.isArray(state.rounds)) return "warmup";
  if (Array.isArray(state.heldout)) return "grpo";
  return null;
}

/**
 * The policy stages checkpointed in a run folder (`checkpoints/<cell>/`, the newest complete
 * checkpoint each, as latest.json names it), oldest first by the time they were saved. PRM
 * checkpoints and unreadable manifests are left out.
 */
export async function checkpointStages(store: FileStore): Promise<AskStage[]> {
  const out: AskStage[] = [];
  for (const cellId of await store.list("checkpoints")) {
    try {
      const raw = await store.read(`checkpoints/${cellId}/latest.json`);
      if (!raw) continue;
      const m: unknown = JSON.parse(dec.decode(raw));
      if (!isRecord(m) || typeof m.folder !== "string" || typeof m.step !== "number") continue;
      const st = await store.read(`checkpoints/${cellId}/${m.folder}/state.json`);
      if (!st) continue;
      const s: unknown = JSON.parse(dec.decode(st));
      const kind = stageKind(isRecord(s) ? s.state : null);
      if (kind) out.push({ cellId, kind, step: m.step, savedAt: typeof m.savedAt === "string" ? m.savedAt : "" });
    } catch {
      // A damaged checkpoint is not offered; its cell reports it when it resumes.
    }
  }
  return out.sort((a, b) => a.savedAt.localeCompare(b.savedAt));
}

/** The stage an ask cell answers with: the one it names, else the newest; null when there is none. */
export function pickStage(stages: readonly AskStage[], want: string): AskStage | null {
  if (!want) return stages.at(-1) ?? null;
  const s = stages.find((x) => x.cellId === want);
  if (s) return s;
  throw new Error(
    `stage "${want}" has no checkpoint in this run (${
      stages.length ? `checkpointed: ${stages.map((x) => x.cellId).join(", ")}` : "none yet"
    }): run it first, or leave the stage empty for the newest`,
  );
}

/** A definition of the organisation's terms: "active customer" and its SQL fragment. */
export interface Definition {
  term: string;
  fragment: string;
}

/**
 * The definitions of database `db` in a dataset's evidence: each "<term> refers to [<entity>
 * with] <SQL>" clause (the demo's form, public/demo/concepts.json's `definition`), first
 * fragment per term, in order of appearance.
 */
export function definitionsOf(tasks: readonly Task[], db: string): Definition[] {
  const out = new Map<string, string>();
  for (const t of tasks) {
    if (t.db_id !== db || !t.evidence) continue;
    for (const clause of t.evidence.split(/;\s+(?=[^;]*? refers to )/)) {
      const m = /^\s*(.+?) refers to (?:[a-z_]+ with )?(.+?)\s*$/s.exec(clause);
      if (m && !out.has(m[1])) out.set(m[1], m[2]);
    }
  }
  return [...out].map(([term, fragment]) => ({ term, fragment }));
}

/** The definitions whose fragments `sql` holds, matched as concept recall matches them (recallParts). */
export function definitionsUsed(sql: string, defs: readonly Definition[]): Definition[] {
  const parts = new Map(defs.map((d) => [d.term, recallParts(d.fragment)]));
  return defs.filter((d) => usesDefinitions(sql, [d.term], parts));
}

/** A stage's LoRA adapter from its checkpoint tensors (`lora.<PEFT name>`), shaped as `like`. */
export function adapterOf(like: LoraAdapter, tensors: Weights, where: string): LoraAdapter {
  const out = new Map<string, Tensor>();
  for (const k of like.tensors.keys()) {
    const t = tensors.get(`lora.${k}`);
    if (!t) throw new Error(`checkpoint ${where} lacks lora.${k} (saved with another LoRA rank or targets?)`);
    out.set(k, t);
  }
  return { ...like, tensors: out };
}

/** The ask cell: the base model's and a stage's greedy answers to the typed question, executed. */
export async function runAsk(ctx: RunContext, cellId: string, p: AskParams): Promise<AskReport> {
  const s = requireSetup(ctx, cellId);
  const question = p.question.trim();
  if (!question) throw new Error("type a question first");
  const tasks = Object.values(s.dataset.splits).flat();
  const dbs = [...new Set(tasks.map((t) => t.db_id))].sort();
  if (!dbs.includes(p.db)) {
    throw new Error(`database "${p.db}" is not one of the dataset's (${dbs.join(", ")})`);
  }
  const stages = await checkpointStages(ctx.env.store);
  const stage = pickStage(stages, p.stage);
  // A dataset cell's `limit` cuts every split: the definitions come from the whole files.
  const whole = s.dataset.params.limit === undefined
    ? tasks
    : Object.values((await ctx.env.loadDataset(s.dataset.params)).splits).flat();
  const defs = definitionsOf(whole, p.db);
  const report = progressReporter(ctx, cellId, "ask");
  const tools = toolsFor(ctx, cellId, { prm: null });
  const runtime = tools.runtime;
  const task: Task = { id: `ask.${cellId}`, db_id: p.db, question, gold_sql: "" };
  report(0, "building the prompt");
  const [prompt] = await tools.prompter.prompts([task]);
  const answer = async (adapter: LoraAdapter | null, at: AskStage | null): Promise<AskAnswer> => {
    checkAborted(ctx);
    const [sample] = await runtime.sampleWith(adapter, [prompt.ids], 1, {
      temperature: 0,
      topP: 1,
      topK: 0,
      minP: 0,
      maxNewTokens: p.maxNewTokens,
      stop: [],
      seed: 0,
    });
    const completion = prompt.answerPrefix + sample.text;
    const ex = extractSql(completion, { mode: tools.prompter.template.extractMode });
    const base = { stage: at, completion, sql: ex.sql };
    if (ex.sql === null) {
      return {
        ...base,
        error: { kind: "no-sql", message: `no SQL in the answer (${ex.reason})` },
        result: null,
        definitions: [],
      };
    }
    const reply = await s.dataset.sql.query(p.db, ex.sql, { timeoutMs: ASK_QUERY_MS });
    return {
      ...base,
      error: reply.ok ? null : reply.error,
      result: reply.ok ? displayResult(reply.result, ASK_ROWS) : null,
      definitions: definitionsUsed(ex.sql, defs),
    };
  };
  report(0.05, "the base model answers (no adapter)");
  const baseAnswer = await answer(null, null);
  let trained: AskAnswer | null = null;
  let note: string | undefined;
  if (stage) {
    report(0.5, `the adapter of "${stage.cellId}" (${stage.kind}, step ${stage.step}) answers`);
    const prefix = `checkpoints/${stage.cellId}`;
    const ck = await loadCheckpoint(ctx.env.store, prefix, ctx.onLog);
    if (!ck) throw new Error(`the checkpoint under ${prefix} went away`);
    trained = await answer(adapterOf(runtime.adapter, ck.tensors, prefix), stage);
  } else {
    note = "this run has no checkpoint yet: only the base model answers (run a warm-up or GRPO cell first)";
  }
  const out: AskReport = {
    kind: "ask",
    cellId,
    question,
    db: p.db,
    base: baseAnswer,
    trained,
    ...(note ? { note } : {}),
    stages,
    known: defs.length,
  };
  ctx.onLog(formatAsk(out));
  report(1, "answered");
  return out;
}

/** The report as text (the CLI's log): each answer's SQL, rows or error, and the definitions it used. */
export function formatAsk(r: AskReport): string {
  const one = (name: string, a: AskAnswer) => {
    const rows = a.result
      ? `${a.result.rowCount} row${a.result.rowCount === 1 ? "" : "s"}${
        a.result.rows.length ? `; first: ${a.result.rows.slice(0, 3).map((row) => JSON.stringify(row)).join(" ")}` : ""
      }`
      : `error (${a.error?.kind}): ${a.error?.message}`;
    const defs = a.definitions.length ? a.definitions.map((d) => d.term).join(", ") : "none";
    return [`  ${name}:`, `    SQL: ${a.sql ?? "(none)"}`, `    ${rows}`, `    definitions used: ${defs}`].join("\n");
  };
  return [
    `ask "${r.cellId}" on ${r.db}: ${r.question}`,
    one("base model (no adapter)", r.base),
    r.trained && r.trained.stage
      ? one(`after "${r.trained.stage.cellId}" (${r.trained.stage.kind}, step ${r.trained.stage.step})`, r.trained)
      : `  ${r.note ?? "no trained stage"}`,
  ].join("\n");
}
