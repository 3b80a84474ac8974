// Benchmark (not a test): where a real `rlvr run` decode batch spends its time. The shipped demo
// model (public/model, real weights) through the recipe's ModelRuntime (dtype f32, LoRA r=16
// alpha 32 on every target with the zero-B adapter a fresh run starts from), sampled exactly as
// ModelRuntime.sample does (sampleBatch on its OrtPolicy, the model's EOS ids, the tokenizer's
// decode), greedy as the evaluate cell's first pass. Prompts are seeded random token ids of
// promptLen +- spread tokens (left padding as in a real batch). Per batch it prints the wall time
// by part: prefill, repeating the cache, the decoding steps' policy.step (feed building vs
// session.run, which includes the logits read-back), token choice, dropping finished rows, and
// what is left between steps; and the step time over the first and the last tenth of the steps.
// Usage: deno run -A bench/step-real.bench.ts [batches=16,64] [promptLen=700] [spread=100] [newTokens=160]
//          [lora=1] [eos=1] [warm=1] [model=public/model] [out=FILE.json] [budget=SECONDS] [attention=explicit|gqa]
//          [sampler=cpu|gpu|captured] [dtype=f32|q4]
// sampler (default RLVR_SAMPLER, else cpu) picks where tokens are chosen (src/model/sampler-gpu.ts); the
// runtime's own default is captured. Calls per decoding step are counted over whole decoding steps.
// attention picks the policy graph's attention operators (docs/policy.md, "Decoding step, round 3").
// eos=0 leaves the EOS ids out, so every row runs to newTokens (a fixed shape for A/B runs).
// budget (default 100): once the process has run that long, the current batch stops after its
// step and is reported with the steps it made ("partial"); later batch sizes are skipped.
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { loadHfModel } from "../src/model/hf.ts";
import { LORA_TARGETS } from "../src/model/lora.ts";
import { ATTENTION_KINDS, type AttentionKind } from "../src/model/onnx/decoder.ts";
import type { PolicyTiming } from "../src/model/policy.ts";
import { DEFAULT_SAMPLING, newSampleTiming, sampleBatch, type SampleTiming } from "../src/model/sampler.ts";
import { sampleBatchGpu, SAMPLERS, samplerFromEnv } from "../src/model/sampler-gpu.ts";
import { WEIGHT_DTYPES } from "../src/model/onnx/decoder.ts";
import { DirSource } from "../src/model/source.deno.ts";
import { ModelRuntime } from "../src/runtime/recipe/model-runtime.ts";
import { type CallCounts, diffCalls, installCallCounter, snapshotCalls } from "./webgpu-calls.ts";

const named = Object.fromEntries(benchArgs.map((a) => a.split("=") as [string, string]));
const batches = (named.batches ?? "16,64").split(",").map(Number);
const promptLen = Number(named.promptLen ?? 700), spread = Number(named.spread ?? 100), newTokens = Number(named.newTokens ?? 160);
const lora = (named.lora ?? "1") === "1", eos = (named.eos ?? "1") === "1", warm = (named.warm ?? "1") === "1";
const dir = named.model ?? "public/model";
const budgetS = Number(named.budget ?? 100);
// Left out: the policy's default.
const attention = named.attention as AttentionKind | undefined;
const sampler = SAMPLERS.find((x) => x === (named.sampler ?? samplerFromEnv() ?? "cpu"));
if (!sampler) throw new Error(`sampler: one of ${SAMPLERS.join(", ")}`);
const dtype = WEIGHT_DTYPES.find((d) => d === (named.dtype ?? "f32"));
if (!dtype) throw new Error(`dtype: one of ${WEIGHT_DTYPES.join(", ")}`);
if (attention !== undefined && !ATTENTION_KINDS.includes(attention)) throw new Error(`attention: one of ${ATTENTION_KINDS.join(", ")}`);
const tStart = performance.now();
class OutOfBudget extends Error {}
if (batches.some((b) => !Number.isInteger(b) || b < 1) || !(promptLen > spread && spread >= 0) || !(newTokens >= 2)) {
  throw new Error("batches: positive integers; promptLen > spread >= 0; newTokens >= 2");
}

// WebGPU calls per decoding step (and the host time inside them), counted before any device exists.
const calls = installCallCounter();
let t0 = performance.now();
const hf = await loadHfModel(new DirSource(dir));
const maxPositions = Math.min(hf.config.maxPositionEmbeddings, promptLen + spread + newTokens);
const rt = await ModelRuntime.create({ ...hf, name: dir }, () => Promise.reject(new Error("no trainer in this benchmark")), {
  dtype, loraRank: 16, loraAlpha: 32, seed: 0, targets: lora ? LORA_TARGETS : [], maxPositions, attention, sampler,
});
const policy = rt.policy;
console.log(`${dir}: ${hf.config.numLayers} layers, hidden ${hf.config.hiddenSize}, vocab ${hf.config.vocabSize}; ${dtype} on ${policy.provider}, ` +
  `LoRA ${lora ? "r=16 on every target" : "none"}, attention ${policy.attention}, sampler ${rt.sampler}; model + session ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const sampleRun = (prompts: number[][], p: typeof params, onProgress?: Parameters<typeof sampleBatch>[5], timing?: SampleTiming) =>
  rt.sampler === "cpu" ? sampleBatch(policy, prompts, 1, p, decode, onProgress, timing) : sampleBatchGpu(policy, prompts, 1, p, decode, onProgress, timing, rt.sampler);
const V = hf.config.vocabSize;
const rng = new Rng(11);
const params = { ...DEFAULT_SAMPLING, temperature: 0, maxNewTokens: newTokens, stop: [], eosTokenIds: eos ? hf.config.eosTokenIds : [] };
const decode = (ids: readonly number[]) => rt.decode(ids);
const f = (x: number) => x.toFixed(1);
const runs: unknown[] = [];

for (const B of batches) {
  const prompts = Array.from({ length: B }, () => Array.from({ length: promptLen - spread + rng.int(2 * spread + 1) }, () => rng.int(V)));
  // Warm-up: shader compilation for the shapes the measured run meets.
  if (warm) await sampleRun(prompts, { ...params, maxNewTokens: 2 });
  const timing: SampleTiming = newSampleTiming();
  const pt: PolicyTiming = { runs: 0, feedsMs: 0, runMs: 0 };
  policy.timing = pt;
  let prefillPolicy: PolicyTiming = { ...pt };
  let callsAtStep1: CallCounts = snapshotCalls(calls), callsAtLast: CallCounts = callsAtStep1;
  let stepsAt1 = 0, stepsAtLast = 0;
  const stepAt: number[] = [];
  const rowsAt: number[] = [];
  let rowsLeft = B;
  const tBatch = performance.now();
  let samples: { tokens: number[]; finishReason: string }[] = [];
  let partial = false;
  try {
    samples = await sampleRun(prompts, params, (p) => {
      if (p.step === 1) {
        prefillPolicy = { ...pt };
        callsAtStep1 = snapshotCalls(calls);
        stepsAt1 = timing.steps;
      }
      callsAtLast = snapshotCalls(calls);
      stepsAtLast = timing.steps;
      stepAt.push(performance.now());
      rowsAt.push(rowsLeft);
      rowsLeft = p.total - p.finished;
      if ((performance.now() - tStart) / 1000 > budgetS && p.step < newTokens && p.finished < p.total) throw new OutOfBudget(`budget of ${budgetS} s reached after ${p.step} tokens`);
    }, timing);
  } catch (e) {
    if (!(e instanceof OutOfBudget)) throw e;
    console.log(`batch ${B}: ${e.message}; reporting the steps made`);
    partial = true;
    timing.totalMs = performance.now() - tBatch;
  }
  policy.timing = null;
  // Whole decoding steps between the first and the last progress call (the captured sampler runs one ahead).
  const stepCalls = diffCalls(callsAtStep1, callsAtLast);
  const countedSteps = Math.max(1, stepsAtLast - stepsAt1);
  const steps = timing.steps;
  const stepPolicy = { runs: pt.runs - prefillPolicy.runs, feedsMs: pt.feedsMs - prefillPolicy.feedsMs, runMs: pt.runMs - prefillPolicy.runMs };
  const between = timing.totalMs - timing.prefillMs - timing.repeatMs - timing.stepMs - timing.chooseMs - timing.stopMs - timing.selectMs;
  // Step k's wall time: from the progress call after token k to the one after token k+1 (one policy.step, one choice).
  const gaps = stepAt.slice(1).map((t, i) => t - stepAt[i]);
  const tenth = Math.max(1, Math.floor(gaps.length / 10));
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / Math.max(1, xs.length);
  const tokens = partial ? stepAt.length * B : samples.reduce((s, x) => s + x.tokens.length, 0);
  const reasons = samples.reduce((m, s) => ({ ...m, [s.finishReason]: (m[s.finishReason] ?? 0) + 1 }), {} as Record<string, number>);
  const lens = prompts.map((p) => p.length);
  const run = {
    batch: B, partial, promptTokens: { min: Math.min(...lens), max: Math.max(...lens) }, newTokens, tokens, steps, finish: reasons,
    totalMs: timing.totalMs, prefillMs: timing.prefillMs, prefillFeedsMs: prefillPolicy.feedsMs, prefillRunMs: prefillPolicy.runMs, repeatMs: timing.repeatMs,
    stepMs: timing.stepMs, stepFeedsMs: stepPolicy.feedsMs, stepRunMs: stepPolicy.runMs, chooseMs: timing.chooseMs, stopMs: timing.stopMs,
    selectMs: timing.selectMs, betweenMs: between, msPerStep: timing.stepMs / Math.max(1, steps),
    firstTenthMsPerStep: mean(gaps.slice(0, tenth)), lastTenthMsPerStep: mean(gaps.slice(-tenth)),
    rowsFirstTenth: mean(rowsAt.slice(1, 1 + tenth)), rowsLastTenth: mean(rowsAt.slice(-tenth)),
    webgpuCallsPerStep: Object.fromEntries(Object.entries(stepCalls).map(([k, v]) => [k, { calls: v.calls / countedSteps, ms: v.ms / countedSteps }])),
  };
  runs.push(run);
  const per = (x: number) => f(x / Math.max(1, steps));
  console.log(
    `batch ${B}, prompts ${run.promptTokens.min}-${run.promptTokens.max} tokens, ${tokens} tokens in ${steps + 1} forward runs (${JSON.stringify(reasons)}): total ${f(timing.totalMs)} ms\n` +
      `  prefill ${f(timing.prefillMs)} ms (feeds ${f(prefillPolicy.feedsMs)}, session.run ${f(prefillPolicy.runMs)}); repeat cache ${f(timing.repeatMs)} ms\n` +
      `  decoding steps: policy.step ${per(timing.stepMs)} ms/step (feeds ${per(stepPolicy.feedsMs)}, session.run ${per(stepPolicy.runMs)}, rest of step ${per(timing.stepMs - stepPolicy.feedsMs - stepPolicy.runMs)}); ` +
      `choose ${per(timing.chooseMs)} ms/step; stop strings ${per(timing.stopMs)}; drop rows ${f(timing.selectMs)} ms in all; between steps + final decode ${f(between)} ms in all\n` +
      `  step wall time: first tenth ${f(run.firstTenthMsPerStep)} ms (${f(run.rowsFirstTenth)} rows), last tenth ${f(run.lastTenthMsPerStep)} ms (${f(run.rowsLastTenth)} rows)\n` +
      `  WebGPU calls per decoding step (calls, ms inside): ` +
      Object.entries(run.webgpuCallsPerStep).map(([k, v]) => `${k.replace(/^GPU/, "")} ${v.calls.toFixed(0)} (${v.ms.toFixed(1)})`).join(", "),
  );
  if (named.out) await Deno.writeTextFile(named.out, JSON.stringify({ webgpu, model: dir, dtype, sampler: rt.sampler, provider: policy.provider, attention: policy.attention, lora, eos, promptLen, spread, runs }, null, 1));
  if (partial) break;
}
await rt.release();
Deno.exit(0);
