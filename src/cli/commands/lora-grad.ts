// `rlvr lora-grad`: the gradient of a policy-gradient loss with respect to a LoRA adapter, computed
// by the WebGPU trainer and written as safetensors under the adapter's own PEFT tensor names.
import { parseFlags, req, UsageError } from "../args.ts";
import { parseConfig } from "../../model/config.ts";
import { loadWeights } from "../../model/hf.ts";
import { readPeftAdapter } from "../../model/peft.ts";
import { encodeTensor, type RawTensor, writeSafetensors } from "../../model/safetensors.ts";
import { readJson } from "../../model/source.ts";
import { DirSource } from "../../model/source.deno.ts";
import { requestGpu } from "../../gpu/device.ts";
import { destroyAdapter, destroyModel, halfProjections, uploadAdapter, uploadModel } from "../../gpu/model/state.ts";
import { loraGradients, type PgSequence } from "../../gpu/trainer/grad.ts";
import { readInputText } from "../inputs.ts";
import type { Command } from "./index.ts";

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Parses the --batch file: a JSON array of {"ids": [...], "prompt_len": k, "advantage": a}. */
export function parseGradBatch(json: unknown, vocabSize: number, file = "batch"): PgSequence[] {
  if (!Array.isArray(json) || json.length === 0) {
    throw new UsageError(`${file}: expected a non-empty JSON array of {"ids", "prompt_len", "advantage"}`);
  }
  return json.map((e: unknown, i) => {
    const at = `${file}[${i}]`;
    if (!isRecord(e)) throw new UsageError(`${at} is not an object`);
    const { ids, prompt_len: promptLen, advantage } = e;
    if (!Array.isArray(ids) || ids.length < 2) {
      throw new UsageError(`${at}.ids must be an array of at least 2 token ids`);
    }
    ids.forEach((id: unknown, t) => {
      if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id >= vocabSize) {
        throw new UsageError(`${at}.ids[${t}] = ${JSON.stringify(id)} is not a token id in [0, ${vocabSize})`);
      }
    });
    if (typeof promptLen !== "number" || !Number.isInteger(promptLen) || promptLen < 1 || promptLen > ids.length) {
      throw new UsageError(`${at}.prompt_len ${JSON.stringify(promptLen)} must be an integer in 1..${ids.length}`);
    }
    if (typeof advantage !== "number" || !Number.isFinite(advantage)) {
      throw new UsageError(`${at}.advantage ${JSON.stringify(advantage)} is not a finite number`);
    }
    return { ids: ids as number[], promptLen, advantage };
  });
}

export const command: Command = {
  name: "lora-grad",
  summary: "gradient of a policy-gradient loss with respect to a LoRA adapter",
  usage: [
    "rlvr lora-grad --model DIR --adapter DIR --batch FILE --out FILE.safetensors [--f32]",
    "",
    "  --model DIR     Hugging Face folder (config.json, model.safetensors or shards)",
    "  --adapter DIR   PEFT LoRA folder (adapter_config.json, adapter_model.safetensors)",
    '  --batch FILE    JSON array of {"ids": [...], "prompt_len": k, "advantage": a}',
    "  --out FILE      safetensors file receiving dL/d(every LoRA tensor), F32, under the adapter's names",
    "  --f32           keep the frozen projections f32 (default: f16 where the device has shader-f16 and",
    "                  config.json's torch_dtype is float16/bfloat16; RLVR_TRAINER_F32=1 does the same)",
    "",
    "L = -(sum_i a_i * sum_{t >= prompt_len_i} log p(ids_i[t] | ids_i[<t])) / sum_i (len_i - prompt_len_i)",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, {
      model: { type: "string" },
      adapter: { type: "string" },
      batch: { type: "string" },
      out: { type: "string" },
      f32: { type: "boolean" },
    });
    const modelDir = req(values, "model"),
      adapterDir = req(values, "adapter"),
      batchFile = req(values, "batch"),
      out = req(values, "out");
    const src = new DirSource(modelDir);
    const configJson = await readJson(src, "config.json");
    const cfg = parseConfig(configJson);
    const batchText = await readInputText(batchFile, "--batch");
    let batchJson: unknown;
    try {
      batchJson = JSON.parse(batchText);
    } catch (e) {
      throw new UsageError(`--batch ${batchFile} is not JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
    const seqs = parseGradBatch(batchJson, cfg.vocabSize, batchFile);
    const tokens = seqs.reduce((n, s) => n + s.ids.length - s.promptLen, 0);
    if (tokens === 0) {
      throw new UsageError(
        `${batchFile}: no completion tokens (every prompt_len equals its sequence length); the loss is undefined`,
      );
    }
    const weights = await loadWeights(src);
    const adapter = await readPeftAdapter(new DirSource(adapterDir), cfg);
    const gpu = await requestGpu();
    console.error(
      `lora-grad: ${cfg.arch}, ${cfg.numLayers} layers, LoRA r=${adapter.r} alpha=${adapter.alpha} on ${
        adapter.targets.join(",")
      }; ${seqs.length} sequences, ${tokens} completion tokens`,
    );
    const f16 = typeof configJson === "object" && configJson !== null && !Array.isArray(configJson) &&
      halfProjections(gpu.device, configJson as Record<string, unknown>, { forceF32: values.f32 === true });
    const model = uploadModel(gpu.device, cfg, weights, { f16 });
    console.error(`lora-grad: frozen projections ${model.half.size > 0 ? "f16" : "f32"}`);
    const lora = uploadAdapter(gpu.device, cfg, adapter);
    const res = await loraGradients(model, lora, seqs);
    const raw = new Map<string, RawTensor>();
    let sumsq = 0;
    for (const name of adapter.tensors.keys()) {
      const g = res.grads.get(name);
      if (!g) throw new Error(`lora-grad: no gradient computed for ${name}`);
      for (const x of g.data) sumsq += x * x;
      raw.set(name, encodeTensor(g, "F32"));
    }
    await Deno.writeFile(
      out,
      writeSafetensors(raw, { format: "pt", loss: String(res.loss), tokens: String(res.tokens) }),
    );
    destroyAdapter(lora);
    destroyModel(model);
    console.error(
      `lora-grad: loss ${res.loss.toPrecision(8)}, gradient norm ${
        Math.sqrt(sumsq).toPrecision(6)
      }, ${raw.size} tensors -> ${out}`,
    );
    return {
      out,
      weights: model.half.size > 0 ? "f16" : "f32",
      loss: res.loss,
      tokens: res.tokens,
      sequences: seqs.length,
      tensors: raw.size,
      gradNorm: Math.sqrt(sumsq),
    };
  },
};
