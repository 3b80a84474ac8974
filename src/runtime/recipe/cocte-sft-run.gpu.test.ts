// The CoCTE cold start headless, as docs/prm.md gives the command sequence, on a tiny random
// model (lavapipe): `rlvr cocte --dataset` converts the tiny dataset's golds, then `rlvr run` on a
// notebook whose dataset cell reads that file, with a warm-up sft on it (the records' completions
// as targets); run again into the same folder, the warm-up's round is not redone. (The PRM data and
// PRM train cells that follow it in docs/prm.md's sequence have their own headless tests.) And the
// same cold start inside the run (warm-up sftTargets "cocte" on the plain question file): the chains
// it trains and writes are the ones `rlvr cocte --dataset` writes, and the evaluation after it
// reports the greedy answers' chain shapes; that one runs under chain-of-ctes@2, whose prompt starts
// the answer ("```sql\nWITH"): the chains train on what follows that start, and the answers read
// back from it.
import { assert, assertEquals } from "../../../tests/assert.ts";
import { decodeMetrics } from "../../core/metrics.ts";
import type { RunSummary } from "./runner.ts";
import type { EvalReport, WarmupReport } from "../records.ts";
import { tinyDatasetCell, tinyPromptCorpus, writeTinyDataset, writeVaryingLengthModel } from "./fixtures.deno.ts";

const TEMPLATE = "chain-of-ctes@1";
const PREFILLED = "chain-of-ctes@2";
const MAIN = new URL("../../cli/main.ts", import.meta.url).pathname;

async function cli(args: string[]): Promise<{ stdout: string; stderr: string }> {
  const r = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(r.stdout), stderr = new TextDecoder().decode(r.stderr);
  assert(r.code === 0, `rlvr ${args[0]} exited ${r.code}: ${stderr.slice(-2000)}`);
  return { stdout, stderr };
}

Deno.test({
  name: "rlvr cocte --dataset, then rlvr run: warm-up sft on the CoCTE file; a second run does not redo the warm-up",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-cocte-sft-" });
    await writeTinyDataset(`${dir}/data`);
    const conv = await cli([
      "cocte",
      "--questions",
      `${dir}/data/train.jsonl`,
      "--db-root",
      `${dir}/data`,
      "--out",
      `${dir}/cocte.jsonl`,
      "--dataset",
      `${dir}/data/cocte-ds.jsonl`,
    ]);
    const stats = JSON.parse(conv.stdout.trim().split("\n").at(-1) ?? "{}");
    assertEquals([stats.questions, stats.converted], [8, 8]);
    const records = (await Deno.readTextFile(`${dir}/data/cocte-ds.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    const corpus = [
      ...await tinyPromptCorpus(`${dir}/data`, [TEMPLATE]),
      ...records.map((r) => r.completion as string),
    ];
    await writeVaryingLengthModel(`${dir}/model`, { seed: 11, corpus });
    const notebook = {
      version: 1,
      title: "CoCTE cold start",
      cells: [
        {
          id: "data",
          type: "dataset",
          params: {
            source: "url",
            questionsUrl: "data/cocte-ds.jsonl",
            dbRoot: "data",
            format: "rlvr",
            split: "train",
            devFraction: 0.25,
          },
        },
        {
          id: "model",
          type: "model",
          params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 },
        },
        { id: "prompt", type: "prompt", params: { template: TEMPLATE, maxPromptTokens: 1024 } },
        {
          id: "reward",
          type: "reward",
          params: { spec: { components: [{ name: "execution", weight: 1 }, { name: "error_penalty", weight: 1 }] } },
        },
        { id: "cold", type: "warmup", params: { method: "sft", rounds: 1, epochs: 2, lr: 0.01 } },
      ],
    };
    await Deno.writeTextFile(`${dir}/nb.json`, JSON.stringify(notebook));
    const out = `${dir}/out`;
    const a = await cli(["run", `${dir}/nb.json`, "--out", out]);
    assert(
      a.stderr.includes(
        `warmup "cold" (sft): 6 gold targets under ${TEMPLATE}: 6 from the records' completion, 0 the gold SQL`,
      ),
      a.stderr.slice(-3000),
    );
    const summary: RunSummary = JSON.parse(await Deno.readTextFile(`${out}/summary.json`));
    assertEquals(summary.cells.map((c) => c.id), notebook.cells.map((c) => c.id));
    const rep = summary.cells.find((c) => c.id === "cold")?.report as WarmupReport;
    assertEquals(
      [rep.method, rep.targets, rep.rounds.length, rep.rounds[0].goldTargets, rep.rounds[0].optimiserSteps],
      ["sft", { completion: 6, gold: 0, template: TEMPLATE }, 1, 6, 2],
    );
    const lp = rep.rounds[0].targetLogprob;
    assert(lp && lp.after > lp.before, `the round raised the targets' log-probability: ${JSON.stringify(lp)}`);
    const b = await cli(["run", `${dir}/nb.json`, "--out", out]);
    assert(b.stderr.includes(`warmup "cold": 1 round(s) already done`), b.stderr.slice(-3000));
    const warm = decodeMetrics(await Deno.readTextFile(`${out}/metrics.jsonl`)).records.filter((r) =>
      r.phase === "warmup"
    );
    assertEquals(warm.length, 1, "one warm-up record over both runs");
    console.log(`sft on the CoCTE file: ${lp.before.toFixed(4)} -> ${lp.after.toFixed(4)}`);
    await Deno.remove(dir, { recursive: true });
  },
});

Deno.test({
  name:
    "rlvr run: warm-up sft with sftTargets cocte trains rlvr cocte's chains after chain-of-ctes@2's answer start; the evaluation reports chain shapes",
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-cocte-inrun-" });
    await writeTinyDataset(`${dir}/data`);
    await cli([
      "cocte",
      "--questions",
      `${dir}/data/train.jsonl`,
      "--db-root",
      `${dir}/data`,
      "--out",
      `${dir}/cocte.jsonl`,
      "--dataset",
      `${dir}/cocte-ds.jsonl`,
    ]);
    const byCli = new Map(
      (await Deno.readTextFile(`${dir}/cocte-ds.jsonl`)).trim().split("\n").map((l) => JSON.parse(l)).map((
        r,
      ) => [r.source_id as string, r]),
    );
    const corpus = [
      ...await tinyPromptCorpus(`${dir}/data`, [PREFILLED]),
      ...[...byCli.values()].map((r) => r.completion as string),
    ];
    await writeVaryingLengthModel(`${dir}/model`, { seed: 11, corpus });
    const notebook = {
      version: 1,
      title: "CoCTE cold start in the run",
      cells: [
        tinyDatasetCell({ devFraction: 0.25 }),
        {
          id: "model",
          type: "model",
          params: { source: "url", url: "model", dtype: "f32", loraRank: 2, loraAlpha: 4 },
        },
        { id: "prompt", type: "prompt", params: { template: PREFILLED, maxPromptTokens: 1024 } },
        { id: "reward", type: "reward", params: { comparison: "set" } },
        { id: "cold", type: "warmup", params: { method: "sft", sftTargets: "cocte", rounds: 1, epochs: 1, lr: 0.01 } },
        { id: "after", type: "evaluate", params: { split: "dev", k: 1, maxNewTokens: 8 } },
      ],
    };
    await Deno.writeTextFile(`${dir}/nb.json`, JSON.stringify(notebook));
    const out = `${dir}/out`;
    const a = await cli(["run", `${dir}/nb.json`, "--out", out]);
    assert(
      a.stderr.includes(`warmup "cold" (sft): 6 golds as chains of CTEs (warmup/cold/cocte.jsonl)`),
      a.stderr.slice(-3000),
    );
    assert(
      a.stderr.includes(`6 gold targets under ${PREFILLED}`) && !a.stderr.includes("do not start with"),
      a.stderr.slice(-3000),
    );
    const summary: RunSummary = JSON.parse(await Deno.readTextFile(`${out}/summary.json`));
    const rep = summary.cells.find((c) => c.id === "cold")?.report as WarmupReport;
    assertEquals(rep.targets, {
      completion: 0,
      gold: 0,
      template: PREFILLED,
      cocte: 6,
      cocteFile: "warmup/cold/cocte.jsonl",
      cocteFailed: {},
    });
    const lines = (await Deno.readTextFile(`${out}/warmup/cold/cocte.jsonl`)).trim().split("\n").map((l) =>
      JSON.parse(l)
    );
    assertEquals(lines.length, 6);
    for (const r of lines) assertEquals(r, byCli.get(r.source_id), r.id);
    const ev = summary.cells.find((c) => c.id === "after")?.report as EvalReport;
    assert(ev.chains !== undefined, `chain shapes under ${PREFILLED}`);
    assertEquals(ev.chains.answers, 2);
    const lp = rep.rounds[0].targetLogprob;
    assert(lp && lp.after > lp.before, `the round raised the targets' log-probability: ${JSON.stringify(lp)}`);
    // The evaluation's answers start with the prefix the prompt wrote; their prompts do not end with it.
    const evals = (await Deno.readTextFile(`${out}/samples.jsonl`)).trim().split("\n").map((l) => JSON.parse(l)).filter(
      (r) => r.phase === "eval",
    );
    assert(
      evals.length === 2 &&
        evals.every((r) =>
          r.completion.startsWith("```sql\nWITH") && !r.prompt.endsWith("WITH") && r.answerPrefix === "```sql\nWITH"
        ),
      JSON.stringify(evals.map((r) => r.completion)),
    );
    assertEquals(ev.chains.noSql + Object.values(ev.chains.byCtes).reduce((x, y) => x + y, 0), 2);
    await Deno.remove(dir, { recursive: true });
  },
});
