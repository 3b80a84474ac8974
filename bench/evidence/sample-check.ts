// Where do sampled answers go wrong? (issue 18, 2026-12-04.) On the H200 the cold-started demo policy answered greedily
// with chains (96 of 96, 21.9% correct) but its samples at temperature 1 (GRPO, PRM data, self-consistency at 0.8) broke
// at the second token of "WITH" in nearly every answer ("```sql\nW" + a random token, then the chain): 1 correct of 320
// GRPO samples, 2 correct chains of 383 for the PRM. This tool separates the two explanations: the policy's distribution
// really is broad there (then the WGSL trainer's teacher-forced entropy at that position is high too), or the sampling
// path draws from other logits than the model's (then the sampler's log-probabilities differ from the trainer's).
//
// For each prompt: greedy answer; n samples at temperature 1 with each sampler (cpu: logits read back and drawn on the
// host; gpu: the choice on the GPU; captured: ORT graph capture plus the GPU choice); for every answer, each of its first
// `show` tokens with the sampler's log-probability, the trainer's teacher-forced one and the trainer's entropy at that
// position. Prints a table per prompt and a summary; writes everything as JSON.
//
//   deno run -A bench/evidence/sample-check.ts --model DIR [--adapter PEFT_DIR] --prompts FILE --out FILE [--n 8]
//     [--new 24] [--show 8] [--temperature 1] [--samplers cpu,gpu,captured] [--webgpu dawn|deno]
// FILE: a JSON array of prompt strings as the model sees them (chat template applied; special tokens as text), e.g. the
// `prompt` field of a run's samples.jsonl. bench/evidence/h200.sh `diag` runs it after the diag notebook's cold start.
import { parseArgs } from "node:util";
import { selectWebGpuFromArgs } from "../../src/gpu/engine.deno.ts";

const argv = [...Deno.args];
const { rest } = await selectWebGpuFromArgs(argv);
const names = ["model", "adapter", "prompts", "out", "n", "new", "show", "temperature", "samplers"] as const;
const a = parseArgs({ args: rest, options: Object.fromEntries(names.map((k) => [k, { type: "string" as const }])) })
  .values as Partial<Record<(typeof names)[number], string>>;
if (!a.model || !a.prompts || !a.out) {
  console.error(
    "usage: sample-check.ts --model DIR [--adapter PEFT_DIR] --prompts FILE --out FILE [--n 8] [--new 24] [--show 8] [--temperature 1] [--samplers cpu,gpu,captured]",
  );
  Deno.exit(2);
}
// Imported after the engine is chosen: nothing may ask for a GPU before.
const { requestGpu } = await import("../../src/gpu/device.ts");
const { destroyModel, uploadModel, uploadAdapter, destroyAdapter } = await import("../../src/gpu/model/state.ts");
const { batchLogprobs } = await import("../../src/gpu/trainer/logprobs.ts");
const { loadHfModel } = await import("../../src/model/hf.ts");
const { readPeftAdapter } = await import("../../src/model/peft.ts");
const { OrtPolicy } = await import("../../src/model/policy.ts");
const { DEFAULT_SAMPLING, sampleBatch } = await import("../../src/model/sampler.ts");
const { sampleBatchGpu } = await import("../../src/model/sampler-gpu.ts");
const { DirSource } = await import("../../src/model/source.deno.ts");

const n = Number(a.n ?? 8),
  maxNew = Number(a.new ?? 24),
  show = Number(a.show ?? 8),
  temperature = Number(a.temperature ?? 1);
const samplers = (a.samplers ?? "cpu,gpu,captured").split(",") as ("cpu" | "gpu" | "captured")[];
const gpu = await requestGpu();
const hf = await loadHfModel(new DirSource(a.model));
const adapter = a.adapter ? await readPeftAdapter(new DirSource(a.adapter), hf.config) : null;
const promptTexts: string[] = JSON.parse(await Deno.readTextFile(a.prompts));
const prompts = promptTexts.map((t) => hf.tokenizer.encode(t));
const maxLen = Math.max(...prompts.map((p) => p.length));
const policy = await OrtPolicy.create(hf.config, hf.weights, {
  maxPositions: Math.min(hf.config.maxPositionEmbeddings, maxLen + maxNew),
  device: gpu.device,
  logitsOnGpu: true,
  loraTargets: adapter?.targets ?? [],
  keepPrepared: true,
  onNote: (m) => console.error(m),
});
if (adapter) policy.setAdapter(adapter, a.adapter ?? null);
const trainer = uploadModel(gpu.device, hf.config, hf.weights, {});
const lora = adapter ? uploadAdapter(gpu.device, hf.config, adapter) : undefined;
const dec = (ids: readonly number[]) => (ids.length ? hf.tokenizer.decode(ids) : "");
const tokText = (id: number) => JSON.stringify(dec([id])).slice(1, -1);

interface Row {
  sampler: string;
  prompt: number;
  text: string;
  tokens: number[];
  samplerLogp: number[];
  trainerLogp: number[];
  trainerEntropy: number[];
}
const rows: Row[] = [];
for (const mode of ["greedy", ...samplers] as const) {
  const params = {
    ...DEFAULT_SAMPLING,
    maxNewTokens: maxNew,
    eosTokenIds: hf.config.eosTokenIds,
    temperature: mode === "greedy" ? 0 : temperature,
    seed: 11,
  };
  const k = mode === "greedy" ? 1 : n;
  const t0 = performance.now();
  const got = mode === "cpu" ? await sampleBatch(policy, prompts, k, params, dec) : await sampleBatchGpu(
    policy,
    prompts,
    k,
    params,
    dec,
    undefined,
    undefined,
    mode === "greedy" ? "captured" : mode,
  );
  const seqs = got.map((s) => [...prompts[s.prompt], ...s.tokens]);
  const tf = await batchLogprobs(trainer, seqs, lora);
  for (const [i, s] of got.entries()) {
    const p = prompts[s.prompt].length,
      at = (x: Float32Array) => Array.from(x.subarray(i * tf.T + p - 1, i * tf.T + p - 1 + s.tokens.length));
    rows.push({
      sampler: mode,
      prompt: s.prompt,
      text: s.text,
      tokens: s.tokens,
      samplerLogp: s.logprobs,
      trainerLogp: at(tf.logp),
      trainerEntropy: at(tf.entropy),
    });
  }
  console.error(`${mode}: ${got.length} answers in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// Per prompt: the greedy answer's first tokens and, per sampler, how its samples' tokens compare position by position.
const summary: Record<string, unknown>[] = [];
for (let p = 0; p < prompts.length; p++) {
  const g = rows.find((r) => r.sampler === "greedy" && r.prompt === p)!;
  console.log(`\n## prompt ${p} (${prompts[p].length} tokens); greedy: ${JSON.stringify(g.text.slice(0, 80))}`);
  console.log(
    `pos | greedy token | trainer logp | trainer entropy | ` +
      samplers.map((s) => `${s}: = greedy, mean trainer entropy, mean |sampler - trainer|`).join(" | "),
  );
  for (let k = 0; k < Math.min(show, g.tokens.length); k++) {
    const cols = samplers.map((s) => {
      const rs = rows.filter((r) => r.sampler === s && r.prompt === p && r.tokens.length > k);
      const same = rs.filter((r) => r.tokens[k] === g.tokens[k]).length;
      const ent = rs.reduce((x, r) => x + r.trainerEntropy[k], 0) / Math.max(1, rs.length);
      const gap = rs.reduce((x, r) => x + Math.abs(r.samplerLogp[k] - r.trainerLogp[k]), 0) / Math.max(1, rs.length);
      const others = rs.filter((r) => r.tokens[k] !== g.tokens[k]).slice(0, 3).map((r) =>
        `"${tokText(r.tokens[k])}" ${r.samplerLogp[k].toFixed(1)}`
      );
      summary.push({
        prompt: p,
        pos: k,
        sampler: s,
        sameAsGreedy: same,
        of: rs.length,
        meanTrainerEntropy: ent,
        meanAbsSamplerMinusTrainer: gap,
      });
      return `${same}/${rs.length}, ${ent.toFixed(3)}, ${gap.toExponential(1)}${
        others.length ? ` (else ${others.join(", ")})` : ""
      }`;
    });
    console.log(
      `${k} | "${tokText(g.tokens[k])}" | ${g.trainerLogp[k].toFixed(4)} | ${g.trainerEntropy[k].toFixed(4)} | ${
        cols.join(" | ")
      }`,
    );
  }
}
let worst = 0;
for (const r of rows) r.samplerLogp.forEach((v, k) => (worst = Math.max(worst, Math.abs(v - r.trainerLogp[k]))));
console.log(`\nmax |sampler logp - trainer logp| over all ${rows.length} answers: ${worst.toExponential(2)}`);
await Deno.writeTextFile(
  a.out,
  JSON.stringify(
    {
      model: a.model,
      adapter: a.adapter ?? null,
      n,
      maxNew,
      temperature,
      samplers,
      maxAbsSamplerMinusTrainer: worst,
      summary,
      rows,
    },
    null,
    1,
  ),
);
if (lora) destroyAdapter(lora);
destroyModel(trainer);
await policy.release();
console.log(JSON.stringify({ ok: true, out: a.out, answers: rows.length, maxAbsSamplerMinusTrainer: worst }));
