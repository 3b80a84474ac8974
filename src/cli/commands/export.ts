// `rlvr export NOTEBOOK.json --run DIR`: a finished (or interrupted) run's results for training
// elsewhere — its adapter as a PEFT folder, the notebook's GRPO settings as TRL GRPOConfig +
// PEFT LoraConfig keyword arguments, and the training prompts (as the model sees them) with gold SQL.
import { dirname, join, resolve } from "node:path";
import { COUNT_MAX, int, parseFlags, req, UsageError } from "../args.ts";
import { formatIssues, parseNotebook } from "../../core/notebook.ts";
import { loadHfTokenizer } from "../../model/hf.ts";
import type { LoraAdapter } from "../../model/lora.ts";
import { peftFiles, readPeftAdapter } from "../../model/peft.ts";
import { DirSource } from "../../model/source.deno.ts";
import { cachedSchemas, ChatCodec, Prompter } from "../../runtime/recipe/prompting.ts";
import { buildSplits } from "../../runtime/recipe/data.ts";
import { denoEnv, modelSource } from "../../runtime/recipe/env.deno.ts";
import { promptsJsonl, trlConfig } from "../../runtime/recipe/export.ts";
import { readInputJson } from "../inputs.ts";
import { readTextBounded } from "../../model/files.deno.ts";
import type { Command } from "./index.ts";

/** The template a select cell of the run chose, from its summary.json (null without one). */
async function selectedTemplate(summaryPath: string): Promise<string | null> {
  let summary: unknown;
  try {
    summary = JSON.parse(await readTextBounded(summaryPath, { what: "run summary" }));
  } catch {
    return null; // an interrupted run has no summary: the prompt cell's template stands
  }
  const obj = (
    x: unknown,
  ): Record<string, unknown> | null => (typeof x === "object" && x !== null && !Array.isArray(x) ? { ...x } : null);
  let found: string | null = null;
  const cells = obj(summary)?.cells;
  for (const c of Array.isArray(cells) ? cells : []) {
    const report = obj(obj(c)?.report);
    const template = obj(report?.winner)?.template;
    if (report?.kind === "select" && typeof template === "string") found = template;
  }
  return found;
}

export const command: Command = {
  name: "export",
  summary: "export a run: PEFT adapter, TRL GRPOConfig + LoraConfig, training prompts with gold SQL",
  usage: [
    "rlvr export NOTEBOOK.json --run DIR [--out DIR] [--model DIR] [--max-steps N]",
    "",
    "  --run DIR        the run folder of `rlvr run` (its adapter/ and summary.json are read)",
    "  --out DIR        where to write (default DIR/export): adapter/, trl_grpo_config.json, prompts.jsonl",
    "  --model DIR      the model (tokenizer and chat template) when the notebook's model cell is not reachable",
    "  --max-steps N    the --max-steps the run used (TRL's max_steps)",
  ].join("\n"),
  async run(argv) {
    const { values, positionals } = parseFlags(argv, {
      run: { type: "string" },
      out: { type: "string" },
      model: { type: "string" },
      "max-steps": { type: "string" },
    });
    if (positionals.length !== 1) {
      throw new UsageError("expected exactly one notebook file: rlvr export NOTEBOOK.json --run DIR");
    }
    const file = positionals[0];
    const runDir = req(values, "run");
    const out = typeof values.out === "string" ? values.out : join(runDir, "export");
    const json = await readInputJson(file, "notebook");
    const parsed = parseNotebook(json);
    if (!parsed.ok) throw new UsageError(`${file} is not a valid notebook:\n${formatIssues(parsed.errors)}`);
    const cells = parsed.doc.cells;
    const last = <T extends (typeof cells)[number]["type"]>(type: T) =>
      [...cells].reverse().find((c): c is Extract<(typeof cells)[number], { type: T }> => c.type === type);
    const modelCell = last("model"), dataCell = last("dataset"), promptCell = last("prompt"), grpoCell = last("grpo");
    if (!modelCell) throw new UsageError(`${file} has no model cell`);
    let adapter: LoraAdapter;
    try {
      adapter = await readPeftAdapter(new DirSource(join(runDir, "adapter")));
    } catch (e) {
      throw new UsageError(
        `${runDir}/adapter: ${e instanceof Error ? e.message : String(e)} (did the run finish a cell?)`,
      );
    }
    const files: string[] = [];
    const write = async (name: string, data: Uint8Array | string) => {
      const p = join(out, name);
      await Deno.mkdir(dirname(p), { recursive: true });
      if (typeof data === "string") await Deno.writeTextFile(p, data);
      else await Deno.writeFile(p, data);
      files.push(p);
    };
    const base = dirname(resolve(file));
    const { source, name } = modelSource(
      typeof values.model === "string" ? values.model : modelCell.params,
      (p) => (p.startsWith("/") || /^https?:/i.test(p) ? p : join(base, p)),
    );
    for (const [f, bytes] of peftFiles(adapter, { baseModel: name })) await write(`adapter/${f}`, bytes);
    if (grpoCell) {
      const maxSteps = values["max-steps"] === undefined ? null : int(values, "max-steps", 0, 0, COUNT_MAX);
      await write(
        "trl_grpo_config.json",
        JSON.stringify(trlConfig(grpoCell.params, modelCell.params, adapter.targets, { maxSteps }), null, 1),
      );
    }
    if (dataCell && promptCell) {
      // A select cell may have changed the template: summary.json names the winner.
      let template = promptCell.params.template;
      const winner = await selectedTemplate(join(runDir, "summary.json"));
      if (winner) template = winner;
      const tokenizer = await loadHfTokenizer(source);
      const codec = new ChatCodec(tokenizer, tokenizer.chatTemplate);
      const env = denoEnv({ out: runDir, base });
      const splits = buildSplits(dataCell.params, (await env.loadDataset(dataCell.params)).splits);
      const tasks = splits[dataCell.params.split] ?? [];
      const prompter = new Prompter(
        codec,
        { ...promptCell.params, template },
        cachedSchemas((db) => env.schemaOf(dataCell.params, db)),
      );
      await write("prompts.jsonl", promptsJsonl(tasks, await prompter.prompts(tasks)));
    }
    return { out, files };
  },
};
