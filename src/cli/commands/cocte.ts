// `rlvr cocte`: every gold query rewritten as a Chain of CTEs that returns the gold's rows, one
// JSON line per question; optionally the converted golds as a chain-of-ctes warm-up dataset (template chain-of-ctes@2).
import { existsSync, statSync } from "node:fs";
import { GoldConverter } from "../../runtime/cocte-convert.ts";
import { cocteDatasetRecord } from "../../runtime/cocte-dataset.ts";
import { fileDatabaseLoader } from "../../runtime/sql-files.deno.ts";
import { DatabaseLoadError, SqlPool } from "../../runtime/sql-pool.ts";
import { spawnSqlProcess } from "../../runtime/sql-process.deno.ts";
import { checkWritable, COUNT_MAX, int, MAX_TIMER_MS, MAX_WORKERS, parseFlags, req, UsageError } from "../args.ts";
import { readQuestionsFile } from "../inputs.ts";
import type { Command } from "./index.ts";

/** One line of --out. */
interface OutLine {
  index: number;
  db_id: string;
  cocte: string | null;
  /** Per step: its name, the runnable query over the first k+1 CTEs, the CTE body and comment. */
  steps: { name: string; sql: string; body: string; comment?: string }[];
  ok: boolean;
  reason?: string;
  /** Which rewrite held: 0 the fullest, more a fallback. */
  candidate?: number;
  /** The rows also come in the gold's order. */
  ordered?: boolean;
}

function bump(m: Record<string, number>, k: string): void {
  m[k] = (m[k] ?? 0) + 1;
}

/** The reason without its particulars, for the summary ("step 2 (x) failed: syntax: no such column: y" -> "step failed: syntax"). */
function reasonClass(r: string): string {
  return r.replace(/^step \d+ \([^)]*\) failed: (\w+).*$/, "step failed: $1").replace(
    /^final failed: (\w+).*$/,
    "final failed: $1",
  )
    .replace(/^gold failed: (\w+).*$/, "gold failed: $1").replace(/^no rewrite: (.*)$/, "no rewrite: $1");
}

export const command: Command = {
  name: "cocte",
  summary: "rewrite gold SQL as a Chain of CTEs with the same result (and a chain-of-ctes@2 warm-up dataset)",
  usage: [
    "rlvr cocte --questions FILE --db-root DIR --out FILE.jsonl [--dataset FILE.jsonl] [--timeout-ms N] [--workers N]",
    "           [--isolation worker|process] [--limit N]",
    "",
    "  --questions  BIRD JSON, Spider JSON array or JSONL, or our JSONL",
    "  --db-root    databases at DIR/<db_id>/<db_id>.sqlite",
    "  --out        JSONL, one {index, db_id, cocte, steps: [{name, sql, body, comment?}], ok, reason?, candidate?, ordered?}",
    "               per question: steps[k].sql runs the first k+1 CTEs and selects from the last",
    "  --dataset    JSONL in the project's question format, one line per converted question: gold_sql is the",
    "               chain, completion the chain-of-ctes answer (the chain in one ```sql block; template chain-of-ctes@2)",
    "  --timeout-ms per query, default 30000",
    "  --limit      convert only the first N questions",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, {
      questions: { type: "string" },
      "db-root": { type: "string" },
      out: { type: "string" },
      dataset: { type: "string" },
      "timeout-ms": { type: "string" },
      workers: { type: "string" },
      isolation: { type: "string" },
      limit: { type: "string" },
    });
    const qPath = req(values, "questions");
    const root = req(values, "db-root");
    const outPath = req(values, "out");
    const isolation = values.isolation ?? "worker";
    if (isolation !== "worker" && isolation !== "process") {
      throw new UsageError(`--isolation must be worker or process, got ${JSON.stringify(isolation)}`);
    }
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new UsageError(`--db-root ${root} is not a directory`);
    }
    await checkWritable(outPath, "--out");
    if (typeof values.dataset === "string") await checkWritable(values.dataset, "--dataset");
    const questions = await readQuestionsFile(qPath, "rlvr cocte");
    const items = questions.items.slice(0, int(values, "limit", questions.items.length, 0, COUNT_MAX));
    const pool = new SqlPool({
      loadDatabase: fileDatabaseLoader(root),
      workers: int(values, "workers", Math.min(MAX_WORKERS, navigator.hardwareConcurrency || 1), 1, MAX_WORKERS),
      timeoutMs: int(values, "timeout-ms", 30_000, 1, MAX_TIMER_MS),
      ...(isolation === "process" ? { createWorker: spawnSqlProcess } : {}),
    });
    const converter = new GoldConverter(pool);
    const out: OutLine[] = new Array(items.length);
    const dataset: string[] = new Array(items.length).fill("");
    const t0 = performance.now();
    let done = 0;
    let last = t0;
    const convertOne = async (k: number) => {
      const { position, task } = items[k];
      let line: OutLine;
      try {
        const c = await converter.convert(task.db_id, task.gold_sql);
        if (c.ok) {
          line = {
            index: position,
            db_id: task.db_id,
            cocte: c.cocte,
            ok: true,
            candidate: c.candidate,
            ordered: c.ordered,
            steps: c.steps.map((s, j) => ({
              name: s.name,
              sql: c.queries[j],
              body: s.sql,
              ...(s.comment ? { comment: s.comment } : {}),
            })),
          };
          dataset[k] = JSON.stringify(cocteDatasetRecord(task, c.cocte, c.steps));
        } else {
          line = { index: position, db_id: task.db_id, cocte: null, steps: [], ok: false, reason: c.reason };
        }
      } catch (e) {
        if (!(e instanceof DatabaseLoadError)) throw e;
        line = {
          index: position,
          db_id: task.db_id,
          cocte: null,
          steps: [],
          ok: false,
          reason: `database: ${e.message}`,
        };
      }
      out[k] = line;
      done++;
      const now = performance.now();
      if (now - last > 5000) {
        last = now;
        console.error(`rlvr cocte: ${done}/${items.length} questions, ${((now - t0) / 1000).toFixed(1)} s`);
      }
    };
    let next = 0;
    const lanes = Array.from({ length: Math.max(1, pool.size * 2) }, async () => {
      while (next < items.length) await convertOne(next++);
    });
    try {
      await Promise.all(lanes);
    } finally {
      pool.close();
    }
    const write = async (path: string, lines: string[], what: string) => {
      try {
        await Deno.writeTextFile(path, lines.map((l) => l + "\n").join(""));
      } catch (e) {
        throw new UsageError(`cannot write ${what} ${path}: ${e instanceof Error ? e.message : String(e)}`);
      }
    };
    await write(outPath, out.map((l) => JSON.stringify(l)), "--out");
    if (typeof values.dataset === "string") await write(values.dataset, dataset.filter((l) => l !== ""), "--dataset");
    const reasons: Record<string, number> = {};
    const lengths: Record<string, number> = {};
    const candidates: Record<string, number> = {};
    let converted = 0;
    let goldFailed = 0;
    let ordered = 0;
    for (const l of out) {
      if (l.ok) {
        converted++;
        bump(lengths, String(l.steps.length));
        bump(candidates, String(l.candidate));
        if (l.ordered) ordered++;
      } else {
        const r = reasonClass(l.reason ?? "");
        bump(reasons, r);
        if (r.startsWith("gold failed")) goldFailed++;
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    return {
      questions: items.length,
      converted,
      failed: items.length - converted,
      gold_failed: goldFailed,
      converted_of_runnable: items.length - goldFailed ? converted / (items.length - goldFailed) : 0,
      ordered_too: ordered,
      chain_lengths: lengths,
      candidates,
      reasons,
      malformed: questions.problems.length,
      seconds: Number(seconds.toFixed(2)),
    };
  },
};
