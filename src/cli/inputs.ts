// Input files of the CLI commands: read through the bounded reader (regular files within a size
// cap, never a FIFO or a device), with errors that name the file and the flag.
import {
  jsonError,
  type LoadedQuestions,
  type LoadProblem,
  parseQuestions,
  requireQuestions,
} from "../core/loaders.ts";
import { FileRefusedError, readTextBounded } from "../model/files.deno.ts";
import { UsageError } from "./args.ts";

/** The text of input file `path`; `what` ("questions file", "--prompts") names it in errors. */
export async function readInputText(path: string, what: string): Promise<string> {
  try {
    return await readTextBounded(path, { what });
  } catch (e) {
    if (e instanceof FileRefusedError) throw new UsageError(e.message);
    throw new UsageError(`cannot read ${what} ${path}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** The JSON of input file `path`; a parse error names the file but quotes none of its content. */
export async function readInputJson(path: string, what: string): Promise<unknown> {
  const text = await readInputText(path, what);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${what} ${path} is not valid JSON: ${jsonError(e)}`);
  }
}

/** Prints problems of an input file to standard error, at most `max` of them and a count of the rest. */
export function reportProblems(
  prefix: string,
  path: string,
  problems: readonly LoadProblem[],
  verb: string,
  max = 20,
): void {
  for (const p of problems.slice(0, max)) console.error(`${prefix}: ${path} ${p.where}: ${p.message} (${verb})`);
  if (problems.length > max) {
    console.error(`${prefix}: ${path}: ${problems.length - max} more problems like these (${verb})`);
  }
}

/**
 * A question file read and parsed; the malformed records are reported (skipped), and a file with
 * no valid question at all (empty, binary, garbage) is an error naming it, as in `rlvr run`.
 */
export async function readQuestionsFile(path: string, prefix: string): Promise<LoadedQuestions> {
  const text = await readInputText(path, "questions file");
  let q: LoadedQuestions;
  try {
    q = parseQuestions(text);
    requireQuestions(q, `questions file ${path}`);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new UsageError(msg.startsWith("questions file") ? msg : `questions file ${path}: ${msg}`);
  }
  reportProblems(prefix, path, q.problems, "skipped");
  return q;
}
