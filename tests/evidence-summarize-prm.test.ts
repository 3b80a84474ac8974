// bench/evidence/summarize-prm.py (the PRM figures of docs/prm.md) on the runs of 2026-12-04 kept in
// bench/evidence/results/2026-12-04-prm: the finished runs' cold start, evaluations and GRPO variants as docs/prm.md
// reports them, and a run that stopped before its end (no summary.json) read for its GRPO steps instead of failing.
// Runs python3 (skipped without it).
import { assert } from "./assert.ts";

const root = new URL("..", import.meta.url).pathname;
const base = `${root}bench/evidence/results/2026-12-04-prm`;

function hasPython(): boolean {
  try {
    return new Deno.Command("python3", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

Deno.test({
  name: "summarize-prm.py on 2026-12-04's PRM runs: cold start, evaluations, GRPO variants; the unfinished run by its metrics",
  ignore: !hasPython(),
  async fn() {
    const out = await new Deno.Command("python3", {
      args: [`${root}bench/evidence/summarize-prm.py`, "run-prm-demo-outcome", "run-prm-demo-stepnorm", "run-prm-demo"],
      cwd: base, stdout: "piped", stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert(out.success, `summarize-prm.py failed: ${new TextDecoder().decode(out.stderr)}\n${text}`);
    const has = (s: string) => assert(text.includes(s), `missing ${JSON.stringify(s)} in:\n${text}`);
    has("round 1 mean token log-prob -6.563 -> -0.033");
    has("cold_eval: test-concepts greedy  21.9 ±  4.2 of 96; chains of >= 2 steps 96 of 96");
    has("after: test-concepts greedy  18.8 ±  4.0 of 96");
    has("after: test-concepts greedy   3.1 ±  1.8 of 96");
    has("run-prm-demo-stepnorm:   3.1 ±  1.8  (-15.6 ±  4.4 vs run-prm-demo-outcome)");
    has("notice: run-prm-demo has no summary.json (the run did not finish)");
    has("GRPO, 20 steps, first five -> last five: reward -0.211 -> -0.215");
  },
});

// The third session's runs (chain-of-ctes@2, bench/evidence/results/2026-12-04-prm-prefill): the figures docs/prm.md's
// table and bench/evidence/summaries/2026-12-04-prm-evidence-2.json give.
Deno.test({
  name: "summarize-prm.py on the 2026-12-04 answer-prefix runs: the PRM's held-out AUC, best-of-8, the GRPO variants as docs/prm.md reports them",
  ignore: !hasPython(),
  async fn() {
    const run = async (...folders: string[]) => {
      const out = await new Deno.Command("python3", {
        args: [`${root}bench/evidence/summarize-prm.py`, ...folders], cwd: `${root}bench/evidence/results/2026-12-04-prm-prefill`, stdout: "piped", stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout);
      assert(out.success, `summarize-prm.py failed: ${new TextDecoder().decode(out.stderr)}\n${text}`);
      return (s: string) => assert(text.includes(s), `missing ${JSON.stringify(s)} in:\n${text}`);
    };
    const demo = await run("run-prm-demo", "run-prm-demo-outcome", "run-prm-demo-stepnorm");
    demo("cold_eval: test-concepts greedy  24.0 ±  4.4 of 96; chains of >= 2 steps 95 of 96");
    demo("      8 |  24.0 ±  4.4 |  21.9 ±  4.2 |  26.0 ±  4.5 |  21.9 ±  4.2 |  30.2 ±  4.7 |  +2.1 ±  6.2");
    demo("run-prm-demo-stepnorm:  12.5 ±  3.4");
    demo("length 232.1 -> 161.7, PRM mean 0.810 -> 0.915, steps per chain 4.85 -> 3.75");
    demo("first error (all chains): {'0': 85, 'none': 181}");
    const synth = await run("run-prm-synth", "run-prm-synth-outcome", "run-prm-synth-stepnorm");
    synth("AUC 0.9320882852292021");
    synth("      8 |  19.4 ±  4.8 |  17.9 ±  4.7 |  22.4 ±  5.1 |  16.4 ±  4.5 |  25.4 ±  5.3 |  +3.0 ±  7.0");
    synth("run-prm-synth-outcome:  17.9 ±  4.7");
  },
});

// The fourth session's runs (both fixes; bench/evidence/results/2026-12-04-prm-rollout): prm-demo stopped at GRPO step 17
// (no summary.json) and is read from its stats.json and metrics.jsonl; prm-demo-outcome resumed and logged step 20
// twice (counted once); --json gives the figures bench/evidence/summaries/2026-12-04-prm-evidence-3.json holds.
Deno.test({
  name: "summarize-prm.py on the 2026-12-04 rollout-fix runs: an unfinished run's PRM data, PRM and best-of-N; resumed steps once; --json",
  ignore: !hasPython(),
  async fn() {
    const cwd = `${root}bench/evidence/results/2026-12-04-prm-rollout`;
    const run = async (...args: string[]) => {
      const out = await new Deno.Command("python3", { args: [`${root}bench/evidence/summarize-prm.py`, ...args], cwd, stdout: "piped", stderr: "piped" }).output();
      const text = new TextDecoder().decode(out.stdout);
      assert(out.success, `summarize-prm.py failed: ${new TextDecoder().decode(out.stderr)}\n${text}`);
      return text;
    };
    const text = await run("run-prm-demo", "run-prm-demo-outcome", "run-prm-synth-s2", "run-prm-synth-outcome-s2");
    const has = (s: string) => assert(text.includes(s), `missing ${JSON.stringify(s)} in:\n${text}`);
    has("notice: run-prm-demo has no summary.json");
    has("475 chains (292 correct) -> 102 for training");
    has("first error (all chains): {'0': 34, '1': 9, '2': 19, '3': 10, '4': 1, 'unresolved': 98, 'none': 292, 'past': 12}");
    has("PRM-train cell 1 (from metrics.jsonl): held out: step accuracy  78.1 ±  5.2 over 64 steps of 20 chains, AUC 0.5336538461538461");
    has("      8 |  24.0 ±  4.4 |  21.9 ±  4.2 |  25.0 ±  4.4 |  19.8 ±  4.1 |  30.2 ±  4.7 |  +1.0 ±  6.2");
    has("GRPO, 17 steps, first five -> last five: reward 1.375 -> 1.387, correct 0.688 -> 0.697, length 233.8 -> 233.9, PRM mean 0.862 -> 0.887, steps per chain 4.88 -> 4.68");
    has("GRPO, 20 steps, first five -> last five: reward 0.466 -> 0.369");
    has("      8 |  14.9 ±  4.4 |  14.9 ±  4.4 |  19.4 ±  4.8 |  20.9 ±  5.0 |  23.9 ±  5.2 |  +4.5 ±  6.5");
    has("after: dev greedy  20.9 ±  5.0 of 67");
    has("run-prm-synth-outcome-s2:  14.9 ±  4.4  ( -5.9 ±  6.0 vs run-prm-demo-outcome)");
    // --json: the same figures as data, and what the committed results file holds.
    const data = JSON.parse(await run("--json", "run-prm-demo", "run-prm-synth-s2"));
    assert(data.length === 2 && data[0].finished === false && data[1].finished === true, "two folders, the first unfinished");
    assert(data[0].cells.labels.curation.balanced === 359, "demo PRM data curation");
    assert(data[0].grpo.steps === 17 && Math.abs(data[0].grpo.prmSteps.first5 - 4.88) < 0.005, "demo GRPO steps and PRM steps per chain");
    const at8 = data[1].cells.sc_before.atN.find((a: { N: number }) => a.N === 8);
    assert(Math.abs(at8.prm.prm - 13 / 67) < 1e-12 && Math.abs(at8.vote - 10 / 67) < 1e-12, `seed 2 best-of-8: ${JSON.stringify(at8)}`);
    assert(Math.abs(data[1].cells.after.greedy - 14 / 67) < 1e-12 && data[1].cells.after.questions === 67, "seed 2 after GRPO");
    const committed = JSON.parse(await Deno.readTextFile(`${root}bench/evidence/summaries/2026-12-04-prm-evidence-3.json`));
    const inFile = committed.runs.find((r: { folder: string }) => r.folder === "run-prm-synth-s2");
    assert(JSON.stringify(inFile) === JSON.stringify(data[1]), "bench/evidence/summaries/2026-12-04-prm-evidence-3.json holds --json's figures");
  },
});

// The fifth session's runs (seeds 3 and 4, best-of-N to N = 16; bench/evidence/results/2026-12-04-prm-n16): the
// figures docs/prm.md's table gives, the labelling line, --pool over both sessions' folders, and
// bench/evidence/summaries/2026-12-04-prm-evidence-4.json equal to --json's and --pool --json's output.
Deno.test({
  name: "summarize-prm.py on the 2026-12-04 N = 16 runs: demo to its end, best-of-16, labelling calls; --pool over seeds 1-4",
  ignore: !hasPython(),
  async fn() {
    const cwd = `${root}bench/evidence/results`;
    const run = async (...args: string[]) => {
      const out = await new Deno.Command("python3", { args: [`${root}bench/evidence/summarize-prm.py`, ...args], cwd, stdout: "piped", stderr: "piped" }).output();
      const text = new TextDecoder().decode(out.stdout);
      assert(out.success, `summarize-prm.py failed: ${new TextDecoder().decode(out.stderr)}\n${text}`);
      return text;
    };
    const n16 = (...names: string[]) => names.map((n) => `2026-12-04-prm-n16/run-prm-${n}`);
    const text = await run(...n16("demo-outcome-s3", "demo-s3", "demo-stepnorm-s3"));
    const has = (t: string, s: string) => assert(t.includes(s), `missing ${JSON.stringify(s)} in:\n${t}`);
    has(text, "518 chains (326 correct) -> 88 for training");
    has(text, "     16 |  25.0 ±  4.4 |  24.0 ±  4.4 |  17.7 ±  3.9 |  25.0 ±  4.4 |  37.5 ±  4.9 |  -7.3 ±  5.9");
    has(text, "labelling: 6 batches, sampling 222.9 s in 11 calls + 35 calls of prefixes without room (7056 new-token steps)");
    has(text, "2026-12-04-prm-n16/run-prm-demo-stepnorm-s3:  13.5 ±  3.5  (-12.5 ±  5.7 vs 2026-12-04-prm-n16/run-prm-demo-outcome-s3)");
    const old = ["demo", "demo-outcome", "synth", "synth-outcome", "synth-stepnorm", "synth-s2", "synth-outcome-s2", "synth-stepnorm-s2"]
      .map((n) => `2026-12-04-prm-rollout/run-prm-${n}`);
    const fresh = n16("demo-s3", "demo-outcome-s3", "demo-stepnorm-s3", "synth-s3", "synth-outcome-s3", "synth-stepnorm-s3", "synth-s4", "synth-outcome-s4", "synth-stepnorm-s4");
    const pool = await run("--pool", ...old, ...fresh);
    has(pool, "## prm-synth, seeds [1, 2, 3, 4]");
    has(pool, "      8 | 1,2,3,4   |  18.3 ±  2.4 |  17.2 ±  2.3 |  18.7 ±  2.4 |  16.0 ±  2.2 |  23.1 ±  2.6 |  +0.4 ±  3.3");
    has(pool, "     16 | 3,4       |");
    has(pool, "after GRPO, prm-synth (seeds [1, 2, 3, 4]):  17.9 ±  2.3; minus outcome alone (seeds [1, 2, 3, 4])  +0.7 ±  3.3");
    has(pool, "after GRPO, prm-demo-outcome (seeds [1, 3]):  23.4 ±  3.1");
    // The pooled mean is the mean of the seeds' figures: seed 3's and 4's best-of-16 vote, 16 and 11 of 67.
    const pooled = JSON.parse(await run("--pool", "--json", ...old, ...fresh));
    const synth = pooled.find((p: { set: string }) => p.set === "prm-synth");
    const at16 = synth.bestOfN.find((r: { N: number }) => r.N === 16);
    assert(JSON.stringify(at16.seeds) === "[3,4]" && Math.abs(at16.vote[0] - (16 / 67 + 11 / 67) / 2) < 1e-12, `pooled best-of-16: ${JSON.stringify(at16)}`);
    const committed = JSON.parse(await Deno.readTextFile(`${root}bench/evidence/summaries/2026-12-04-prm-evidence-4.json`));
    assert(JSON.stringify(committed.pooled) === JSON.stringify(pooled), "bench/evidence/summaries/2026-12-04-prm-evidence-4.json's pooled = --pool --json");
    const runs = JSON.parse(await run("--json", ...fresh));
    assert(JSON.stringify(committed.runs) === JSON.stringify(runs), "bench/evidence/summaries/2026-12-04-prm-evidence-4.json's runs = --json");
  },
});
