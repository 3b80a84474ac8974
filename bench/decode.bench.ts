// Benchmark (not a test): the ORT policy on onnxruntime-web's WebGPU EP — graph build and session
// time, batched prefill, first-token latency and decoding with the KV cache in GPU buffers, for a
// random model shape. One session serves every batch size listed (its positions cover prompt + new).
// Usage: deno run -A bench/decode.bench.ts [preset=tiny|small|qwen2.5-0.5b] [dtype=f32|f16|q4] [prompts=4 or a list 8,64]
//          [G=4] [promptLen=64] [newTokens=32] [lora=0|1] [out.json] [budget=SECONDS]
//          [sampler=cpu|gpu|captured or a list cpu,gpu,captured] [prefill=captured|policy or captured,policy] [acc=0|4] [agree=N] [--webgpu dawn|deno]
//          [pending=16,1024] [reps=1]
// pending (named): the WebGPU EP's dispatches per queue submit (onnxruntime's maxNumPendingDispatches, ort.ts
// setWebgpuSessionEntries) for each captured run's sessions, a run per value (a list alternates them); default: as
// RLVR_ORT_PENDING_DISPATCHES or onnxruntime's own. reps (named): the whole list of runs that many times, alternated.
// prefill (named): how sampler=captured prefills: "captured" (the default where its check passes on the device:
// CapturedPrefill, the prompts under graph capture, its session made before the warm-up and timed apart) or
// "policy" (the policy's own graph, RLVR_CAPTURED_PREFILL=0); a list runs captured decoding once per mode.
// acc (named): q4 graphs' MatMulNBits accuracy level (policy.ts q4Accuracy; 4: int8 activations through ORT's DP4A
// kernel where it applies); default RLVR_Q4_ACCURACY, else 0. agree=N (named): after the runs, the first N samples of
// the last complete run scored teacher-forced by a second session at accuracy 0 (same weights, logits on the CPU):
// how far the sampled log-probabilities are from the f32-activation graph's (max and mean |difference|).
// sampler (named, anywhere; default RLVR_SAMPLER, else cpu): where tokens are chosen (src/model/sampler-gpu.ts):
// cpu reads the (B, V) logits back every step; gpu chooses on the GPU after the policy's own graph; captured
// replays the fixed-shape decoding graph under ORT's graph capture, a session per batch size made before the
// warm-up and timed apart (capturedSessionSeconds). A list runs each sampler on every batch size in one
// process: the weights are quantised once (the cpu sampler's session keeps CPU logits as before, the others
// share a second session with GPU logits). Every run also counts the WebGPU calls per decoding step.
// budget stops the whole process: the run in progress reports its steps ("partial"), later runs are skipped.
// The issue's configuration: `qwen2.5-0.5b q4 8,64 1 128 256 0 decode.json` (8 and 64 sequences, 256 new each).
// Every row runs to length: no EOS ids, no stop strings. First-token latency is the time of a
// sampleBatch with maxNewTokens = 1 (prefill + one sampled token), median of 3, as transformers'
// generate(max_new_tokens=1) in bench/torch/generate.py. GPU memory is not visible from WebGPU:
// bench/h200.sh samples nvidia-smi around the run instead. budget: when the process has run that
// long, the current sampling run stops after its step and is reported with the steps it made
// ("partial"); later batch sizes are skipped. JSON goes to out.json after every run.
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { LORA_TARGETS, randomAdapter } from "../src/model/lora.ts";
import { PreparedWeights, WEIGHT_DTYPES } from "../src/model/onnx/decoder.ts";
import { PENDING_DISPATCHES_KEY, setWebgpuSessionEntries } from "../src/model/onnx/ort.ts";
import { OrtPolicy, q4AccuracyFromEnv } from "../src/model/policy.ts";
import {
  DEFAULT_SAMPLING,
  newSampleTiming,
  sampleBatch,
  type SampleTiming,
  type SamplingParams,
} from "../src/model/sampler.ts";
import { sampleBatchGpu, samplerFromEnv, type SamplerKind, SAMPLERS } from "../src/model/sampler-gpu.ts";
import { makeTinyModel } from "../src/model/tiny.ts";
import { DECODE_PRESETS, type DecodePreset } from "./decode-presets.ts";
import { type CallCounts, diffCalls, installCallCounter, snapshotCalls } from "./webgpu-calls.ts";

const PRESETS = DECODE_PRESETS;
type Preset = DecodePreset;

const named = Object.fromEntries(
  benchArgs.filter((a) => /^[a-zA-Z]+=/.test(a)).map((a) => a.split("=") as [string, string]),
);
const [
  presetArg = "tiny",
  dtypeArg = "f32",
  pArg = "4",
  gArg = "4",
  lenArg = "64",
  newArg = "32",
  loraArg = "0",
  outArg = "",
  budgetArg = "Infinity",
] = benchArgs.filter((a) => !/^[a-zA-Z]+=/.test(a));
const samplers: SamplerKind[] = (named.sampler ?? samplerFromEnv() ?? "cpu").split(",").map((v) => {
  const k = SAMPLERS.find((x) => x === v);
  if (!k) throw new Error(`sampler must be one of ${SAMPLERS.join(", ")} (or a comma list)`);
  return k;
});
const prefills = (named.prefill ?? "captured").split(",").map((v) => {
  if (v !== "captured" && v !== "policy") {
    throw new Error(`prefill must be captured or policy (or a comma list), got ${v}`);
  }
  return v;
});
const accArg = named.acc ?? "";
if (accArg !== "" && accArg !== "0" && accArg !== "4") throw new Error(`acc must be 0 or 4, got ${accArg}`);
const q4Accuracy = accArg === "" ? q4AccuracyFromEnv() : (Number(accArg) as 0 | 4);
const pendings: (number | null)[] = named.pending ? named.pending.split(",").map(Number) : [null];
if (pendings.some((v) => v !== null && !(Number.isInteger(v) && v >= 1 && v <= 4096))) {
  throw new Error(`pending must be integers 1..4096, got ${named.pending}`);
}
const reps = Number(named.reps ?? 1);
if (!(Number.isInteger(reps) && reps >= 1)) throw new Error(`reps must be a positive integer, got ${named.reps}`);
const agreeN = Number(named.agree ?? 0);
if (!Number.isInteger(agreeN) || agreeN < 0) throw new Error(`agree must be a count, got ${named.agree}`);
const calls = installCallCounter();
const budgetS = Number(budgetArg);
const tStart = performance.now();
const elapsed = () => (performance.now() - tStart) / 1000;
class OutOfBudget extends Error {}
if (!(presetArg in PRESETS)) throw new Error(`unknown preset ${presetArg}; one of ${Object.keys(PRESETS).join(", ")}`);
const dtype = WEIGHT_DTYPES.find((d) => d === dtypeArg);
if (!dtype) throw new Error(`dtype must be one of ${WEIGHT_DTYPES.join(", ")}`);
const promptCounts = pArg.split(",").map(Number);
const G = Number(gArg), promptLen = Number(lenArg), newTokens = Number(newArg), lora = loraArg === "1";
if (promptCounts.some((p) => !Number.isInteger(p) || p < 1) || !(G >= 1) || !(promptLen >= 1) || !(newTokens >= 2)) {
  throw new Error("prompts must be positive integers (comma list), G >= 1, promptLen >= 1, newTokens >= 2");
}
// The captured graphs' q4 products (decoder.ts decodeProducts) as RLVR_CAPTURED_PRODUCTS sets them for this process.
const capturedProducts = Deno.env.get("RLVR_CAPTURED_PRODUCTS") || "auto";
const results: Record<string, unknown> = {
  webgpu,
  samplers,
  q4Accuracy,
  capturedProducts,
  preset: presetArg,
  dtype,
  G,
  promptLen,
  newTokens,
  lora,
  runs: [] as unknown[],
};
const save = async () => {
  if (outArg) await Deno.writeTextFile(outArg, JSON.stringify(results, null, 1));
};

let t0 = performance.now();
const m = makeTinyModel("qwen2", { seed: 1, ...PRESETS[presetArg as Preset], tieWordEmbeddings: true });
const params = [...m.weights.values()].reduce((s, t) => s + t.data.length, 0);
results.params = params;
results.modelSeconds = (performance.now() - t0) / 1000;
console.log(
  `model ${presetArg}: ${(params / 1e6).toFixed(1)}M parameters, random weights (${
    ((performance.now() - t0) / 1000).toFixed(1)
  } s)`,
);
// One quantisation for every session of this process.
const prepared = new PreparedWeights();
const sessionSeconds: Record<string, number> = {};
const sessionPhases: Record<string, Record<string, number>> = {};
const makePolicy = async (logitsOnGpu: boolean, acc: 0 | 4 = q4Accuracy) => {
  t0 = performance.now();
  // Where session creation goes: each phase of OrtPolicy.create (attention check, graph build with the q4
  // quantisation, ORT's session) timed from the previous one.
  const phases: Record<string, number> = {};
  let tp = performance.now(), current = "validate";
  const onPhase = (ph: string) => {
    const now = performance.now();
    phases[current] = (now - tp) / 1000;
    current = ph;
    tp = now;
  };
  const p = await OrtPolicy.create(m.config, m.weights, {
    dtype,
    loraTargets: lora ? LORA_TARGETS : [],
    maxPositions: promptLen + newTokens,
    logitsOnGpu,
    prepared,
    q4Accuracy: acc,
    onPhase,
  });
  onPhase("done");
  const s = (performance.now() - t0) / 1000;
  const key = `${logitsOnGpu ? "gpuLogits" : "cpuLogits"}${acc !== q4Accuracy ? `, accuracy ${acc}` : ""}`;
  sessionPhases[key] = phases;
  sessionSeconds[key] = s;
  if (lora) p.setAdapter(randomAdapter(m.config, { r: 16, alpha: 32, targets: LORA_TARGETS, seed: 2 }));
  console.log(
    `graph + session (${dtype}${dtype === "q4" ? `, accuracy level ${acc}` : ""}${
      lora ? ", LoRA r=16 on all targets" : ""
    }, logits on the ${logitsOnGpu ? "GPU" : "CPU"}) on ${p.provider}, attention ${p.attention}: ${s.toFixed(1)} s (${
      Object.entries(phases).map(([k, v]) => `${k} ${v.toFixed(1)}`).join(", ")
    })`,
  );
  return p;
};
const cpuPolicy = samplers.includes("cpu") ? await makePolicy(false) : null;
const gpuPolicy = samplers.some((x) => x !== "cpu") ? await makePolicy(true) : null;
results.provider = (cpuPolicy ?? gpuPolicy)?.provider;
results.sessionSeconds = sessionSeconds;
results.sessionPhases = sessionPhases;
let captured = false;
if (gpuPolicy && samplers.includes("captured")) {
  const tc = performance.now();
  captured = await gpuPolicy.capturedOk();
  results.capturedCheckSeconds = (performance.now() - tc) / 1000;
  console.log(
    `captured decoding ${captured ? "passes" : "FAILS"} its check on this device (${
      (results.capturedCheckSeconds as number).toFixed(1)
    } s)${captured ? "" : ": sampler=captured runs as sampler=gpu"}`,
  );
}
results.captured = captured;
let capturedPrefill = false;
if (captured && gpuPolicy) {
  const tc = performance.now();
  capturedPrefill = await gpuPolicy.capturedPrefillOk();
  results.capturedPrefillCheckSeconds = (performance.now() - tc) / 1000;
  console.log(
    `the captured prefill ${capturedPrefill ? "passes" : "FAILS"} its check on this device (${
      (results.capturedPrefillCheckSeconds as number).toFixed(1)
    } s)${capturedPrefill ? "" : ": prefill=captured runs as prefill=policy"}`,
  );
}
results.capturedPrefill = capturedPrefill;
await save();
const sampleWith = (
  sampler: SamplerKind,
  prompts: number[][],
  n: number,
  p: SamplingParams,
  onProgress?: Parameters<typeof sampleBatch>[5],
  timing?: SampleTiming,
) =>
  sampler === "cpu" && cpuPolicy
    ? sampleBatch(cpuPolicy, prompts, n, p, () => "", onProgress, timing)
    : gpuPolicy
    ? sampleBatchGpu(gpuPolicy, prompts, n, p, () => "", onProgress, timing, sampler === "cpu" ? "gpu" : sampler)
    : Promise.reject(new Error("no policy"));

const rng = new Rng(3);
const noStop = { ...DEFAULT_SAMPLING, temperature: 1, eosTokenIds: [], stop: [] };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let stop = false;
// The last complete run's prompts and samples, for agree=N.
let lastRun: {
  prompts: number[][];
  samples: { prompt: number; tokens: number[]; logprobs: number[] }[];
  batch: number;
  sampler: string;
} | null = null;
for (const P of promptCounts) {
  if (stop) break;
  const prompts = Array.from({ length: P }, () => Array.from({ length: promptLen }, () => rng.int(m.config.vocabSize)));
  type RunOf = [SamplerKind, "captured" | "policy" | null, number | null];
  const once = samplers.flatMap((x): RunOf[] =>
    x === "captured" ? prefills.flatMap((f) => pendings.map((pd): RunOf => [x, f, pd])) : [[x, null, null]]
  );
  const runsOf = Array.from({ length: reps }, () => once).flat();
  for (const [sampler, prefill, pending] of runsOf) {
    // Before this run's captured sessions are made (each run makes its own, below).
    if (pending !== null) setWebgpuSessionEntries({ [PENDING_DISPATCHES_KEY]: String(pending) });
    // prefill=policy: the captured sampler after the policy's own prefill (the variable is read per sampling call).
    const sample = async (
      pr: number[][],
      n: number,
      p: SamplingParams,
      onProgress?: Parameters<typeof sampleBatch>[5],
      timing?: SampleTiming,
    ) => {
      if (prefill === "policy") Deno.env.set("RLVR_CAPTURED_PREFILL", "0");
      try {
        return await sampleWith(sampler, pr, n, p, onProgress, timing);
      } finally {
        Deno.env.delete("RLVR_CAPTURED_PREFILL");
      }
    };
    let capturedSessionSeconds: number | null = null, prefillSessionSeconds: number | null = null;
    if (sampler === "captured" && prefill === "captured" && capturedPrefill && gpuPolicy) {
      // The captured prefill's session for this batch's prompts, before the decoder's (as the sampler makes them).
      await gpuPolicy.releaseCaptured();
      const tc = performance.now();
      const pf = await gpuPolicy.capturedPrefill(P, promptLen);
      prefillSessionSeconds = (performance.now() - tc) / 1000;
      console.log(
        `captured prefill session for ${pf.batch} prompts x ${pf.width} columns: ${prefillSessionSeconds.toFixed(1)} s`,
      );
    }
    if (sampler === "captured" && captured && gpuPolicy) {
      // This batch's own session (the recipe keeps one of the largest batch instead), made before the warm-up.
      if (prefillSessionSeconds === null) await gpuPolicy.releaseCaptured();
      const tc = performance.now();
      await gpuPolicy.capturedDecoder(P * G, promptLen + newTokens);
      capturedSessionSeconds = (performance.now() - tc) / 1000;
      console.log(
        `captured session for batch ${P * G} x ${promptLen + newTokens} columns: ${
          capturedSessionSeconds.toFixed(1)
        } s`,
      );
    }
    // Warm-up: shader compilation for every shape the measured run meets.
    await sample(prompts, G, { ...noStop, maxNewTokens: 2 });
    // Teacher-forced log-probs of the prompts, for the first batch size and sampler only (slow at large batches).
    let logprobsTokensPerSecond: number | null = null;
    if (P === promptCounts[0] && sampler === samplers[0] && prefill !== "policy") {
      const tl = performance.now();
      const lp = await (cpuPolicy ?? gpuPolicy)!.logprobs(prompts);
      logprobsTokensPerSecond = P * promptLen / ((performance.now() - tl) / 1000);
      console.log(
        `logprobs (teacher-forced) ${P} x ${promptLen}: ${
          logprobsTokensPerSecond.toFixed(0)
        } tok/s (${lp.length} rows)`,
      );
    }
    // First-token latency (max_new 1), three runs; each run's parts (prefill, the captured setup of
    // decoder, choosers and cache copies, the wait for the token) and WebGPU calls, for the median run.
    const first: number[] = [];
    const firstParts: {
      totalMs: number;
      prefillMs: number;
      setupMs: number;
      waitMs: number;
      calls: Record<string, { calls: number; ms: number }>;
    }[] = [];
    for (let i = 0; i < 3; i++) {
      const ft = newSampleTiming();
      const c0 = snapshotCalls(calls);
      const s = performance.now();
      await sample(prompts, G, { ...noStop, maxNewTokens: 1, seed: 10 + i }, undefined, ft);
      first.push((performance.now() - s) / 1000);
      const diff = Object.fromEntries(
        Object.entries(diffCalls(c0, snapshotCalls(calls))).filter(([, v]) => v.calls > 0).map((
          [k, v],
        ) => [k.replace(/^GPU/, ""), v]),
      );
      firstParts.push({
        totalMs: ft.totalMs,
        prefillMs: ft.prefillMs,
        setupMs: ft.repeatMs,
        waitMs: ft.chooseMs,
        calls: diff,
      });
    }
    const firstMedian = firstParts[first.indexOf(median(first))] ?? firstParts[0];
    let firstStep = 0, steps = 0, generated = 0;
    let callsAt2: CallCounts = snapshotCalls(calls), callsAtLast: CallCounts = callsAt2;
    // Decoding steps run when those snapshots were taken (the captured sampler runs one step ahead).
    const timing = newSampleTiming();
    let stepsAt2 = 0, stepsAtLast = 0;
    t0 = performance.now();
    let samples: { prompt: number; tokens: number[]; logprobs: number[] }[] | null = null;
    try {
      samples = await sample(prompts, G, { ...noStop, maxNewTokens: newTokens, seed: 1 }, (p) => {
        if (p.step === 1) firstStep = performance.now();
        // WebGPU calls of the decoding steps between the second and the last progress call.
        if (p.step === 2) {
          callsAt2 = snapshotCalls(calls);
          stepsAt2 = timing.steps;
        }
        callsAtLast = snapshotCalls(calls);
        stepsAtLast = timing.steps;
        steps = p.step;
        generated = p.tokens;
        if (elapsed() > budgetS && p.step < newTokens) {
          throw new OutOfBudget(`budget of ${budgetS} s reached after ${p.step} steps`);
        }
      }, timing);
    } catch (e) {
      if (!(e instanceof OutOfBudget)) throw e;
      console.log(`batch ${P * G}, sampler ${sampler}: ${e.message}; reporting the steps made`);
    }
    const tEnd = performance.now();
    const tokens = samples ? samples.reduce((s, x) => s + x.tokens.length, 0) : generated;
    const batch = P * G;
    if (samples && tokens !== batch * newTokens) {
      console.log(`warning: ${tokens} tokens generated, expected ${batch * newTokens}`);
    }
    const total = (tEnd - t0) / 1000, decodeS = (tEnd - firstStep) / 1000;
    const counted = Math.max(1, stepsAtLast - stepsAt2);
    const perStep = Object.fromEntries(
      Object.entries(diffCalls(callsAt2, callsAtLast)).map((
        [k, v],
      ) => [k.replace(/^GPU/, ""), { calls: v.calls / counted, ms: v.ms / counted }]),
    );
    const ran = sampler === "captured" && !captured
      ? "gpu"
      : sampler === "captured"
      ? (prefill === "captured" && capturedPrefill ? "captured" : "captured/policy-prefill")
      : sampler;
    const run = {
      sampler,
      ran,
      pending,
      prefillSessionSeconds,
      prompts: P,
      batch,
      tokens,
      steps,
      partial: samples === null,
      seconds: total,
      tokensPerSecond: tokens / total,
      capturedSessionSeconds,
      webgpuCallsPerStep: perStep,
      // Per decoding step: host time inside the step's model call (session.run: for a replay, its encoding
      // and submits) and time in the token choice (for gpu/captured mostly the wait for the step's B x 8 bytes,
      // i.e. the GPU: the captured sampler waits for step t while t + 1 is queued).
      hostRunMsPerStep: timing.stepMs / Math.max(1, timing.steps),
      chooseMsPerStep: timing.chooseMs / Math.max(1, timing.steps),
      firstStepSeconds: (firstStep - t0) / 1000,
      decodeTokensPerSecond: (tokens - batch) / decodeS,
      msPerStep: decodeS * 1000 / Math.max(1, steps - 1),
      firstTokenSeconds: median(first),
      firstTokenAll: first,
      firstTokenParts: firstMedian,
      logprobsTokensPerSecond,
    };
    (results.runs as unknown[]).push(run);
    if (samples) lastRun = { prompts, samples, batch, sampler: ran };
    console.log(
      `[${ran}${
        pending !== null ? `, pending ${pending}` : ""
      }] sample ${P} prompts x G=${G} (batch ${batch}), prompt ${promptLen}, ${
        run.partial ? `${steps} of ` : ""
      }${newTokens} new: ${tokens} tokens in ${total.toFixed(2)} s = ${run.tokensPerSecond.toFixed(0)} tok/s; ` +
        `decode ${run.decodeTokensPerSecond.toFixed(0)} tok/s (${run.msPerStep.toFixed(1)} ms/step: model call ${
          run.hostRunMsPerStep.toFixed(1)
        }, choice / wait ${run.chooseMsPerStep.toFixed(1)}); first token (max_new 1) ${
          (run.firstTokenSeconds * 1000).toFixed(0)
        } ms\n` +
        `  WebGPU calls per decoding step (calls, ms inside): ${
          Object.entries(perStep).map(([k, v]) => `${k} ${v.calls.toFixed(1)} (${v.ms.toFixed(2)})`).join(", ")
        }\n` +
        `  first token, the median run: prefill ${
          firstMedian.prefillMs.toFixed(1)
        } ms, setup (decoder, choosers, cache copies) ${firstMedian.setupMs.toFixed(1)}, wait for the token ${
          firstMedian.waitMs.toFixed(1)
        }, of ${firstMedian.totalMs.toFixed(1)}; ` +
        `WebGPU calls: ${
          Object.entries(firstMedian.calls).map(([k, v]) => `${k} ${v.calls} (${v.ms.toFixed(2)})`).join(", ")
        }`,
    );
    await save();
    if (run.partial) {
      stop = true;
      break;
    }
  }
}
if (agreeN > 0 && lastRun) {
  // Teacher-forced log-probabilities of the sampled tokens under the accuracy-0 graph (its own session).
  const ref = q4Accuracy === 0 && cpuPolicy ? cpuPolicy : await makePolicy(false, 0);
  const picked = lastRun.samples.slice(0, agreeN);
  const seqs = picked.map((s) => [...lastRun!.prompts[s.prompt], ...s.tokens]);
  const lp = await ref.logprobs(seqs);
  let max = 0, sum = 0, n = 0;
  picked.forEach((s, i) =>
    s.logprobs.forEach((x, j) => {
      const d = Math.abs(x - lp[i][promptLen - 1 + j]);
      max = Math.max(max, d);
      sum += d;
      n++;
    })
  );
  results.agreement = {
    samples: picked.length,
    tokens: n,
    batch: lastRun.batch,
    sampler: lastRun.sampler,
    q4Accuracy,
    reference: "accuracy 0, teacher-forced",
    maxAbs: max,
    meanAbs: sum / Math.max(1, n),
  };
  console.log(
    `agreement: ${picked.length} samples of batch ${lastRun.batch} (${lastRun.sampler}, accuracy level ${q4Accuracy}), ${n} tokens: sampled log-prob vs the accuracy-0 graph, teacher-forced: max |diff| ${
      max.toExponential(2)
    }, mean ${(sum / Math.max(1, n)).toExponential(2)}`,
  );
  if (ref !== cpuPolicy) await ref.release();
  await save();
}
console.log(JSON.stringify(results));
await cpuPolicy?.release();
await gpuPolicy?.release();
Deno.exit(0);
