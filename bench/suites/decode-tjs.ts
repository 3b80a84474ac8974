// The decode suite's process for transformers.js (bench/suites/decode.ts runs it; bench/run.ts does not): the browser
// peer of issue 51 — transformers.js v4 (`@huggingface/transformers`, its web build on onnxruntime-web's WebGPU EP)
// generating from the same q4 model shape as bench/suites/decode-ours.ts: our q4 graph (MatMulNBits projections,
// GroupQueryAttention, f32 embedding and head: Dawn on NVIDIA has no shader-f16) built with `logprobs: false`, so it
// has exactly the inputs and outputs transformers.js feeds (input_ids, attention_mask, position_ids,
// num_logits_to_keep, past_key_values.*). The graph and a config.json are served from memory over a local HTTP server
// (its web build fetches models; under Deno it runs as "Deno's web runtime"), as are ORT's wasm files.
// Timing as bench/torch/generate.py: warm-up, first token = generate(max_new_tokens=1) (median of 3), then
// full generates of `newTokens` (min_new_tokens the same, no EOS in reach of a random model's row all ending),
// pure sampling (temperature 1, top_k 0); decode tok/s = B (new - 1) / (full - first).
// Usage: deno run -A bench/suites/decode-tjs.ts [--webgpu dawn|deno] TJS_MODULE ORT_DIST [preset=qwen2.5-0.5b]
//          [batches=8,64] [promptLen=128] [newTokens=256] [reps=3] [out=FILE.json] [budget=SECONDS] [externalMinBytes=1048576]
// TJS_MODULE: a self-contained ES module of transformers.js's web build (bench/suites/peers-prep.sh bundles it);
// ORT_DIST: the folder holding the ort-wasm-simd-threaded.asyncify.{mjs,wasm} of the onnxruntime-web it was built with.
import { args as benchArgs, webgpu } from "../engine.ts";
import { buildDecoder } from "../../src/model/onnx/decoder.ts";
import { makeTinyModel } from "../../src/model/tiny.ts";
import { type Shape, SHAPES } from "../shapes.ts";

const positional = benchArgs.filter((a) => !/^[a-zA-Z]+=/.test(a));
const named = Object.fromEntries(
  benchArgs.filter((a) => /^[a-zA-Z]+=/.test(a)).map((a) => a.split("=") as [string, string]),
);
const [tjsModule, ortDist] = positional;
if (!tjsModule || !ortDist) {
  throw new Error(
    "usage: decode-tjs.ts TJS_MODULE ORT_DIST [preset=] [batches=] [promptLen=] [newTokens=] [reps=] [out=] [budget=]",
  );
}
const preset = (named.preset ?? "qwen2.5-0.5b") as Shape;
if (!(preset in SHAPES)) throw new Error(`preset: one of ${Object.keys(SHAPES).join(", ")}`);
const batches = (named.batches ?? "8,64").split(",").map(Number);
const promptLen = Number(named.promptLen ?? 128),
  newTokens = Number(named.newTokens ?? 256),
  reps = Number(named.reps ?? 3);
const budget = Number(named.budget ?? Infinity);
const t0 = performance.now();
const elapsed = () => (performance.now() - t0) / 1000;

// Minimal shapes of what this bench touches in transformers.js.
interface TjsTensor {
  dims: number[];
}
interface TjsModel {
  generate(o: Record<string, unknown>): Promise<TjsTensor>;
  dispose(): Promise<unknown>;
}
interface Tjs {
  env: {
    version?: string;
    allowRemoteModels: boolean;
    allowLocalModels: boolean;
    remoteHost: string;
    remotePathTemplate: string;
    useBrowserCache: boolean;
    useWasmCache: boolean;
    logLevel?: unknown;
    backends: { onnx: { wasm: { wasmPaths: unknown; numThreads: number; proxy: boolean } } };
  };
  AutoModelForCausalLM: { from_pretrained(id: string, o: Record<string, unknown>): Promise<TjsModel> };
  Tensor: new (type: string, data: BigInt64Array, dims: number[]) => TjsTensor;
  version?: string;
}

const shape = SHAPES[preset];
const result: Record<string, unknown> = {
  engine: "transformers.js",
  webgpu,
  preset,
  dtype: "q4",
  promptLen,
  newTokens,
  reps,
  runs: [] as unknown[],
  errors: [] as string[],
};
const save = async () => {
  if (named.out) await Deno.writeTextFile(named.out, JSON.stringify(result, null, 1));
};

let t = performance.now();
const m = makeTinyModel("qwen2", { seed: 1, ...shape, tieWordEmbeddings: true });
const built = buildDecoder(m.config, m.weights, {
  dtype: "q4",
  attention: "gqa",
  kvCache: true,
  maxPositions: promptLen + newTokens + 8,
  shaderF16: false,
  logprobs: false,
  externalMinBytes: Number(named.externalMinBytes ?? 2 ** 20),
});
result.graphSeconds = (performance.now() - t) / 1000;
const files = new Map<string, Uint8Array>();
files.set("/m/onnx/model_q4.onnx", built.bytes);
for (const e of built.external) files.set(`/m/onnx/${e.path}`, e.data);
const cfg = m.config;
const config = {
  architectures: ["Qwen2ForCausalLM"],
  model_type: "qwen2",
  vocab_size: cfg.vocabSize,
  hidden_size: cfg.hiddenSize,
  intermediate_size: shape.intermediate,
  num_hidden_layers: cfg.numLayers,
  num_attention_heads: cfg.numHeads,
  num_key_value_heads: cfg.numKvHeads,
  head_dim: cfg.headDim,
  max_position_embeddings: promptLen + newTokens + 8,
  tie_word_embeddings: true,
  bos_token_id: 0,
  eos_token_id: 1,
  torch_dtype: "float32",
};
files.set("/m/config.json", new TextEncoder().encode(JSON.stringify(config)));
files.set("/m/generation_config.json", new TextEncoder().encode(JSON.stringify({ bos_token_id: 0, eos_token_id: 1 })));
for (const f of ["ort-wasm-simd-threaded.asyncify.mjs", "ort-wasm-simd-threaded.asyncify.wasm"]) {
  files.set(`/ort/${f}`, await Deno.readFile(`${ortDist}/${f}`));
}
const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
  const p = new URL(req.url).pathname;
  const body = files.get(p);
  if (!body) return new Response("not found", { status: 404 });
  const types: Record<string, string> = { json: "application/json", mjs: "text/javascript", wasm: "application/wasm" };
  const type = types[p.slice(p.lastIndexOf(".") + 1)] ?? "application/octet-stream";
  return new Response(body as Uint8Array<ArrayBuffer>, {
    headers: { "content-type": type, "content-length": String(body.byteLength) },
  });
});
const host = `http://127.0.0.1:${server.addr.port}`;

const tjs = (await import(new URL(tjsModule, `file://${Deno.cwd()}/`).href)) as Tjs;
result.transformersJs = tjs.env.version ?? "?";
tjs.env.allowLocalModels = false;
tjs.env.allowRemoteModels = true;
tjs.env.remoteHost = `${host}/`;
tjs.env.remotePathTemplate = "{model}/";
tjs.env.useBrowserCache = false;
tjs.env.backends.onnx.wasm.wasmPaths = {
  mjs: `${host}/ort/ort-wasm-simd-threaded.asyncify.mjs`,
  wasm: `${host}/ort/ort-wasm-simd-threaded.asyncify.wasm`,
};
tjs.env.backends.onnx.wasm.numThreads = 1;

t = performance.now();
const externalData = built.external.map((e) => ({ path: e.path, data: `onnx/${e.path}` }));
const model = await tjs.AutoModelForCausalLM.from_pretrained("m", {
  device: "webgpu",
  dtype: "q4",
  session_options: { externalData },
});
result.sessionSeconds = (performance.now() - t) / 1000;
console.log(
  `transformers.js ${result.transformersJs}: ${preset} q4 graph ${
    (result.graphSeconds as number).toFixed(1)
  } s (${built.external.length} external files), session ${(result.sessionSeconds as number).toFixed(1)} s (${webgpu})`,
);

let seed = 7;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
async function gen(B: number, ids: BigInt64Array, n: number): Promise<number> {
  const input_ids = new tjs.Tensor("int64", ids, [B, promptLen]);
  const attention_mask = new tjs.Tensor("int64", new BigInt64Array(B * promptLen).fill(1n), [B, promptLen]);
  const s = performance.now();
  const out = await model.generate({
    input_ids,
    attention_mask,
    max_new_tokens: n,
    min_new_tokens: n,
    do_sample: true,
    temperature: 1,
    top_k: 0,
    top_p: 1,
  });
  const dt = (performance.now() - s) / 1000;
  if (out.dims[1] !== promptLen + n) throw new Error(`generated ${out.dims[1] - promptLen} tokens, expected ${n}`);
  return dt;
}
for (const B of batches) {
  if (elapsed() > budget) {
    (result.errors as string[]).push(`B=${B}: skipped (budget ${budget} s)`);
    continue;
  }
  try {
    // Ids from the low range every tokenizer shape shares (the demo tokenizer's 8192), never 0 or 1 (bos / eos).
    const ids = BigInt64Array.from(
      { length: B * promptLen },
      () => BigInt(2 + Math.floor(rand() * Math.min(cfg.vocabSize - 2, 8000))),
    );
    await gen(B, ids, 4); // warm-up: pipelines, buffers
    const first = [await gen(B, ids, 1), await gen(B, ids, 1), await gen(B, ids, 1)];
    const full: number[] = [];
    for (let r = 0; r < reps && (r === 0 || elapsed() < budget); r++) full.push(await gen(B, ids, newTokens));
    const ft = median(first), dt = median(full);
    const run = {
      batch: B,
      seconds: dt,
      allSeconds: full,
      tokensPerSecond: B * newTokens / dt,
      decodeTokensPerSecond: B * (newTokens - 1) / (dt - ft),
      msPerStep: (dt - ft) * 1000 / (newTokens - 1),
      firstTokenSeconds: ft,
      firstTokenAll: first,
      minSeconds: Math.min(...full),
    };
    (result.runs as unknown[]).push(run);
    console.log(
      `transformers.js B=${B}: ${B} x ${newTokens} in ${dt.toFixed(2)} s (median of ${full.length}; min ${
        run.minSeconds.toFixed(2)
      }) = ${run.tokensPerSecond.toFixed(0)} tok/s, ${run.msPerStep.toFixed(1)} ms/step after a first token of ${
        (ft * 1000).toFixed(0)
      } ms`,
    );
  } catch (e) {
    const msg = e instanceof Error ? `${e.message}\n${e.stack ?? ""}` : String(e);
    console.error(`transformers.js B=${B}: ${msg}`);
    (result.errors as string[]).push(`B=${B}: ${msg.split("\n")[0]}`);
  }
  await save();
}
await save();
await model.dispose();
await server.shutdown();
Deno.exit(0);
