// Benchmark (not a test): the recipe's whole GRPO step, split by phase (sample, score, train), as the
// demo notebook runs it: notebooks/demo.json's dataset, model, prompt, reward and GRPO cells (batchQuestions
// 4, G 8, 160 new tokens), the evaluations left out, run in process by the recipe's runner for `steps`
// steps; the times come from the metrics records the GRPO cell writes (ms.sample / .score / .train).
// The first step also compiles shaders and (captured sampler) makes the captured session: reported
// apart, the mean over the later steps is the step's cost.
// Usage: deno run -A bench/grpo-step.bench.ts [--webgpu dawn|deno] [steps=4] [model=public/model] [dtype=f32|q4]
//          [sampler=cpu|gpu|captured] [newTokens=160] [out=FILE.json]
// model: any model folder (bench/demo-shape-model.ts writes random ones of the demo's or Qwen2.5-0.5B's
// shape with the demo tokenizer); sampler: the runtime's token choice (sets RLVR_SAMPLER; default captured).
import { args as benchArgs, webgpu } from "./engine.ts";
import { resolve } from "node:path";
import { decodeMetrics } from "../src/core/metrics.ts";
import { parseNotebook } from "../src/core/notebook.ts";
import { denoEnv } from "../src/runtime/recipe/env.deno.ts";
import { runNotebook } from "../src/runtime/recipe/runner.ts";

const named = Object.fromEntries(benchArgs.map((a) => a.split("=") as [string, string]));
const steps = Number(named.steps ?? 4);
const model = resolve(named.model ?? "public/model");
const dtype = named.dtype ?? "f32";
if (named.sampler) Deno.env.set("RLVR_SAMPLER", named.sampler);
if (!(Number.isInteger(steps) && steps >= 2)) throw new Error("steps: an integer >= 2");

const demo = JSON.parse(await Deno.readTextFile("notebooks/demo.json")) as {
  cells: { id: string; type: string; params: Record<string, unknown> }[];
};
const keep = new Set(["gpu", "dataset", "model", "prompt", "reward", "grpo"]);
const cells = demo.cells.filter((c) => keep.has(c.type)).map((c) =>
  c.type === "grpo"
    ? {
      ...c,
      params: {
        ...c.params,
        steps,
        evalEvery: 0,
        ...(named.newTokens ? { maxNewTokens: Number(named.newTokens) } : {}),
      },
    }
    : c.type === "model"
    ? { ...c, params: { ...c.params, dtype } }
    : c
);
const parsed = parseNotebook({ ...demo, cells });
if (!parsed.ok) throw new Error(`notebook: ${JSON.stringify(parsed.errors)}`);
const grpo = cells.find((c) => c.type === "grpo")?.params ?? {};
const out = await Deno.makeTempDir({ prefix: "grpo-step-" });
const env = denoEnv({ out, base: resolve("notebooks"), onLog: () => {} });
const t0 = performance.now();
await runNotebook(parsed.doc, env, {
  modelOverride: model,
  opts: { maxSteps: steps, seed: 1 },
  onLog: (m) => console.error(m),
});
const wall = (performance.now() - t0) / 1000;
const records = decodeMetrics(await Deno.readTextFile(`${out}/metrics.jsonl`)).records.filter((r) =>
  r.phase === "grpo"
);
const rows = records.map((r) => ({
  step: r.step,
  sample: r.ms?.sample ?? 0,
  score: r.ms?.score ?? 0,
  train: r.ms?.train ?? 0,
  sampleTokens: (r.tokensPerSec?.sample ?? 0) * (r.ms?.sample ?? 0) / 1000,
}));
const later = rows.slice(1);
const mean = (k: "sample" | "score" | "train") => later.reduce((s, r) => s + r[k], 0) / Math.max(1, later.length);
const result = {
  webgpu,
  model,
  dtype,
  sampler: Deno.env.get("RLVR_SAMPLER") ?? "captured",
  batchQuestions: grpo.batchQuestions,
  G: grpo.G,
  maxNewTokens: grpo.maxNewTokens,
  steps: rows,
  first: rows[0],
  meanLater: {
    sample: mean("sample"),
    score: mean("score"),
    train: mean("train"),
    total: mean("sample") + mean("score") + mean("train"),
  },
  wallSeconds: wall,
};
const f = (x: number) => (x / 1000).toFixed(2);
for (const r of rows) {
  console.log(
    `grpo step ${r.step}: sample ${f(r.sample)} s (${r.sampleTokens.toFixed(0)} tokens), score ${f(r.score)} s, train ${
      f(r.train)
    } s; total ${f(r.sample + r.score + r.train)} s`,
  );
}
console.log(
  `mean of steps 2-${rows.length}: sample ${f(result.meanLater.sample)} s, score ${
    f(result.meanLater.score)
  } s, train ${f(result.meanLater.train)} s, total ${
    f(result.meanLater.total)
  } s (${webgpu}, sampler ${result.sampler}, ${dtype}, ${model})`,
);
if (named.out) await Deno.writeTextFile(named.out, JSON.stringify(result, null, 1));
await Deno.remove(out, { recursive: true });
Deno.exit(0);
