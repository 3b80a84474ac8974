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
//   lora=R: an adapter of rank R (alpha 2R) on the seven projections, as the recipe's policy has one (its alpha / r
//   fixed in the graph); default none.
//   layers=N: the preset's shape with N decoder layers (quicker sessions; dispatches and kernel times per layer kept).
//   profile=1: after each run one more sampled batch of `profileNew` (default 12) tokens with every compute dispatch
//   in a pass of its own between two timestamp queries (installed here on the GPU* prototypes, so ORT's replayed
//   captured dispatches are timed as they run; onnxruntime-web's own `env.webgpu.profiling` is JSEP's and does nothing
//   in the WebGPU EP build used here). Per decoding step: dispatches by program (the pipeline's or bind group's label,
//   which ORT sets to the program name), the sum of their GPU times, the GPU span of each submit (first stamp to last)
//   and the wall time of that profiled step; the run's `profile` in OUT.json, a table on stdout.
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
import { LORA_TARGETS, randomAdapter } from "../../src/model/lora.ts";
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
const profile = named.profile === "1";
const profileNew = Number(named.profileNew ?? 12);
const layers = named.layers ? Number(named.layers) : null;
const loraRank = named.lora ? Number(named.lora) : 0;
if (!(Number.isInteger(loraRank) && loraRank >= 0)) throw new Error("lora must be a rank (a non-negative integer)");
if (layers !== null && !(Number.isInteger(layers) && layers >= 1)) throw new Error(`layers must be a positive integer`);
if (!(Number.isInteger(profileNew) && profileNew >= 4)) throw new Error("profileNew must be an integer >= 4");
const promptCounts = pArg.split(",").map(Number);
const G = Number(gArg), promptLen = Number(lenArg), newTokens = Number(newArg), budgetS = Number(b ?? Infinity);
if (
  !(Number.isInteger(reps) && reps >= 1) || promptCounts.some((p) => !Number.isInteger(p) || p < 1) || !(G >= 1) ||
  !(promptLen >= 1) || !(newTokens >= 2)
) throw new Error("reps >= 1, prompts positive integers (a comma list), G >= 1, promptLen >= 1, newTokens >= 2");

/** The longest sample: the session's positions and the captured decoder's columns cover it. */
const maxNew = Math.max(newTokens, profile ? profileNew : 0);
const calls = installCallCounter();
const timer = profile ? installPassTimer() : null;
const tStart = performance.now();
const seconds = (t: number) => (performance.now() - t) / 1000;
class OutOfBudget extends Error {}
const runs: unknown[] = [];
const results: Record<string, unknown> = {
  webgpu,
  sampler: "captured",
  preset,
  dtype,
  G,
  promptLen,
  newTokens,
  layers: layers ?? SHAPES[preset as keyof typeof SHAPES].layers,
  lora: loraRank,
  dawnOptions: Deno.env.get("RLVR_DAWN_OPTIONS") ?? "",
  runs,
};
const save = async () => {
  if (out) await Deno.writeTextFile(out, JSON.stringify(results, null, 1));
};

let t0 = performance.now();
const m = makeTinyModel("qwen2", {
  seed: 1,
  ...SHAPES[preset as keyof typeof SHAPES],
  ...(layers !== null ? { layers } : {}),
  tieWordEmbeddings: true,
});
results.params = [...m.weights.values()].reduce((s, t) => s + t.data.length, 0);
results.modelSeconds = seconds(t0);
t0 = performance.now();
const policy = await OrtPolicy.create(m.config, m.weights, {
  dtype,
  maxPositions: promptLen + maxNew,
  logitsOnGpu: true,
  prepared: new PreparedWeights(), // one quantisation for every captured session of this process
  ...(loraRank ? { loraTargets: LORA_TARGETS, loraScale: 2 } : {}),
});
if (loraRank) {
  policy.setAdapter(randomAdapter(m.config, { r: loraRank, alpha: 2 * loraRank, targets: LORA_TARGETS, seed: 4 }));
}
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
      await policy.capturedDecoder(batch, promptLen + maxNew);
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
    const profiled = timer && !run.partial ? await profileSteps(timer, sample, batch) : null;
    runs.push(profiled ? { ...run, profile: profiled } : run);
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
    if (profiled) printProfile(profiled, run.msPerStep);
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

// ---- profile=1: GPU time per dispatch, by timestamp queries around passes of one dispatch each ----

/** One timed dispatch: its query pair (set, first index), its program's label, the encoder it was recorded into. */
interface TimedDispatch {
  set: number;
  index: number;
  label: string;
  encoder: number;
}

/** The pass timer: `armed` splits every compute pass recorded from then on into timed passes of one dispatch. */
interface PassTimer {
  armed: boolean;
  /** Why nothing was timed (no timestamp-query on the device), else null. */
  unavailable: string | null;
  reset(): void;
  /** Resolves every query recorded since reset; start/end in ns on the GPU's clock. */
  read(): Promise<(TimedDispatch & { start: bigint; end: bigint })[]>;
}

/**
 * Wraps GPUDevice.createCommandEncoder (to know an encoder's device), GPUCommandEncoder.beginComputePass (armed: a
 * stand-in pass that records pipeline and bind groups and opens a real pass with timestampWrites per dispatch) and
 * GPUCommandEncoder.finish (resolves the encoder's queries first). ORT's wasm module calls these methods on the JS
 * objects (emdawnwebgpu), graph-captured replays included, so nothing of ORT's is hidden from it.
 */
function installPassTimer(): PassTimer {
  const SET_SIZE = 4096; // Dawn's maximum queries in one set
  type SetState = { qs: GPUQuerySet; resolve: GPUBuffer; used: number };
  const sets: SetState[] = [];
  const dispatches: TimedDispatch[] = [];
  const encoderDevice = new WeakMap<GPUCommandEncoder, GPUDevice>();
  const encoderRanges = new WeakMap<GPUCommandEncoder, { set: number; first: number; count: number }[]>();
  const encoderId = new WeakMap<GPUCommandEncoder, number>();
  let device: GPUDevice | null = null, nextEncoder = 0;
  const g = globalThis as unknown as Record<string, { prototype: Record<string, unknown> }>;
  const devProto = g.GPUDevice.prototype, encProto = g.GPUCommandEncoder.prototype;
  const createEncoder = devProto.createCommandEncoder as (this: GPUDevice, d?: unknown) => GPUCommandEncoder;
  const begin = encProto.beginComputePass as (this: GPUCommandEncoder, d?: unknown) => GPUComputePassEncoder;
  const finish = encProto.finish as (this: GPUCommandEncoder, d?: unknown) => GPUCommandBuffer;
  devProto.createCommandEncoder = function (this: GPUDevice, d?: unknown) {
    const enc = createEncoder.call(this, d);
    encoderDevice.set(enc, this);
    return enc;
  };
  /** Two query slots for one dispatch of `enc`, 32-aligned per encoder range (resolve offsets are 256-byte aligned). */
  const take = (enc: GPUCommandEncoder, dev: GPUDevice): { set: number; index: number } => {
    if (device !== dev) {
      if (device) throw new Error("profile: dispatches on two devices");
      device = dev;
    }
    let ranges = encoderRanges.get(enc);
    if (!ranges) encoderRanges.set(enc, ranges = []);
    let r = ranges[ranges.length - 1];
    if (!r || sets[r.set].used !== r.first + r.count || r.first + r.count + 2 > SET_SIZE) {
      let s = sets.length - 1;
      const aligned = s >= 0 ? Math.ceil(sets[s].used / 32) * 32 : SET_SIZE;
      if (s < 0 || aligned + 2 > SET_SIZE) {
        sets.push({
          qs: dev.createQuerySet({ type: "timestamp", count: SET_SIZE }),
          resolve: dev.createBuffer({ size: SET_SIZE * 8, usage: 0x200 | 0x4 /* QUERY_RESOLVE | COPY_SRC */ }),
          used: 0,
        });
        s = sets.length - 1;
      } else sets[s].used = aligned;
      ranges.push(r = { set: s, first: sets[s].used, count: 0 });
    }
    const index = r.first + r.count;
    r.count += 2;
    sets[r.set].used = index + 2;
    return { set: r.set, index };
  };
  const labelOf = (p: unknown, groups: Map<number, unknown[]>) =>
    (p as { label?: string } | null)?.label || ((groups.get(0)?.[1] as { label?: string } | undefined)?.label ?? "") ||
    "(unlabelled)";
  const timer: PassTimer = {
    armed: false,
    unavailable: null,
    reset() {
      dispatches.length = 0;
      for (const s of sets) s.used = SET_SIZE; // the next dispatch opens a fresh set
    },
    async read() {
      if (!device || dispatches.length === 0) return [];
      const dev = device;
      const reads = sets.map(() =>
        dev.createBuffer({ size: SET_SIZE * 8, usage: 0x1 | 0x8 /* MAP_READ | COPY_DST */ })
      );
      const enc = createEncoder.call(dev);
      sets.forEach((s, i) => enc.copyBufferToBuffer(s.resolve, 0, reads[i], 0, SET_SIZE * 8));
      dev.queue.submit([finish.call(enc)]);
      const stamps: BigUint64Array[] = [];
      for (const b of reads) {
        await b.mapAsync(1 /* GPUMapMode.READ */);
        stamps.push(new BigUint64Array(b.getMappedRange().slice(0)));
        b.unmap();
        b.destroy();
      }
      return dispatches.map((d) => ({ ...d, start: stamps[d.set][d.index], end: stamps[d.set][d.index + 1] }));
    },
  };
  encProto.beginComputePass = function (this: GPUCommandEncoder, desc?: { label?: string; timestampWrites?: unknown }) {
    const dev = encoderDevice.get(this);
    if (!timer.armed || !dev || desc?.timestampWrites) return begin.call(this, desc);
    if (!dev.features.has("timestamp-query")) {
      timer.unavailable = "the device has no timestamp-query";
      return begin.call(this, desc);
    }
    const enc = this;
    let pipeline: unknown = null;
    const groups = new Map<number, unknown[]>();
    if (!encoderId.has(enc)) encoderId.set(enc, nextEncoder++);
    const run = (f: (p: GPUComputePassEncoder) => void) => {
      const { set, index } = take(enc, dev);
      const p = begin.call(enc, {
        label: desc?.label,
        timestampWrites: { querySet: sets[set].qs, beginningOfPassWriteIndex: index, endOfPassWriteIndex: index + 1 },
      });
      if (pipeline) p.setPipeline(pipeline as GPUComputePipeline);
      for (const args of groups.values()) (p.setBindGroup as (...a: unknown[]) => void)(...args);
      f(p);
      p.end();
      dispatches.push({ set, index, label: labelOf(pipeline, groups), encoder: encoderId.get(enc)! });
    };
    const stand = {
      label: desc?.label ?? "",
      setPipeline(p: unknown) {
        pipeline = p;
      },
      setBindGroup(i: number, bg: unknown, data?: Uint32Array | number[], start?: number, len?: number) {
        // Dynamic offsets may be a view of the wasm heap: copied now.
        const offsets = data === undefined
          ? undefined
          : data instanceof Uint32Array && start !== undefined
          ? Array.from(data.subarray(start, start + (len ?? 0)))
          : Array.from(data as number[]);
        groups.set(i, offsets === undefined ? [i, bg] : [i, bg, offsets]);
      },
      dispatchWorkgroups(x: number, y?: number, z?: number) {
        run((p) => p.dispatchWorkgroups(x, y, z));
      },
      dispatchWorkgroupsIndirect(b: GPUBuffer, o: number) {
        run((p) => p.dispatchWorkgroupsIndirect(b, o));
      },
      end() {},
      pushDebugGroup() {},
      popDebugGroup() {},
      insertDebugMarker() {},
    };
    return new Proxy(stand, {
      get(t, k) {
        if (k in t) return t[k as keyof typeof t];
        throw new Error(`profile: the timed pass stand-in has no ${String(k)}`);
      },
    }) as unknown as GPUComputePassEncoder;
  };
  encProto.finish = function (this: GPUCommandEncoder, d?: unknown) {
    for (const r of encoderRanges.get(this) ?? []) {
      if (r.count > 0) this.resolveQuerySet(sets[r.set].qs, r.first, r.count, sets[r.set].resolve, r.first * 8);
    }
    encoderRanges.delete(this);
    return finish.call(this, d);
  };
  return timer;
}

type ProfileSample = (
  n: number,
  seed?: number,
  onProgress?: Parameters<typeof sampleBatchGpu>[5],
  timing?: ReturnType<typeof newSampleTiming>,
) => Promise<unknown>;

/** One more sampled batch of profileNew tokens, timed between its 2nd and (profileNew-1)th progress calls. */
async function profileSteps(timer: PassTimer, sample: ProfileSample, batch: number) {
  const timing = newSampleTiming();
  let stepsFrom = 0, stepsTo = 0, tFrom = 0, tTo = 0;
  const last = profileNew - 1;
  timer.reset();
  await sample(profileNew, 2, (p) => {
    if (p.step === 2) [timer.armed, stepsFrom, tFrom] = [true, timing.steps, performance.now()];
    if (p.step === last) [timer.armed, stepsTo, tTo] = [false, timing.steps, performance.now()];
  }, timing);
  timer.armed = false;
  const steps = Math.max(1, stepsTo - stepsFrom);
  const stamps = (await timer.read()).filter((d) => d.end >= d.start && d.start > 0n);
  const us = (ns: bigint) => Number(ns) / 1000;
  const byLabel = new Map<string, { n: number; us: number }>();
  const byEncoder = new Map<number, { start: bigint; end: bigint }>();
  let kernelUs = 0;
  for (const d of stamps) {
    const t = us(d.end - d.start);
    kernelUs += t;
    const l = byLabel.get(d.label) ?? { n: 0, us: 0 };
    byLabel.set(d.label, { n: l.n + 1, us: l.us + t });
    const e = byEncoder.get(d.encoder);
    byEncoder.set(
      d.encoder,
      e
        ? { start: d.start < e.start ? d.start : e.start, end: d.end > e.end ? d.end : e.end }
        : { start: d.start, end: d.end },
    );
  }
  const spanUs = [...byEncoder.values()].reduce((s, e) => s + us(e.end - e.start), 0);
  const per = (x: number) => Math.round(x / steps * 10) / 10;
  return {
    batch,
    timed: timer.unavailable ?? "timestamp queries, a pass per dispatch",
    steps,
    dispatchesPerStep: per(stamps.length),
    encodersPerStep: per(byEncoder.size),
    kernelMsPerStep: per(kernelUs) / 1000,
    spanMsPerStep: per(spanUs) / 1000,
    wallMsPerStep: Math.round((tTo - tFrom) / steps * 100) / 100,
    programs: [...byLabel.entries()].sort((a, b) => b[1].us - a[1].us).map(([label, v]) => ({
      label,
      perStep: per(v.n),
      usPerStep: per(v.us),
      usEach: Math.round(v.us / v.n * 10) / 10,
    })),
  };
}

function printProfile(p: Awaited<ReturnType<typeof profileSteps>>, unprofiledMs: number) {
  console.log(
    `[profile] batch ${p.batch}, ${p.steps} steps (${p.timed}): ${p.dispatchesPerStep} dispatches a step in ` +
      `${p.encodersPerStep} command buffers; GPU: kernels ${p.kernelMsPerStep.toFixed(2)} ms, span ` +
      `${p.spanMsPerStep.toFixed(2)} ms (first to last stamp of each command buffer); wall ${
        p.wallMsPerStep.toFixed(2)
      } ms profiled, ${unprofiledMs.toFixed(2)} ms not`,
  );
  console.log(
    `[profile]   ${"program".padEnd(44)} ${"/step".padStart(6)} ${"us/step".padStart(9)} ${"us each".padStart(8)}`,
  );
  for (const r of p.programs) {
    console.log(
      `[profile]   ${r.label.slice(0, 44).padEnd(44)} ${r.perStep.toFixed(1).padStart(6)} ${
        r.usPerStep.toFixed(1).padStart(9)
      } ${r.usEach.toFixed(1).padStart(8)}`,
    );
  }
}
