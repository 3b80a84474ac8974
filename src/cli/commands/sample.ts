// `rlvr sample`: G completions per prompt from the ONNX policy (WebGPU EP), with the sampling
// controls of the recipe; prompts are plain strings or chat messages rendered by the model's template.
import { int, num, parseFlags, req, SEED, UsageError } from "../args.ts";
import { ChatTemplate } from "../../core/chat-template.ts";
import type { ChatMessage } from "../../core/prompts.ts";
import { loadHfModel } from "../../model/hf.ts";
import { readPeftAdapter } from "../../model/peft.ts";
import { OrtPolicy } from "../../model/policy.ts";
import { sampleBatch, type SamplingParams } from "../../model/sampler.ts";
import { DirSource } from "../../model/source.deno.ts";
import { readInputJson } from "../inputs.ts";
import type { Command } from "./index.ts";
import { dtypeFlag } from "./logprobs.ts";

/** A prompt as given: raw text, or messages for the chat template. */
export type PromptInput = string | ChatMessage[];

const ROLES = ["system", "user", "assistant"] as const;

function isMessage(x: unknown): x is ChatMessage {
  if (typeof x !== "object" || x === null) return false;
  const m = x as Record<string, unknown>;
  return ROLES.some((r) => r === m.role) && typeof m.content === "string";
}

/** Parses the --prompts file: a JSON array of strings or of [{role, content}, ...] arrays. */
export function parsePromptsFile(json: unknown, file = "prompts"): PromptInput[] {
  if (!Array.isArray(json) || json.length === 0) {
    throw new UsageError(`${file}: expected a non-empty JSON array of strings or of chat-message arrays`);
  }
  return json.map((p: unknown, i): PromptInput => {
    if (typeof p === "string") return p;
    if (Array.isArray(p) && p.length > 0 && p.every(isMessage)) {
      return p.map((m) => ({ role: m.role, content: m.content }));
    }
    throw new UsageError(
      `${file}[${i}] is neither a string nor an array of {"role": "system"|"user"|"assistant", "content": string}`,
    );
  });
}

export const command: Command = {
  name: "sample",
  summary: "sample completions for prompts with the ONNX policy on WebGPU",
  usage: [
    "rlvr sample --model DIR --prompts FILE --out FILE [--n G] [sampling flags] [--dtype f32|f16|q4] [--adapter DIR]",
    "",
    "  --prompts FILE        JSON array of strings (used as they are) or of chat-message arrays",
    "                        (rendered through the model's chat template with the generation prompt)",
    "  --n G                 samples per prompt (default 1)",
    "  --temperature T       default 1; 0 is greedy",
    "  --top-p P             default 1 (off)      --top-k K   default 0 (off)",
    "  --min-p P             default 0 (off)      --max-new-tokens N   default 256",
    "  --stop S              stop string (repeatable); EOS ids come from config/generation_config",
    "  --seed S              default 0; the same seed gives the same samples",
    "  --out FILE            JSON array of {prompt, index, text, tokens, logprobs, finish_reason};",
    "                        logprobs are under the model's temperature-1 distribution",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, {
      model: { type: "string" },
      prompts: { type: "string" },
      out: { type: "string" },
      n: { type: "string" },
      temperature: { type: "string" },
      "top-p": { type: "string" },
      "top-k": { type: "string" },
      "min-p": { type: "string" },
      "max-new-tokens": { type: "string" },
      seed: { type: "string" },
      stop: { type: "string", multiple: true },
      dtype: { type: "string" },
      adapter: { type: "string" },
    });
    const modelDir = req(values, "model"), promptsFile = req(values, "prompts"), out = req(values, "out");
    const dtype = dtypeFlag(values.dtype);
    const promptsJson = await readInputJson(promptsFile, "--prompts");
    const inputs = parsePromptsFile(promptsJson, promptsFile);
    const stop = Array.isArray(values.stop) ? values.stop : [];
    const model = await loadHfModel(new DirSource(modelDir));
    const params: SamplingParams = {
      temperature: num(values, "temperature", 1, { min: 0, max: 100 }),
      topP: num(values, "top-p", 1, { min: 0, max: 1 }),
      topK: int(values, "top-k", 0, 0, 2 ** 24),
      minP: num(values, "min-p", 0, { min: 0, max: 1 }),
      maxNewTokens: int(values, "max-new-tokens", 256, 1, 2 ** 24),
      stop,
      eosTokenIds: model.config.eosTokenIds,
      seed: num(values, "seed", 0, SEED),
    };
    const n = int(values, "n", 1, 1, 4096);
    const tok = model.tokenizer;
    let template: ChatTemplate | null = null;
    const prompts = inputs.map((p, i) => {
      if (typeof p === "string") return tok.encode(p, { addSpecialTokens: true });
      if (!model.chatTemplate) {
        throw new UsageError(`prompt ${i} is a chat-message array but ${modelDir} has no chat template`);
      }
      let text: string;
      try {
        template ??= new ChatTemplate(model.chatTemplate, { bos_token: tok.bos?.token, eos_token: tok.eos?.token });
        text = template.render(p);
      } catch (e) {
        throw new Error(`${modelDir}: ${e instanceof Error ? e.message : String(e)}`);
      }
      return tok.encode(text, { addSpecialTokens: false });
    });
    const adapter = typeof values.adapter === "string"
      ? await readPeftAdapter(new DirSource(values.adapter), model.config)
      : null;
    const maxLen = Math.max(...prompts.map((p) => p.length));
    if (maxLen + params.maxNewTokens > model.config.maxPositionEmbeddings) {
      throw new UsageError(
        `the longest prompt has ${maxLen} tokens; with --max-new-tokens ${params.maxNewTokens} that exceeds the model's context of ${model.config.maxPositionEmbeddings} positions`,
      );
    }
    const policy = await OrtPolicy.create(model.config, model.weights, {
      dtype,
      loraTargets: adapter?.targets ?? [],
      maxPositions: maxLen + params.maxNewTokens,
      onNote: (m) => console.error(m),
    });
    try {
      if (adapter) policy.setAdapter(adapter, typeof values.adapter === "string" ? values.adapter : null);
      const t0 = performance.now();
      const decode = (ids: readonly number[]) => (ids.length ? tok.decode(ids) : "");
      let last = 0;
      const samples = await sampleBatch(policy, prompts, n, params, decode, (p) => {
        const now = performance.now();
        if (now - last > 1000 || p.finished === p.total) {
          last = now;
          console.error(
            `sample: step ${p.step}, ${p.finished}/${p.total} finished, ${p.tokens} tokens, ${
              (p.tokens / ((now - t0) / 1000)).toFixed(1)
            } tok/s`,
          );
        }
      });
      const seconds = (performance.now() - t0) / 1000;
      const rows = samples.map((s) => ({
        prompt: s.prompt,
        index: s.index,
        text: s.text,
        tokens: s.tokens,
        logprobs: s.logprobs,
        finish_reason: s.finishReason,
      }));
      await Deno.writeTextFile(out, JSON.stringify(rows, null, 1));
      const tokens = samples.reduce((a, s) => a + s.tokens.length, 0);
      return {
        provider: policy.provider,
        dtype,
        adapter: policy.adapterName,
        prompts: prompts.length,
        samples: samples.length,
        tokens,
        seconds,
        tokensPerSecond: tokens / seconds,
        out,
      };
    } finally {
      await policy.release();
    }
  },
};
