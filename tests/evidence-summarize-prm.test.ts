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
// table and bench/results/2026-12-04-prm-evidence-2.json give.
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
