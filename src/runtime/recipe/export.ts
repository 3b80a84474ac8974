// Exports: the adapter as a PEFT folder, the training prompts with gold SQL as JSONL (for
// training elsewhere), and the run's hyperparameters as a TRL GRPOConfig + PEFT LoraConfig.
import type { GrpoParams, ModelParams } from "../../core/notebook-params.ts";
import type { Task } from "../../core/types.ts";
import { peftFiles } from "../../model/peft.ts";
import type { FileStore } from "../store.ts";
import type { ModelRuntime } from "./model-runtime.ts";
import type { TaskPrompt } from "./prompting.ts";

/** TRL's loss_type for our aggregation: token-mean is DAPO's, seq-mean-token-mean GRPO's, the constant-normalised sum Dr. GRPO's. */
export function trlLossType(aggregation: GrpoParams["aggregation"]): "dapo" | "grpo" | "dr_grpo" {
  switch (aggregation) {
    case "token-mean":
      return "dapo";
    case "seq-mean-token-mean":
      return "grpo";
    case "seq-mean-token-sum-norm":
      return "dr_grpo";
  }
}

/** A run's hyperparameters for TRL: GRPOConfig keyword arguments, PEFT LoraConfig ones, and what does not carry over. */
export interface TrlExport {
  grpo_config: Record<string, number | string>;
  peft_config: {
    r: number;
    lora_alpha: number;
    lora_dropout: number;
    target_modules: string[];
    task_type: "CAUSAL_LM";
    bias: "none";
  };
  notes: string[];
}

/** TRL GRPOConfig fields (TRL's names) and a PEFT LoraConfig for a GRPO cell and model cell, with notes on what does not map. */
export function trlConfig(
  g: GrpoParams,
  m: Pick<ModelParams, "loraRank" | "loraAlpha">,
  targets: readonly string[],
  o: { maxSteps?: number | null; seed?: number | null } = {},
): TrlExport {
  const notes: string[] = [
    "per_device_train_batch_size = batchQuestions * G on one device with gradient_accumulation_steps 1: one optimiser step per sampled batch, as here.",
    "scale_rewards 'group' divides by the group std (advantage mean-std); 'none' is Dr. GRPO's mean-only advantage.",
  ];
  if (g.klSchedule !== "constant" && g.kl > 0) {
    notes.push(`beta follows a ${g.klSchedule} schedule here; TRL keeps it constant at the value given.`);
  }
  if (!g.dropEqualGroups) notes.push("equal-reward groups were kept (they carry zero advantage either way).");
  if (g.focusHard) notes.push("questions were focused on hard ones (FocusScheduler); TRL samples uniformly.");
  if (g.warmupSteps > 0 && g.lrSchedule === "constant") {
    notes.push("TRL's constant_with_warmup matches linear warm-up then constant.");
  }
  const scheduler = g.lrSchedule === "constant"
    ? (g.warmupSteps > 0 ? "constant_with_warmup" : "constant")
    : g.lrSchedule;
  return {
    grpo_config: {
      learning_rate: g.lr,
      lr_scheduler_type: scheduler,
      warmup_steps: g.warmupSteps,
      max_steps: Math.min(g.steps, o.maxSteps ?? Infinity),
      num_generations: g.G,
      per_device_train_batch_size: g.batchQuestions * g.G,
      gradient_accumulation_steps: 1,
      num_iterations: g.updatesPerBatch,
      max_completion_length: g.maxNewTokens,
      beta: g.kl,
      epsilon: g.eps_low,
      epsilon_high: g.eps_high,
      loss_type: trlLossType(g.aggregation),
      scale_rewards: g.advantage === "mean-std" ? "group" : "none",
      temperature: g.temperature,
      top_p: g.topP,
      max_grad_norm: g.maxGradNorm,
      seed: o.seed ?? g.seed,
    },
    peft_config: {
      r: m.loraRank,
      lora_alpha: m.loraAlpha,
      lora_dropout: 0,
      target_modules: [...targets],
      task_type: "CAUSAL_LM",
      bias: "none",
    },
    notes,
  };
}

/** Writes the runtime's adapter as a PEFT folder `dir/` (adapter_config.json, adapter_model.safetensors). */
export async function writeAdapter(
  store: FileStore,
  dir: string,
  runtime: ModelRuntime,
  baseModel: string | null,
): Promise<string[]> {
  const files = peftFiles(await runtime.currentAdapter(), { baseModel });
  const out: string[] = [];
  for (const [name, bytes] of files) {
    await store.write(`${dir}/${name}`, bytes);
    out.push(`${dir}/${name}`);
  }
  return out;
}

/**
 * One JSON line per task: the chat prompt as rendered, the gold SQL and the ids (TRL's "prompt"
 * column plus ours). Under a template that starts the answer (chain-of-ctes@2) the prompt ends with
 * that start, which `answer_prefix` repeats: prepend it to a generated text to read the answer.
 */
export function promptsJsonl(tasks: readonly Task[], prompts: readonly TaskPrompt[]): string {
  return tasks.map((t, i) => {
    const p = prompts[i];
    return JSON.stringify({
      id: t.id,
      db_id: t.db_id,
      prompt: p.text + p.answerPrefix,
      gold_sql: t.gold_sql,
      template: p.template.id,
      ...(p.answerPrefix ? { answer_prefix: p.answerPrefix } : {}),
      ...(t.difficulty ? { difficulty: t.difficulty } : {}),
    }) + "\n";
  }).join("");
}
