// The decode suite's process for our side (bench/suites/decode.ts runs it; bench/run.ts does not): the captured
// sampler (src/model/sampler-gpu.ts) on the ORT policy of a random model, batched prefill, first-token latency and
// decoding. One session serves every batch size listed (its positions cover prompt + new).
// Usage: deno run -A bench/suites/decode-ours.ts [--webgpu dawn|deno] PRESET DTYPE PROMPTS G PROMPT_LEN NEW 0 OUT.json
//          BUDGET [pending=16,1024] [reps=1]
//   PROMPTS: a list of prompt counts (8,64); each runs G samples per prompt, so batch = PROMPTS x G. The 0 and
//   `sampler=captured` of earlier versions' arguments are accepted (no LoRA, the captured sampler: nothing else runs).
//   pending: the WebGPU EP's dispatches per queue submit (onnxruntime's maxNumPendingDispatches, ort.ts
//   setWebgpuSessionEntries), a run per value; reps: the whole list of runs that many times, alternated.
//   BUDGET (s) stops the whole process: the run in progress reports its steps ("partial"), later runs are skipped.
// Each run makes its captured sessions (the prefill's, then the decoder's for its batch) before its warm-up and times
// them apart. First token = a sampleBatchGpu with maxNewTokens 1 (prefill + one sampled token), median of 3, as
// transformers' generate(max_new_tokens=1) in bench/torch/generate.py. Every row runs to length (no EOS, no stop
// strings). Every run counts the WebGPU calls per decoding step. JSON goes to OUT.json after every run.
// The other samplers, the policy's own prefill, accuracy levels and the agreement check are in bench/decode.bench.ts
// at 7615547.
import { args as benchArgs, webgpu } from "../engine.ts";
import { Rng } from "../../src/core/rng.ts";
import { PreparedWeights, WEIGHT_DTYPES } from "../../src/model/onnx/decoder.ts";
import { PENDING_DISPATCHES_KEY, setWebgpuSessionEntries } from "../../src/model/onnx/ort.ts";
import { OrtPolicy } from "../../src/model/policy.ts";
import { DEFAULT_SAMPLING, newSampleTiming } from "../../src/model/sampler.ts";
import { sampleBatchGpu } from "../../src/model/sampler-gpu.ts";
import { makeTinyModel } from "../../src/model/tiny.ts";
import { SHAPES } from "../shapes.ts";
import { diffCalls, installCallCounter, snapshotCalls } from "../webgpu-calls.ts";

const named = Object.fromEntries(
  benchArgs.filter((a) => /^[a-zA-Z]+=/.test(a)).map((a) => a.split("=") as [string, string]),
);
const [
  preset = "tiny",
  dtypeArg = "q4",
  pArg = "4",
  gArg = "1",
  lenArg = "64",
  newArg = "32",
  lora = "0",
  out = "",
  b,
] = benchArgs.filter((a) => !/^[a-zA-Z]+=/.test(a));
if (lora !== "0" || (named.sampler ?? "captured") !== "captured") throw new Error("no LoRA, the captured sampler only");
if (!(preset in SHAPES)) throw new Error(`preset: one of ${Object.keys(SHAPES).join(", ")}`);
const dtype = WEIGHT_DTYPES.find((d) => d === dtypeArg);
if (!dtype) throw new Error(`dtype must be one of ${WEIGHT_DTYPES.join(", ")}`);
const pendings: (number | null)[] = named.pending ? named.pending.split(",").map(Number) : [null];
if (pendings.some((v) => v !== null && !(Number.isInteger(v) && v >= 1 && v <= 4096))) {
  throw new Error(`pending must be integers 1..4096, got ${named.pending}`);
}
const reps = Number(named.reps ?? 1);
const promptCounts = pArg.split(",").map(Number);
const G = Number(gArg), promptLen = Number(lenArg), newTokens = Number(newArg), budgetS = Number(b ?? Infinity);
if (
  !(Number.isInteger(reps) && reps >= 1) || promptCounts.some((p) => !Number.isInteger(p) || p < 1) || !(G >= 1) ||
  !(promptLen >= 1) || !(newTokens >= 2)
) throw new Error("reps >= 1, prompts positive integers (a comma list), G >= 1, promptLen >= 1, newTokens >= 2");

const calls = installCallCounter();
const tStart = performance.now();
const seconds = (t: number) => (performance.now() - t) / 1000;
class OutOfBudget extends Error {}
const runs: unknown[] = [];
const results: Record<string, unknown> = { webgpu, sampler: "captured", preset, dtype, G, promptLen, newTokens, runs };
const save = async () => {
  if (out) await Deno.writeTextFile(out, JSON.stringify(results, null, 1));
};

let t0 = performance.now();
const m = makeTinyModel("qwen2", {
  seed: 1,
  ...SHAPES[preset as keyof typeof SHAPES],
  tieWordEmbeddings: true,
});
results.params = [...m.weights.values()].reduce((s, t) => s + t.data.length, 0);
results.modelSeconds = seconds(t0);
t0 = performance.now();
const policy = await OrtPolicy.create(m.config, m.weights, {
  dtype,
  maxPositions: promptLen + newTokens,
  logitsOnGpu: true,
  prepared: new PreparedWeights(), // one quantisation for every captured session of this process
});
results.sessionSeconds = seconds(t0);
results.provider = policy.provider;
const captured = await policy.capturedOk();
const capturedPrefill = captured && await policy.capturedPrefillOk();
Object.assign(results, { captured, capturedPrefill });
console.log(
  `${preset} ${dtype}: ${(results.params as number / 1e6).toFixed(1)}M parameters, session ${
    (results.sessionSeconds as number).toFixed(1)
  } s on ${policy.provider}, attention ${policy.attention}; captured decoding ${captured ? "passes" : "FAILS"} its ` +
    `check (else the gpu sampler runs), the captured prefill ${capturedPrefill ? "passes" : "FAILS"}`,
);
await save();

const rng = new Rng(3);
const noStop = { ...DEFAULT_SAMPLING, temperature: 1, eosTokenIds: [], stop: [] };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perCall = (c: ReturnType<typeof diffCalls>, n: number) =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [k.replace(/^GPU/, ""), { calls: v.calls / n, ms: v.ms / n }]));
let stop = false;
for (const P of promptCounts) {
  if (stop) break;
  const prompts = Array.from({ length: P }, () => Array.from({ length: promptLen }, () => rng.int(m.config.vocabSize)));
  const batch = P * G;
  for (const pending of Array.from({ length: reps }, () => pendings).flat()) {
    // Before this run's captured sessions are made.
    if (pending !== null) setWebgpuSessionEntries({ [PENDING_DISPATCHES_KEY]: String(pending) });
    let prefillSessionSeconds: number | null = null, capturedSessionSeconds: number | null = null;
    if (captured) {
      await policy.releaseCaptured();
      let tc = performance.now();
      if (capturedPrefill) {
        await policy.capturedPrefill(P, promptLen);
        prefillSessionSeconds = seconds(tc);
        tc = performance.now();
      }
      await policy.capturedDecoder(batch, promptLen + newTokens);
      capturedSessionSeconds = seconds(tc);
    }
    type Progress = Parameters<typeof sampleBatchGpu>[5];
    const sample = (n: number, seed = 0, onProgress?: Progress, timing = newSampleTiming()) =>
      sampleBatchGpu(
        policy,
        prompts,
        G,
        { ...noStop, maxNewTokens: n, seed },
        () => "",
        onProgress,
        timing,
        "captured",
      );
    await sample(2); // warm-up: shader compilation for every shape the measured run meets
    const first: number[] = [];
    for (let i = 0; i < 3; i++) {
      const s = performance.now();
      await sample(1, 10 + i);
      first.push(seconds(s));
    }
    // The decoding steps' calls: between the second progress call and the last (the captured sampler runs one step
    // ahead, so the counted steps are the timing's, not the progress calls').
    const timing = newSampleTiming();
    let firstStep = 0, steps = 0, generated = 0, stepsAt2 = 0, stepsAtLast = 0;
    let callsAt2 = snapshotCalls(calls), callsAtLast = callsAt2;
    t0 = performance.now();
    let samples: { tokens: number[] }[] | null = null;
    try {
      samples = await sample(newTokens, 1, (p) => {
        if (p.step === 1) firstStep = performance.now();
        if (p.step === 2) [callsAt2, stepsAt2] = [snapshotCalls(calls), timing.steps];
        [callsAtLast, stepsAtLast, steps, generated] = [snapshotCalls(calls), timing.steps, p.step, p.tokens];
        if (seconds(tStart) > budgetS && p.step < newTokens) {
          throw new OutOfBudget(`budget of ${budgetS} s reached after ${p.step} steps`);
        }
      }, timing);
    } catch (e) {
      if (!(e instanceof OutOfBudget)) throw e;
      console.log(`batch ${batch}: ${e.message}; reporting the steps made`);
    }
    const total = seconds(t0), decodeS = seconds(firstStep);
    const tokens = samples ? samples.reduce((s, x) => s + x.tokens.length, 0) : generated;
    if (samples && tokens !== batch * newTokens) {
      console.log(`warning: ${tokens} tokens, expected ${batch * newTokens}`);
    }
    const perStep = perCall(diffCalls(callsAt2, callsAtLast), Math.max(1, stepsAtLast - stepsAt2));
    const run = {
      ran: !captured ? "gpu" : capturedPrefill ? "captured" : "captured/policy-prefill",
      pending,
      prompts: P,
      batch,
      tokens,
      steps,
      partial: samples === null,
      seconds: total,
      tokensPerSecond: tokens / total,
      prefillSessionSeconds,
      capturedSessionSeconds,
      webgpuCallsPerStep: perStep,
      decodeTokensPerSecond: (tokens - batch) / decodeS,
      msPerStep: decodeS * 1000 / Math.max(1, steps - 1),
      firstTokenSeconds: median(first),
      firstTokenAll: first,
    };
    runs.push(run);
    console.log(
      `[${run.ran}${
        pending !== null ? `, pending ${pending}` : ""
      }] batch ${batch} (${P} x G ${G}), prompt ${promptLen}, ${
        run.partial ? `${steps} of ` : ""
      }${newTokens} new: decode ${run.decodeTokensPerSecond.toFixed(0)} tok/s (${run.msPerStep.toFixed(1)} ms/step), ` +
        `first token ${(run.firstTokenSeconds * 1000).toFixed(0)} ms; WebGPU calls per step: ${
          Object.entries(perStep).map(([k, v]) => `${k} ${v.calls.toFixed(1)}`).join(", ")
        }`,
    );
    await save();
    if (run.partial) {
      stop = true;
      break;
    }
  }
}
console.log(JSON.stringify(results));
await policy.release();
Deno.exit(0);
