// bench/evidence/summarize-prm.py (the PRM figures of docs/prm.md) on the demo runs of 2026-12-04's fifth session
// (seed 3, best-of-N to N = 16), kept in tests/fixtures/evidence-prm-n16 with the files the script reads (summary,
// metrics, the PRM data statistics; the runs' other files are at 7615547 in bench/evidence/results/2026-12-04-prm-n16):
// the figures docs/prm.md's table gives, the labelling line, and --json equal to what
// bench/evidence/summaries/2026-12-04-prm-evidence-4.json holds for those runs. Runs python3 (skipped without it).
import { assert } from "./assert.ts";

const root = new URL("..", import.meta.url).pathname;
const cwd = `${root}tests/fixtures/evidence-prm-n16`;

function hasPython(): boolean {
  try {
    return new Deno.Command("python3", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync().success;
  } catch {
    return false;
  }
}

async function run(...args: string[]): Promise<string> {
  const out = await new Deno.Command("python3", {
    args: [`${root}bench/evidence/summarize-prm.py`, ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert(out.success, `summarize-prm.py failed: ${new TextDecoder().decode(out.stderr)}\n${text}`);
  return text;
}

Deno.test({
  name:
    "summarize-prm.py on the 2026-12-04 N = 16 demo runs: best-of-16, labelling calls, per-step-norm; --json as committed",
  ignore: !hasPython(),
  async fn() {
    const runs = ["run-prm-demo-outcome-s3", "run-prm-demo-s3", "run-prm-demo-stepnorm-s3"];
    const text = await run(...runs);
    const has = (s: string) => assert(text.includes(s), `missing ${JSON.stringify(s)} in:\n${text}`);
    has("518 chains (326 correct) -> 88 for training");
    has("     16 |  25.0 ±  4.4 |  24.0 ±  4.4 |  17.7 ±  3.9 |  25.0 ±  4.4 |  37.5 ±  4.9 |  -7.3 ±  5.9");
    has(
      "labelling: 6 batches, sampling 222.9 s in 11 calls + 35 calls of prefixes without room (7056 new-token steps)",
    );
    has("run-prm-demo-stepnorm-s3:  13.5 ±  3.5  (-12.5 ±  5.7 vs run-prm-demo-outcome-s3)");
    const json = JSON.parse(await run("--json", ...runs)) as { folder: string }[];
    const committed = JSON.parse(
      await Deno.readTextFile(`${root}bench/evidence/summaries/2026-12-04-prm-evidence-4.json`),
    ) as { runs: { folder: string }[] };
    for (const r of json) {
      const inFile = committed.runs.find((c) => c.folder.endsWith(r.folder.replace(/^.*\//, "")));
      assert(JSON.stringify(inFile) === JSON.stringify(r), `2026-12-04-prm-evidence-4.json holds --json's ${r.folder}`);
    }
  },
});
