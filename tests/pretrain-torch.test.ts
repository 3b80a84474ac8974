// lab/pretrain_torch.py (issue 49: the demo model pretrained with PyTorch on the GPU machine), the parts
// that run without PyTorch: it reads the corpus cache `rlvr pretrain` writes (plain and xz) row for row, its learning
// rate is learningRate's schedule (100 warm-up steps, cosine to 10%), and its config.json for the shipped size is the
// shipped model's. Runs python3 with numpy (skipped without them); the training itself runs on the GPU machine only.
import { assert, assertEquals } from "./assert.ts";
import { learningRate } from "../src/core/grpo.ts";
import { writeCorpusCache } from "../src/runtime/pretrain/checkpoint.deno.ts";

const root = new URL("..", import.meta.url).pathname;

function hasNumpy(): boolean {
  try {
    return new Deno.Command("python3", { args: ["-c", "import numpy"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

async function py(code: string): Promise<unknown> {
  const out = await new Deno.Command("python3", {
    args: ["-c", `import sys, json; sys.path.insert(0, ${JSON.stringify(`${root}lab`)})\n${code}`],
    env: { PYTHONDONTWRITEBYTECODE: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, `python3 failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test({
  name: "pretrain_torch.py: the corpus cache row for row (plain and xz), learningRate's schedule, the shipped config",
  ignore: !hasNumpy(),
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const rows = [[5, 6, 7], [1], [8191, 0, 3, 4, 9], [2, 2]].map((r) => Uint32Array.from(r));
      await writeCorpusCache(`${dir}/corpus.bin`, rows);
      const xz = await new Deno.Command("xz", { args: ["-k", `${dir}/corpus.bin`] }).output();
      const files = xz.success ? ["corpus.bin", "corpus.bin.xz"] : ["corpus.bin"];
      for (const f of files) {
        const got = await py(
          `import pretrain_torch as p; print(json.dumps([r.tolist() for r in p.read_rows(${
            JSON.stringify(`${dir}/${f}`)
          })]))`,
        );
        assertEquals(got, rows.map((r) => [...r]), f);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
    const total = 3262, steps = [0, 1, 99, 100, 101, 1000, 2000, 3261];
    const lrs = await py(
      `import pretrain_torch as p; print(json.dumps([p.lr_at(s, 6e-4, ${total}) for s in ${JSON.stringify(steps)}]))`,
    ) as number[];
    steps.forEach((s, i) => {
      const want = learningRate(s, { base: 6e-4, warmupSteps: 100, totalSteps: total, decay: "cosine", minRatio: 0.1 });
      assert(Math.abs(lrs[i] - want) <= 1e-12, `step ${s}: ${lrs[i]} vs ${want}`);
    });
    const shipped = JSON.parse(await Deno.readTextFile(`${root}public/model/config.json`));
    assertEquals(await py(`import pretrain_torch as p; print(json.dumps(p.config_json("16m")))`), shipped);
  },
});
