// The ask cell headless on a tiny random model (lavapipe): `rlvr run` of a notebook that trains (an
// sft warm-up round, one GRPO step) and then asks prints both answers (log and JSON summary); asking
// again in a run of the setup cells and the ask cell alone (the page's Ask) reads the same stage from
// the checkpoint and answers the same, the base model answers the same with and without a trainer
// bound to the policy, a named stage answers, and the run's trained adapter file is left as it was.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { type CellId, parseNotebook, updateParams } from "../../core/notebook.ts";
import { planRun } from "../run-plan.ts";
import { denoEnv } from "./env.deno.ts";
import { tinyPromptCorpus, tinySetupCells, writeTinyDataset, writeVaryingLengthModel } from "./fixtures.deno.ts";
import { runNotebook } from "./runner.ts";

const TEMPLATE = "omnisql@1";
const NOTEBOOK = {
  version: 1,
  title: "tiny ask",
  cells: [
    ...tinySetupCells(TEMPLATE),
    { id: "warmup", type: "warmup", params: { rounds: 1, method: "sft", epochs: 2, lr: 0.05, maxNewTokens: 4 } },
    {
      id: "grpo",
      type: "grpo",
      params: { G: 2, steps: 1, batchQuestions: 2, maxNewTokens: 4, lr: 0.05, evalEvery: 0 },
    },
    { id: "ask", type: "ask", params: { question: "How many dogs are there?", db: "pets", maxNewTokens: 12 } },
  ],
};

Deno.test({
  name: "ask headless: rlvr run prints base and GRPO answers; an ask-only run answers the same and keeps the adapter",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-ask-" });
    await writeTinyDataset(`${dir}/data`);
    // No pull to end at once: greedy answers run to maxNewTokens, so there is text to compare.
    await writeVaryingLengthModel(`${dir}/model`, {
      seed: 3,
      eosStrength: 0,
      corpus: await tinyPromptCorpus(`${dir}/data`, [TEMPLATE]),
    });
    await Deno.writeTextFile(`${dir}/nb.json`, JSON.stringify(NOTEBOOK));
    const out = `${dir}/out`;
    const r = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../../cli/main.ts", import.meta.url).pathname,
        "run",
        `${dir}/nb.json`,
        "--out",
        out,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(r.stderr);
    assert(r.code === 0, `rlvr run exited ${r.code}: ${stderr.slice(-3000)}`);
    const last = JSON.parse(new TextDecoder().decode(r.stdout).trim().split("\n").at(-1)!);
    const cli = last.cells.find((c: { id: string }) => c.id === "ask")?.ask;
    console.log(JSON.stringify(cli));
    assert(cli && cli.stage === "grpo" && "base" in cli && "trained" in cli, JSON.stringify(last));
    for (
      const w of [
        'ask "ask" on pets: How many dogs are there?',
        "base model (no adapter):",
        'after "grpo" (grpo, step 1):',
      ]
    ) assert(stderr.includes(w), `the log has ${w}:\n${stderr.slice(-3000)}`);
    const adapter = await Deno.readFile(`${out}/adapter/adapter_model.safetensors`);

    // The page's Ask: the setup cells and the ask cell, into the same folder.
    const parsed = parseNotebook(NOTEBOOK);
    if (!parsed.ok) throw new Error("notebook invalid");
    const plan = planRun(parsed.doc, "cell", "ask" as CellId);
    assertEquals(plan.cells.map((c) => c.id), ["data", "model", "prompt", "reward", "ask"]);
    const summary = await runNotebook(plan, denoEnv({ out, base: dir, sqlWorkers: 1 }));
    const rep = summary.cells.find((c) => c.id === "ask")?.report;
    assert(rep?.kind === "ask" && rep.trained, JSON.stringify(rep));
    assertEquals(rep.stages.map((s) => [s.cellId, s.kind, s.step]), [["warmup", "warmup", 1], ["grpo", "grpo", 1]]);
    assertEquals(rep.base.sql, cli.base.sql, "the base model's answer, with and without a trainer bound to the policy");
    assertEquals(rep.trained.sql, cli.trained.sql, "the stage's answer, from its checkpoint");
    for (const w of ["base", "trained"] as const) {
      if (rep[w]!.sql === null) assertEquals(rep[w]!.completion, cli[w].completion, `${w}: the same text`);
    }
    assertEquals(
      await Deno.readFile(`${out}/adapter/adapter_model.safetensors`),
      adapter,
      "an ask-only run leaves the trained adapter",
    );
    console.log(`base: ${rep.base.completion}\ntrained: ${rep.trained.completion}`);
    assert(rep.base.completion.length > 0 && rep.trained.completion.length > 0, "both answered");
    // The sft warm-up moved the adapter (the base model's answer is random text, the trained one has fences).
    assert(rep.trained.completion !== rep.base.completion, "the stage's adapter answers, not the base model");

    // A stage named: the warm-up's checkpoint answers.
    const named = planRun(
      updateParams(parsed.doc, "ask" as CellId, "ask", { stage: "warmup" }),
      "cell",
      "ask" as CellId,
    );
    const again = (await runNotebook(named, denoEnv({ out, base: dir, sqlWorkers: 1 }))).cells.at(-1)?.report;
    assert(again?.kind === "ask" && again.trained?.stage?.cellId === "warmup", JSON.stringify(again));
    assertEquals(again.stages.map((s) => s.cellId), ["warmup", "grpo"], "oldest first");
    assertEquals(again.base.completion, rep.base.completion);
    console.log(`after warmup: ${again.trained.completion}`);
  },
});
