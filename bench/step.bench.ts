// Benchmark (not a test): where one decoding step of the ORT policy spends its time, by KV length
// and batch. A random model of the given shape (default: the shipped demo model's, 15.7M
// parameters), prefilled with `past` random tokens, then decoding steps fed from the GPU cache as
// the sampler does. Per step: the whole `policy.step` (feeds, session.run, logits read-back), and
// split off the CPU-side parts measured with performance.now(). `same=1` also times steps that
// repeat one shape (the cache of length P fed again, not grown), to separate per-shape costs
// (ORT's per-shape kernel and pipeline set-up) from per-step costs.
// Usage: deno run -A bench/step.bench.ts [pasts=64,256,768] [batches=1,4,16] [steps=8] [dtype=f32] [same=1] [preset=demo|small]
import { args as benchArgs, webgpu } from "./engine.ts";
import { Rng } from "../src/core/rng.ts";
import { WEIGHT_DTYPES } from "../src/model/onnx/decoder.ts";
import { type KvCache, OrtPolicy } from "../src/model/policy.ts";
import { chooseToken, DEFAULT_SAMPLING } from "../src/model/sampler.ts";
import { makeTinyModel } from "../src/model/tiny.ts";

const PRESETS = {
  // public/model's config.json: Qwen2, hidden 384, 8 layers, 6 heads / 2 kv heads of 64, vocab 8192, tied.
  demo: { hidden: 384, layers: 8, heads: 6, kvHeads: 2, headDim: 64, intermediate: 1024, vocabSize: 8192 },
  small: { hidden: 256, layers: 4, heads: 8, kvHeads: 2, headDim: 32, intermediate: 704, vocabSize: 8192 },
} as const;
const named = Object.fromEntries(benchArgs.map((a) => a.split("=") as [string, string]));
const pasts = (named.pasts ?? "64,256,768").split(",").map(Number);
const batches = (named.batches ?? "1,4,16").split(",").map(Number);
const steps = Number(named.steps ?? 8);
const same = named.same === "1";
const dtype = WEIGHT_DTYPES.find((d) => d === (named.dtype ?? "f32"));
if (!dtype) throw new Error(`dtype must be one of ${WEIGHT_DTYPES.join(", ")}`);
const preset = (named.preset ?? "demo") as keyof typeof PRESETS;
if (!(preset in PRESETS)) throw new Error(`preset: one of ${Object.keys(PRESETS).join(", ")}`);

const m = makeTinyModel("qwen2", { seed: 1, ...PRESETS[preset], tieWordEmbeddings: true });
const maxPositions = Math.max(...pasts) + steps + 2;
let t0 = performance.now();
const policy = await OrtPolicy.create(m.config, m.weights, { dtype, maxPositions });
console.log(`${preset} ${dtype} on ${policy.provider} (webgpu: ${webgpu}): graph + session ${((performance.now() - t0) / 1000).toFixed(1)} s`);
const V = m.config.vocabSize;
const rng = new Rng(7);
const greedy = { ...DEFAULT_SAMPLING, temperature: 0 };
const ms = (xs: number[]) => xs.length ? (xs.reduce((s, x) => s + x, 0) / xs.length).toFixed(1) : "-";
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

for (const B of batches) {
  for (const P of pasts) {
    const ids = Array.from({ length: B }, () => Array.from({ length: P }, () => rng.int(V)));
    const mask = ids.map((r) => r.map(() => 1));
    t0 = performance.now();
    const pre = await policy.step({ ids, mask, positions: ids.map((r) => r.map((_, t) => t)), past: null, keep: 1 });
    const prefill = performance.now() - t0;
    let cache: KvCache = pre.present;
    let logits = pre.logits;
    const stepMs: number[] = [], sampleMs: number[] = [], feedMs: number[] = [];
    for (let s = 0; s < steps; s++) {
      const ts = performance.now();
      const next = Array.from({ length: B }, (_, b) => [chooseToken(logits.subarray(b * V, (b + 1) * V), greedy, rng).token]);
      sampleMs.push(performance.now() - ts);
      for (const r of mask) r.push(1);
      // The int64 feeds runGraph builds from number[][] (the mask is the large one: B x T).
      t0 = performance.now();
      BigInt64Array.from(mask.flat(), (v) => BigInt(v));
      BigInt64Array.from(next.flat(), (v) => BigInt(v));
      feedMs.push(performance.now() - t0);
      t0 = performance.now();
      const out = await policy.step({ ids: next, mask, positions: next.map(() => [P + s]), past: cache, keep: 1 });
      stepMs.push(performance.now() - t0);
      policy.releaseCache(cache);
      cache = out.present;
      logits = out.logits;
    }
    // Same shape again: the last cache (length P + steps) fed repeatedly.
    const sameMs: number[] = [];
    if (same) {
      const L = cache.length;
      const m2 = mask.map((r) => [...r, 1]);
      for (let s = 0; s < steps; s++) {
        t0 = performance.now();
        const out = await policy.step({ ids: ids.map(() => [1]), mask: m2, positions: ids.map(() => [L]), past: cache, keep: 1 });
        sameMs.push(performance.now() - t0);
        policy.releaseCache(out.present);
      }
    }
    policy.releaseCache(cache);
    console.log(
      `batch ${B}, past ${P}: prefill ${prefill.toFixed(0)} ms; step (growing cache) mean ${ms(stepMs)} ms, median ${median(stepMs).toFixed(1)}, first ${stepMs[0].toFixed(1)}, ` +
        `last ${stepMs.at(-1)!.toFixed(1)}; argmax over ${B} x ${V} ${ms(sampleMs)} ms; int64 feeds ${ms(feedMs)} ms` + (same ? `; same shape repeated: median ${median(sameMs).toFixed(1)} ms (first ${sameMs[0].toFixed(1)})` : ""),
    );
  }
}
await policy.release();
Deno.exit(0);
