// `rlvr eval`: execution accuracy of predicted SQL against gold, BIRD/Spider style.
import { existsSync, statSync } from "node:fs";
import { COMPARE_MODES, isCompareMode } from "../../core/compare.ts";
import { parsePredictions } from "../../core/loaders.ts";
import { SqlEvaluator } from "../../runtime/sql-eval.ts";
import { fileDatabaseLoader } from "../../runtime/sql-files.deno.ts";
import { DatabaseLoadError, SqlPool } from "../../runtime/sql-pool.ts";
import { spawnSqlProcess } from "../../runtime/sql-process.deno.ts";
import { checkWritable, COUNT_MAX, int, MAX_TIMER_MS, MAX_WORKERS, parseFlags, req, UsageError } from "../args.ts";
import { readInputText, readQuestionsFile, reportProblems } from "../inputs.ts";
import type { Command } from "./index.ts";

/** One line of --out: the question's position, whether it scored correct, and why not. */
interface OutLine {
  index: number;
  correct: boolean;
  error: string | null;
}

interface Tally {
  n: number;
  correct: number;
}

export const command: Command = {
  name: "eval",
  summary: "score predicted SQL against gold by execution (BIRD/Spider rules)",
  usage: [
    "rlvr eval --questions FILE --db-root DIR --pred FILE [--compare set|bag|ordered] [--timeout-ms N] [--out FILE]",
    "          [--workers N] [--isolation worker|process] [--max-rows N] [--max-bytes N]",
    "",
    "  --questions  BIRD JSON, Spider JSON array or JSONL, or our JSONL {id, db_id, question, evidence?, gold_sql, difficulty?}",
    "  --db-root    databases at DIR/<db_id>/<db_id>.sqlite",
    '  --pred       BIRD\'s prediction dict {"0": "SQL\\t----- bird -----\\tdb_id"} or one SQL per line (Spider)',
    "  --compare    set (BIRD, default), bag (multiset) or ordered",
    "  --timeout-ms per query, default 30000 as in BIRD's scripts",
    "  --out        JSONL, one {index, correct, error} per question in question order",
    "  --workers    default: one per core",
    "  --isolation  worker (module Workers, default) or process (subprocesses: a timed-out query is",
    "               killed for real; Deno cannot stop a Worker stuck in a query until the process exits)",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, {
      questions: { type: "string" },
      "db-root": { type: "string" },
      pred: { type: "string" },
      compare: { type: "string" },
      "timeout-ms": { type: "string" },
      out: { type: "string" },
      workers: { type: "string" },
      isolation: { type: "string" },
      "max-rows": { type: "string" },
      "max-bytes": { type: "string" },
    });
    const qPath = req(values, "questions");
    const root = req(values, "db-root");
    const pPath = req(values, "pred");
    const mode = values.compare ?? "set";
    if (!isCompareMode(mode)) {
      throw new UsageError(`--compare must be one of ${COMPARE_MODES.join(", ")}, got ${JSON.stringify(mode)}`);
    }
    const timeoutMs = int(values, "timeout-ms", 30_000, 1, MAX_TIMER_MS);
    const workers = int(values, "workers", Math.min(MAX_WORKERS, navigator.hardwareConcurrency || 1), 1, MAX_WORKERS);
    const maxRows = int(values, "max-rows", 1_000_000, 1, COUNT_MAX);
    const maxBytes = int(values, "max-bytes", 64 * 2 ** 20, 1, 2 ** 32);
    const isolation = values.isolation ?? "worker";
    if (isolation !== "worker" && isolation !== "process") {
      throw new UsageError(`--isolation must be worker or process, got ${JSON.stringify(isolation)}`);
    }
    if (!existsSync(root) || !statSync(root).isDirectory()) {
      throw new UsageError(`--db-root ${root} is not a directory`);
    }
    if (typeof values.out === "string") await checkWritable(values.out, "--out");

    const questions = await readQuestionsFile(qPath, "rlvr eval");
    const predText = await readInputText(pPath, "prediction file");
    let preds;
    try {
      preds = parsePredictions(predText);
    } catch (e) {
      throw new UsageError(`prediction file ${pPath}: ${e instanceof Error ? e.message : String(e)}`);
    }
    reportProblems("rlvr eval", pPath, preds.problems, "ignored");
    if (preds.sql.size !== questions.records) {
      console.error(
        `rlvr eval: ${pPath} has ${preds.sql.size} predictions for ${questions.records} questions; missing ones score as wrong`,
      );
    }

    const pool = new SqlPool({
      loadDatabase: fileDatabaseLoader(root),
      workers,
      timeoutMs,
      ...(isolation === "process" ? { createWorker: spawnSqlProcess } : {}),
      limits: { maxRows, maxBytes },
    });
    const evaluator = new SqlEvaluator(pool, mode);
    const out: OutLine[] = new Array(questions.records);
    for (const p of questions.problems) {
      if (p.position !== undefined) {
        out[p.position] = { index: p.position, correct: false, error: `malformed question (${p.where}): ${p.message}` };
      }
    }
    const total: Tally = { n: 0, correct: 0 };
    const byDifficulty = new Map<string, Tally>();
    const counts = { errors: 0, timeouts: 0, goldFailed: 0, missingDb: 0 };
    const missingDbs = new Map<string, string>();
    const t0 = performance.now();
    let done = 0;
    let lastReport = t0;

    const scoreOne = async (k: number) => {
      const { position, task } = questions.items[k];
      let line: OutLine;
      try {
        const s = await evaluator.score(task, preds.sql.get(position));
        if (s.status === "gold-failed") {
          counts.goldFailed++;
          console.error(
            `rlvr eval: question ${position} (${task.db_id}): gold SQL failed (${s.error.kind}: ${s.error.message}); left out of the score`,
          );
          line = { index: position, correct: false, error: `gold failed: ${s.error.kind}: ${s.error.message}` };
        } else {
          const o = s.outcome;
          total.n++;
          if (o.correct) total.correct++;
          if (o.error?.kind === "timeout") counts.timeouts++;
          else if (o.error) counts.errors++;
          if (task.difficulty !== undefined) {
            const t = byDifficulty.get(task.difficulty) ?? { n: 0, correct: 0 };
            t.n++;
            if (o.correct) t.correct++;
            byDifficulty.set(task.difficulty, t);
          }
          line = { index: position, correct: o.correct, error: o.error ? `${o.error.kind}: ${o.error.message}` : null };
        }
      } catch (e) {
        if (!(e instanceof DatabaseLoadError)) throw e;
        counts.missingDb++;
        if (!missingDbs.has(e.dbId)) {
          missingDbs.set(e.dbId, e.message);
          console.error(`rlvr eval: ${e.message}; its questions are skipped`);
        }
        line = { index: position, correct: false, error: `database: ${e.message}` };
      }
      out[position] = line;
      done++;
      const now = performance.now();
      if (now - lastReport > 2000) {
        lastReport = now;
        console.error(
          `rlvr eval: ${done}/${questions.items.length} questions, EX ${
            (total.correct / Math.max(1, total.n)).toFixed(4)
          }, ${((now - t0) / 1000).toFixed(1)} s`,
        );
      }
    };

    // A window of questions in file order keeps the workers on few databases at a time.
    let next = 0;
    const lanes = Array.from({ length: Math.max(1, pool.size * 4) }, async () => {
      while (next < questions.items.length) await scoreOne(next++);
    });
    try {
      await Promise.all(lanes);
    } finally {
      pool.close();
    }

    if (typeof values.out === "string") {
      const lines = out.filter((l): l is OutLine => l !== undefined).map((l) => JSON.stringify(l));
      try {
        await Deno.writeTextFile(values.out, lines.join("\n") + (lines.length ? "\n" : ""));
      } catch (e) {
        throw new UsageError(`cannot write --out ${values.out}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    // Not one question could be scored (every database missing or refused, every gold failing):
    // an error, as an empty questions file is, never "ok" with n 0.
    if (total.n === 0) {
      const why = [
        missingDbs.size
          ? `${missingDbs.size} database(s) missing or unreadable: ${[...missingDbs.values()].slice(0, 3).join("; ")}`
          : "",
        counts.goldFailed ? `${counts.goldFailed} gold quer${counts.goldFailed === 1 ? "y" : "ies"} failed` : "",
      ].filter(Boolean).join("; ");
      throw new Error(`no question of ${qPath} could be scored (${why})`);
    }
    const seconds = (performance.now() - t0) / 1000;
    console.error(`rlvr eval: ${questions.items.length} questions in ${seconds.toFixed(1)} s`);
    const ex = total.n ? total.correct / total.n : 0;
    const result: Record<string, unknown> = {
      n: total.n,
      correct: total.correct,
      ex,
      errors: counts.errors,
      timeouts: counts.timeouts,
    };
    if (byDifficulty.size > 0) {
      result.difficulty = Object.fromEntries(
        [...byDifficulty].sort(([a], [b]) => a.localeCompare(b)).map((
          [d, t],
        ) => [d, { n: t.n, correct: t.correct, ex: t.correct / t.n }]),
      );
    }
    Object.assign(result, {
      gold_failed: counts.goldFailed,
      malformed: questions.problems.length,
      missing_db: counts.missingDb,
      ...(missingDbs.size ? { missing_databases: [...missingDbs.keys()] } : {}),
      compare: mode,
      seconds: Number(seconds.toFixed(2)),
    });
    return result;
  },
};
