// `rlvr logprobs`: per-token log-probabilities of token-id sequences under a model (and adapter),
// computed by the ONNX policy on onnxruntime-web's WebGPU provider (engine "ort") or by the WGSL
// trainer's own teacher-forced forward pass (engine "webgpu"); the two must agree.
import { parseFlags, req, UsageError } from "../args.ts";
import { parseConfig, validateWeights } from "../../model/config.ts";
import { loadWeights } from "../../model/hf.ts";
import { WEIGHT_DTYPES, type WeightDtype } from "../../model/onnx/decoder.ts";
import { readPeftAdapter } from "../../model/peft.ts";
import { OrtPolicy } from "../../model/policy.ts";
import { readJson } from "../../model/source.ts";
import { DirSource } from "../../model/source.deno.ts";
import type { ModelConfig } from "../../model/config.ts";
import type { LoraAdapter } from "../../model/lora.ts";
import type { Weights } from "../../model/tensor.ts";
import { readInputJson } from "../inputs.ts";
import type { Command } from "./index.ts";

/** The WGSL trainer's forward pass (src/gpu/trainer/logprobs.ts) on this machine's WebGPU device. */
async function webgpuLogprobs(
  cfg: ModelConfig,
  weights: Weights,
  ids: number[][],
  adapter: LoraAdapter | null,
  dtype: WeightDtype,
  out: string,
): Promise<Record<string, unknown>> {
  const { requestGpu } = await import("../../gpu/device.ts");
  const { destroyModel, forceF32Env, uploadModel } = await import("../../gpu/model/state.ts");
  const { logprobsWebgpu } = await import("../../gpu/trainer/logprobs.ts");
  const gpu = await requestGpu();
  const t0 = performance.now();
  // f16: the frozen projections stored as f16 where the device has shader-f16 (f32 otherwise, or with RLVR_TRAINER_F32=1).
  const model = uploadModel(
    gpu.device,
    cfg,
    weights,
    dtype === "q4" ? { q4: true } : { f16: dtype === "f16" && !forceF32Env() },
  );
  const stored = dtype === "q4" ? "q4" : model.half.size > 0 ? "f16" : "f32";
  if (dtype === "f16" && stored === "f32") {
    console.error(
      `logprobs: f16 asked, but ${
        gpu.f16 ? "RLVR_TRAINER_F32=1 is set" : "this device has no shader-f16"
      }: f32 weights`,
    );
  }
  try {
    const t1 = performance.now();
    const lp = await logprobsWebgpu(model, ids, adapter ?? undefined);
    const t2 = performance.now();
    await Deno.writeTextFile(out, JSON.stringify(lp));
    const tokens = ids.reduce((s, x) => s + x.length, 0);
    console.error(
      `logprobs: ${ids.length} sequences, ${tokens} tokens on the WGSL trainer (${stored}) in ${
        ((t2 - t1) / 1000).toFixed(2)
      } s (upload ${((t1 - t0) / 1000).toFixed(2)} s)`,
    );
    return {
      engine: "webgpu",
      provider: gpu.info.description || gpu.info.architecture || gpu.info.vendor,
      dtype: stored,
      adapter: adapter ? "loaded" : null,
      sequences: ids.length,
      tokens,
      out,
      seconds: (t2 - t1) / 1000,
    };
  } finally {
    destroyModel(model);
    gpu.device.destroy();
  }
}

const ENGINES = ["ort", "webgpu"] as const;

/** Parses the --ids file: a JSON array of non-empty token-id arrays within the vocabulary. */
export function parseIdsFile(json: unknown, vocabSize: number, file = "ids"): number[][] {
  if (!Array.isArray(json) || json.length === 0) {
    throw new UsageError(`${file}: expected a non-empty JSON array of token-id arrays`);
  }
  return json.map((seq: unknown, i) => {
    if (!Array.isArray(seq) || seq.length === 0) {
      throw new UsageError(`${file}[${i}] is not a non-empty array of token ids`);
    }
    return seq.map((id: unknown, t) => {
      if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= vocabSize) {
        throw new UsageError(`${file}[${i}][${t}] = ${JSON.stringify(id)} is not a token id in [0, ${vocabSize})`);
      }
      return id;
    });
  });
}

/** The --dtype flag, checked. */
export function dtypeFlag(v: unknown): WeightDtype {
  const d = v ?? "f32";
  const ok = WEIGHT_DTYPES.find((x) => x === d);
  if (!ok) throw new UsageError(`--dtype must be one of ${WEIGHT_DTYPES.join(", ")}, got ${JSON.stringify(d)}`);
  return ok;
}

export const command: Command = {
  name: "logprobs",
  summary: "per-token log-probabilities of token ids under a model (ort or webgpu engine)",
  usage: [
    "rlvr logprobs --model DIR --ids FILE --out FILE [--engine ort|webgpu] [--dtype f32|f16|q4] [--adapter DIR]",
    "",
    "  --model DIR     Hugging Face folder (config.json, model.safetensors or shards)",
    "  --ids FILE      JSON array of token-id arrays",
    "  --out FILE      receives a JSON array of arrays: out[i][t] = log p(ids[i][t+1] | ids[i][0..t])",
    "  --engine E      ort (default): the ONNX policy on onnxruntime-web (WebGPU EP, WASM fallback);",
    "                  webgpu: the WGSL trainer's forward pass",
    "  --dtype D       weights: f32 (default), f16, q4 (MatMulNBits, block 32); for the webgpu engine f16 stores",
    "                  the frozen projections as f16 where the device has shader-f16 (f32 otherwise, or with",
    "                  RLVR_TRAINER_F32=1)",
    "  --adapter DIR   PEFT LoRA folder (adapter_config.json, adapter_model.safetensors)",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, {
      model: { type: "string" },
      ids: { type: "string" },
      out: { type: "string" },
      engine: { type: "string" },
      dtype: { type: "string" },
      adapter: { type: "string" },
    });
    const modelDir = req(values, "model"), idsFile = req(values, "ids"), out = req(values, "out");
    const engine = ENGINES.find((e) => e === (values.engine ?? "ort"));
    if (!engine) {
      throw new UsageError(`--engine must be one of ${ENGINES.join(", ")}, got ${JSON.stringify(values.engine)}`);
    }
    const dtype = dtypeFlag(values.dtype);
    const src = new DirSource(modelDir);
    const cfg = parseConfig(await readJson(src, "config.json"));
    const idsJson = await readInputJson(idsFile, "--ids");
    const ids = parseIdsFile(idsJson, cfg.vocabSize, idsFile);
    const weights = await loadWeights(src);
    validateWeights(cfg, weights);
    const adapter = typeof values.adapter === "string"
      ? await readPeftAdapter(new DirSource(values.adapter), cfg)
      : null;
    const maxLen = Math.max(...ids.map((s) => s.length));
    if (maxLen > cfg.maxPositionEmbeddings) {
      throw new UsageError(
        `a sequence has ${maxLen} tokens; the model's context is ${cfg.maxPositionEmbeddings} positions`,
      );
    }
    if (engine === "webgpu") return await webgpuLogprobs(cfg, weights, ids, adapter, dtype, out);
    const t0 = performance.now();
    const policy = await OrtPolicy.create(cfg, weights, {
      dtype,
      loraTargets: adapter?.targets ?? [],
      maxPositions: maxLen,
      onNote: (m) => console.error(m),
    });
    try {
      if (adapter) policy.setAdapter(adapter, typeof values.adapter === "string" ? values.adapter : null);
      const t1 = performance.now();
      const lp = await policy.logprobs(ids);
      const t2 = performance.now();
      await Deno.writeTextFile(out, JSON.stringify(lp));
      const tokens = ids.reduce((s, x) => s + x.length, 0);
      console.error(
        `logprobs: ${ids.length} sequences, ${tokens} tokens on ${policy.provider} (${dtype}: ${policy.precision}; ${policy.attention} attention) in ${
          ((t2 - t1) / 1000).toFixed(2)
        } s (session ${((t1 - t0) / 1000).toFixed(2)} s)`,
      );
      return {
        engine,
        provider: policy.provider,
        dtype,
        precision: policy.precision,
        attention: policy.attention,
        adapter: policy.adapterName,
        sequences: ids.length,
        tokens,
        out,
        seconds: (t2 - t1) / 1000,
      };
    } finally {
      await policy.release();
    }
  },
};
