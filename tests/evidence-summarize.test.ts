// bench/evidence/summarize.py (the figures of docs/evidence.md) counts each GRPO step once: a run resumed after a
// device call's time limit redoes the step whose checkpoint was not written and appends its metrics line again
// with the same step number; the later line is the one the run went on from. Runs python3 (skipped without it).
import { assert } from "./assert.ts";

const root = new URL("..", import.meta.url).pathname;
const script = `${root}bench/evidence/summarize.py`;

function hasPython(): boolean {
  try {
    return new Deno.Command("python3", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

async function summarize(...dirs: string[]): Promise<string> {
  const out = await new Deno.Command("python3", { args: [script, ...dirs], stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert(out.success, `summarize.py failed: ${new TextDecoder().decode(out.stderr)}\n${text}`);
  return text;
}

/** A GRPO metrics line: `correct` of the samples right, `trainMs` in the train phase. */
function grpoLine(step: number, correct: number, trainMs: number) {
  return {
    phase: "grpo",
    step,
    execAccuracy: correct,
    equalGroupFraction: 0.5,
    rewards: { total: { mean: correct } },
    completionLength: { mean: 40 },
    ms: { sample: 1000, score: 0, train: trainMs },
    gpuMemoryBytes: 1e9,
  };
}

Deno.test({
  name: "summarize.py: a GRPO step redone after a resume counts once, its later line wins",
  ignore: !hasPython(),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "rlvr-summarize-" });
    await Deno.writeTextFile(`${dir}/summary.json`, JSON.stringify({ title: "resumed", accuracy: {}, cells: [] }));
    // Steps 1-10, step k right k/10 of the time, train 100 ms; step 4's first line (the interrupted call's) differs.
    const lines = [];
    for (let k = 1; k <= 10; k++) {
      if (k === 4) lines.push(grpoLine(4, 0.9, 5000), { phase: "eval", step: 0, rewards: {} });
      lines.push(grpoLine(k, k / 10, 100));
    }
    await Deno.writeTextFile(`${dir}/metrics.jsonl`, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
    const out = await summarize(dir);
    assert(out.includes("GRPO, 10 steps (1 redone after a resume, counted once), first five -> last five:"), out);
    // Later line wins: the mean of 0.1 ... 1.0 (counted twice: 0.582; the earlier line kept: 0.600).
    assert(out.includes("samples correct 0.300 -> 0.800 (all steps 0.550)"), out);
    assert(out.includes("train: mean 0.10 s, median 0.100 s, min 0.10, max 0.10"), out);
    await Deno.remove(dir, { recursive: true });
  },
});
