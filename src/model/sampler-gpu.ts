// Sampling with the token choice on the GPU (src/gpu/kernels/sample.wgsl): only token ids and their
// log-probabilities come back per step (B x 8 bytes), never the (B, V) logits. Two ways to decode:
//   "captured"  the fixed-shape decoding graph under ORT's graph capture (captured.ts): prompts are
//               prefilled once and each prompt's cache rows copied to its n samples; every step is a
//               replay plus the choice and decode_advance.wgsl, which moves ids, positions and key
//               counts on the GPU, so nothing is uploaded per step; the host reads a step's tokens
//               while the next step runs. Rows that finish keep decoding (ignored) in the fixed batch.
//   "gpu"       the policy's own graph (any attention), as sampleBatch drives it, with the choice on
//               the GPU; finished rows leave the batch.
// "captured" falls back to "gpu" where it does not apply (f16 graphs, head dims GQA rejects) or its
// check (captured-check.ts) failed on the device.
// Same seed, same samples on a device: row (prompt, index) draws from (rowSeed, token index) in both.
// The samples are the CPU sampler's distribution (same kept tokens, same probabilities), drawn with
// another generator, so a seed gives other samples than sampleBatch's.
import { type ChoiceParams, TokenChooser } from "../gpu/kernels/sample.ts";
import { DecodeAdvance } from "../gpu/kernels/decode_advance.ts";
import type { KvCache, OrtPolicy } from "./policy.ts";
import {
  acceptToken,
  checkParams,
  newRow,
  rowSeed,
  type RowState,
  type Sample,
  type SampleProgress,
  type SampleTiming,
  type SamplingParams,
  toSamples,
} from "./sampler.ts";
import { denoEnv } from "../core/deno-env.ts";

/** How a GPU sampling run decodes. */
export const GPU_SAMPLERS = ["captured", "gpu"] as const;
export type GpuSampler = (typeof GPU_SAMPLERS)[number];

/** Where tokens are chosen: "cpu" (sampler.ts sampleBatch, the logits read back every step) or a GpuSampler. */
export const SAMPLERS = ["cpu", ...GPU_SAMPLERS] as const;
export type SamplerKind = (typeof SAMPLERS)[number];

/** RLVR_SAMPLER=cpu|gpu|captured under Deno (benchmarks, runs), else undefined (or in the browser). */
export function samplerFromEnv(): SamplerKind | undefined {
  const v = denoEnv("RLVR_SAMPLER");
  if (v === undefined || v === "") return undefined;
  const k = SAMPLERS.find((x) => x === v);
  if (!k) throw new Error(`RLVR_SAMPLER=${v}: one of ${SAMPLERS.join(", ")}`);
  return k;
}

const STORAGE_COPY = 0x0080 | 0x0004 | 0x0008, MAP_READ = 0x0001, COPY_DST = 0x0008;

/** Left-padded prompts as one prefill step. */
function prefillInput(prompts: readonly (readonly number[])[]) {
  const maxLen = Math.max(...prompts.map((p) => p.length));
  const pad = prompts.map((p) => maxLen - p.length);
  return {
    maxLen,
    pad,
    input: {
      ids: prompts.map((p, i) => [...new Array<number>(pad[i]).fill(0), ...p]),
      mask: prompts.map((_, i) => Array.from({ length: maxLen }, (_, t) => (t < pad[i] ? 0 : 1))),
      positions: prompts.map((_, i) => Array.from({ length: maxLen }, (_, t) => Math.max(0, t - pad[i]))),
      past: null,
      keep: 1,
    },
  };
}

/** `n` completions of every prompt with the token choice on the GPU; see the file comment. */
export async function sampleBatchGpu(
  policy: OrtPolicy,
  prompts: readonly (readonly number[])[],
  n: number,
  params: SamplingParams,
  decode: (ids: readonly number[]) => string,
  onProgress?: (p: SampleProgress) => void,
  timing?: SampleTiming,
  mode: GpuSampler = "captured",
): Promise<Sample[]> {
  checkParams(params, n);
  if (prompts.length === 0) return [];
  prompts.forEach((p, i) => {
    if (p.length === 0) throw new Error(`prompt ${i} is empty`);
  });
  const device = await policy.gpuDevice();
  if (!device || !policy.logitsOnGpu) throw new Error("sampleBatchGpu needs a WebGPU policy created with logitsOnGpu");
  const maxLen = Math.max(...prompts.map((p) => p.length));
  if (maxLen + params.maxNewTokens > policy.maxPositions) {
    throw new Error(
      `the longest prompt has ${maxLen} tokens; with maxNewTokens ${params.maxNewTokens} that exceeds the policy's maxPositions ${policy.maxPositions}`,
    );
  }
  const t0 = performance.now();
  const rows = Array.from({ length: prompts.length * n }, (_, r) => newRow(Math.floor(r / n), r % n));
  const ctx: Run = {
    device,
    policy,
    prompts,
    n,
    params,
    decode,
    onProgress,
    timing,
    rows,
    eos: new Set(params.eosTokenIds),
    generated: 0,
  };
  // Captured decoding where it applies and its check passed on this device, else the policy's own graph.
  if (mode === "captured" && await policy.capturedOk()) await runCaptured(ctx);
  else await runDynamic(ctx);
  if (timing) timing.totalMs += performance.now() - t0;
  return toSamples(rows, decode);
}

interface Run {
  device: GPUDevice;
  policy: OrtPolicy;
  prompts: readonly (readonly number[])[];
  n: number;
  params: SamplingParams;
  decode: (ids: readonly number[]) => string;
  onProgress?: (p: SampleProgress) => void;
  timing?: SampleTiming;
  rows: RowState[];
  eos: Set<number>;
  generated: number;
}

const choice = (p: SamplingParams): ChoiceParams => ({
  temperature: p.temperature,
  topK: p.topK,
  topP: p.topP,
  minP: p.minP,
});

/**
 * Staging buffers of a captured run: step s's tokens are copied to buffer s % READ_RING and mapped at
 * once; the host goes on submitting steps and takes each step's tokens when its map has resolved,
 * blocking only to reuse a buffer (READ_RING steps later) or at the end. A wait on the GPU costs a
 * polling turn of the engine on top of the GPU's time (dawn.node under Deno: about 2 ms through
 * setTimeout(0), docs/webgpu.md "Polling"); read step by step, the batch-64 step on the H200 spent
 * 3.9 of its 23.4 ms there. Rows that finish are noticed up to READ_RING - 1 steps later; those
 * steps' tokens are ignored (the captured batch is fixed: finished rows decode on anyway).
 */
const READ_RING = 4;

/** Small buffers of one run: the choice's inputs and output, and staging buffers to read it. */
function runBuffers(device: GPUDevice, B: number, seeds: readonly number[]) {
  const mk = (label: string, words: Uint32Array) => {
    const b = device.createBuffer({ label, size: Math.max(16, words.byteLength), usage: STORAGE_COPY });
    device.queue.writeBuffer(b, 0, words);
    return b;
  };
  return {
    seeds: mk("sample-seeds", Uint32Array.from({ length: B }, (_, r) => seeds[r] ?? 0)),
    counters: mk("sample-counters", new Uint32Array(B)),
    out: mk("sample-out", new Uint32Array(2 * B)),
    staging: Array.from(
      { length: READ_RING },
      (_, i) =>
        device.createBuffer({ label: `sample-read-${i}`, size: Math.max(16, 8 * B), usage: MAP_READ | COPY_DST }),
    ),
    destroy(this: { seeds: GPUBuffer; counters: GPUBuffer; out: GPUBuffer; staging: GPUBuffer[] }) {
      for (const b of [this.seeds, this.counters, this.out, ...this.staging]) b.destroy();
    },
  };
}

/** Reads one step's (token, log-probability) pairs from a staging buffer and hands them to the rows. */
async function take(ctx: Run, staging: GPUBuffer, rowOf: readonly number[], step: number): Promise<boolean> {
  const t = performance.now();
  await staging.mapAsync(1);
  return takeMapped(ctx, staging, rowOf, step, t);
}

/** take() of a staging buffer already mapped; `t`: when the wait for it began (its time counts as the choice's). */
function takeMapped(ctx: Run, staging: GPUBuffer, rowOf: readonly number[], step: number, t: number): boolean {
  const words = new Uint32Array(staging.getMappedRange().slice(0, 8 * rowOf.length));
  staging.unmap();
  const lp = new Float32Array(words.buffer);
  const added: SampleProgress["added"] = [];
  let stopMs = 0;
  for (const [i, r] of rowOf.entries()) {
    const row = ctx.rows[r];
    if (row.done) continue;
    stopMs += acceptToken(row, words[2 * i], lp[2 * i + 1], ctx.params, ctx.eos, ctx.decode, !!ctx.timing);
    added.push({ prompt: row.prompt, index: row.index, token: words[2 * i] });
    ctx.generated++;
  }
  if (ctx.timing) {
    ctx.timing.chooseMs += performance.now() - t - stopMs;
    ctx.timing.stopMs += stopMs;
  }
  const finished = ctx.rows.filter((r) => r.done).length;
  ctx.onProgress?.({ step: step + 1, finished, total: ctx.rows.length, tokens: ctx.generated, added });
  return finished === ctx.rows.length;
}

/** The captured decode: prefill, fork, then replays with the choice and the state on the GPU. */
async function runCaptured(ctx: Run): Promise<void> {
  const { device, policy, prompts, n, params, timing } = ctx;
  const N = ctx.rows.length, V = policy.cfg.vocabSize;
  const lens = ctx.rows.map((r) => prompts[r.prompt].length);
  const maxLen = Math.max(...lens);
  // The prefill: under capture where its check passed (CapturedPrefill: rows from column 0), else the
  // policy's own graph (left-padded rows, a cache of its own freed once step 0's tokens are back).
  const usePf = await policy.capturedPrefillOk();
  const feeds = await policy.adapterFeedsNow();
  let t = performance.now();
  let prefillLogits: GPUBuffer, prefillCache: KvCache;
  let releasePrefill = () => {};
  if (usePf) {
    const pf = await policy.capturedPrefill(prompts.length, maxLen);
    const e = device.createCommandEncoder({ label: "captured-prefill-adapter" });
    pf.setAdapter(e, feeds);
    device.queue.submit([e.finish()]);
    await pf.run(prompts);
    prefillLogits = pf.logits;
    prefillCache = pf.cache;
  } else {
    const out = await policy.stepGpu(prefillInput(prompts).input);
    prefillLogits = out.logits.gpuBuffer;
    prefillCache = out.present;
    let held = true;
    releasePrefill = () => {
      if (held) {
        out.logits.dispose();
        policy.releaseCache(out.present);
      }
      held = false;
    };
  }
  // The prefill's GPU time counts as prefill (else it lands in the first decoding step's readback): one queue drain.
  if (timing) {
    await device.queue.onSubmittedWorkDone();
    timing.prefillMs += performance.now() - t;
  }
  t = performance.now();
  let bufs: ReturnType<typeof runBuffers> | null = null;
  const made: { destroy(): void }[] = [];
  // The read-back ring (READ_RING): one map per step, taken in step order; settled in finally.
  const reads: { step: number; ready: boolean; done: Promise<void> }[] = [];
  const rowOf = Array.from({ length: N }, (_, r) => r);
  try {
    const dec = await policy.capturedDecoder(N, maxLen + params.maxNewTokens);
    const B = dec.batch;
    bufs = runBuffers(device, B, ctx.rows.map((r) => rowSeed(params.seed, r.prompt, r.index)));
    const src0 = device.createBuffer({ label: "sample-src0", size: Math.max(16, 4 * B), usage: STORAGE_COPY });
    const srcI = device.createBuffer({ label: "sample-src", size: Math.max(16, 4 * B), usage: STORAGE_COPY });
    made.push(src0, srcI);
    device.queue.writeBuffer(src0, 0, Uint32Array.from({ length: B }, (_, r) => (r < N ? Math.floor(r / n) : 0)));
    device.queue.writeBuffer(srcI, 0, Uint32Array.from({ length: B }, (_, r) => r));
    const common = { seeds: bufs.seeds, counters: bufs.counters, out: bufs.out };
    const first = await TokenChooser.create(
      device,
      { ...common, logits: prefillLogits, src: src0 },
      B,
      V,
      V,
      choice(params),
    );
    const next = await TokenChooser.create(
      device,
      { ...common, logits: dec.logits, src: srcI },
      B,
      V,
      V,
      choice(params),
    );
    const advance = await DecodeAdvance.create(device, { chosen: bufs.out, ...dec.state }, B);
    made.push(first, next, advance);
    const staged = bufs.staging;
    const read = (step: number) => {
      const r = { step, ready: false, done: Promise.resolve() };
      r.done = staged[step % READ_RING].mapAsync(1).then(() => {
        r.ready = true;
      });
      r.done.catch(() => {}); // a map still pending when the run ends early is settled in finally
      reads.push(r);
    };
    const takeNext = async (wait: boolean) => {
      const r = reads[0];
      const t0 = performance.now();
      if (wait) await r.done;
      reads.shift();
      const fin = takeMapped(ctx, staged[r.step % READ_RING], rowOf, r.step, t0);
      if (r.step === 0) releasePrefill(); // its copies are done: step 0's tokens came back
      return fin;
    };
    const enc = device.createCommandEncoder({ label: "captured-load" });
    dec.setAdapter(enc, feeds);
    dec.load(enc, prefillCache, ctx.rows.map((r) => r.prompt), lens, usePf);
    first.encode(enc);
    advance.encode(enc);
    enc.copyBufferToBuffer(bufs.out, 0, bufs.staging[0], 0, 8 * B);
    device.queue.submit([enc.finish()]);
    read(0);
    if (timing) timing.repeatMs += performance.now() - t;
    let done = false;
    for (let step = 1; step < params.maxNewTokens && !done; step++) {
      // This step's staging buffer held step - READ_RING's tokens: those must have been taken.
      while (!done && reads.length > 0 && reads[0].step <= step - READ_RING) done = await takeNext(true);
      if (done) break;
      t = performance.now();
      await dec.run();
      if (timing) {
        timing.stepMs += performance.now() - t;
        timing.steps++;
      }
      const e = device.createCommandEncoder({ label: "captured-step" });
      next.encode(e);
      advance.encode(e);
      e.copyBufferToBuffer(bufs.out, 0, bufs.staging[step % READ_RING], 0, 8 * B);
      device.queue.submit([e.finish()]);
      read(step);
      // Earlier steps' tokens whose maps have resolved meanwhile, in order, without waiting.
      while (!done && reads.length > 0 && reads[0].ready) done = await takeNext(false);
    }
    while (!done && reads.length > 0) done = await takeNext(true);
  } finally {
    await device.queue.onSubmittedWorkDone();
    // Maps of steps past the end (rows all finished earlier) settle before their buffers go.
    await Promise.allSettled(reads.map((r) => r.done));
    releasePrefill();
    for (const m of made) m.destroy();
    bufs?.destroy();
  }
}

/** The policy's own graph step by step, choice on the GPU, finished rows leaving the batch. */
async function runDynamic(ctx: Run): Promise<void> {
  const { device, policy, prompts, n, params, timing, rows } = ctx;
  const N = rows.length, V = policy.cfg.vocabSize;
  let t = performance.now();
  const pre = prefillInput(prompts);
  let out = await policy.stepGpu(pre.input);
  if (timing) {
    await device.queue.onSubmittedWorkDone();
    timing.prefillMs += performance.now() - t;
  }
  t = performance.now();
  let cache = await policy.repeatCache(out.present, n);
  if (timing) timing.repeatMs += performance.now() - t;
  const seeds = rows.map((r) => rowSeed(params.seed, r.prompt, r.index));
  const bufs = runBuffers(device, N, seeds);
  const src = device.createBuffer({ label: "sample-src", size: Math.max(16, 4 * N), usage: STORAGE_COPY });
  const mask = rows.map((row) => Array.from({ length: pre.maxLen }, (_, i) => (i < pre.pad[row.prompt] ? 0 : 1)));
  let active = rows.map((_, r) => r);
  try {
    for (let step = 0; step < params.maxNewTokens; step++) {
      t = performance.now();
      // Row i of this step's logits is active[i] (the prefill's: its prompt); its draw is its token count.
      const q = device.queue;
      q.writeBuffer(src, 0, Uint32Array.from(active, (r, i) => (step === 0 ? Math.floor(r / n) : i)));
      q.writeBuffer(bufs.seeds, 0, Uint32Array.from(active, (r) => seeds[r]));
      q.writeBuffer(bufs.counters, 0, Uint32Array.from(active, (r) => rows[r].tokens.length));
      const chooser = await TokenChooser.create(
        device,
        { logits: out.logits.gpuBuffer, src, seeds: bufs.seeds, counters: bufs.counters, out: bufs.out },
        active.length,
        V,
        V,
        choice(params),
      );
      const enc = device.createCommandEncoder({ label: "sample-step" });
      chooser.encode(enc);
      enc.copyBufferToBuffer(bufs.out, 0, bufs.staging[0], 0, 8 * active.length);
      q.submit([enc.finish()]);
      if (timing) timing.chooseMs += performance.now() - t;
      const done = await take(ctx, bufs.staging[0], active, step);
      chooser.destroy();
      out.logits.dispose();
      if (done || step + 1 === params.maxNewTokens) break;
      const still = active.filter((r) => !rows[r].done);
      if (still.length < active.length) {
        t = performance.now();
        cache = await policy.selectCacheRows(cache, active.flatMap((r, i) => (rows[r].done ? [] : [i])));
        if (timing) timing.selectMs += performance.now() - t;
        active = still;
      }
      for (const m of mask) m.push(1);
      t = performance.now();
      out = await policy.stepGpu({
        ids: active.map((r) => [rows[r].tokens[rows[r].tokens.length - 1]]),
        mask: active.map((r) => mask[r]),
        positions: active.map((r) => [prompts[rows[r].prompt].length + rows[r].tokens.length - 1]),
        past: cache,
        keep: 1,
      });
      if (timing) {
        timing.stepMs += performance.now() - t;
        timing.steps++;
      }
      policy.releaseCache(cache);
      cache = out.present;
    }
  } finally {
    policy.releaseCache(cache);
    await device.queue.onSubmittedWorkDone();
    bufs.destroy();
    src.destroy();
  }
}
