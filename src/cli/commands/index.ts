// The command table of `rlvr`. Each command module exports `command: Command`.

/** One `rlvr` sub-command. It returns the JSON object printed as the last line of standard output. */
export interface Command {
  name: string;
  summary: string;
  usage: string;
  run(argv: string[]): Promise<Record<string, unknown>>;
}

/** Lazily loaded, so `rlvr --help` starts fast and one command's dependencies don't slow another. */
export const COMMANDS: Record<string, { summary: string; gpu?: boolean; load: () => Promise<{ command: Command }> }> = {
  gpu: {
    summary: "show the WebGPU adapter and run the matmul micro-benchmark",
    gpu: true,
    load: () => import("./gpu.ts"),
  },
  "make-demo": {
    summary:
      "generate the built-in demo: databases, concept questions per split, generic questions, definitions (deterministic)",
    load: () => import("./make-demo.ts"),
  },
  eval: {
    summary: "score predicted SQL against gold by execution (BIRD/Spider rules)",
    load: () => import("./eval.ts"),
  },
  cocte: {
    summary: "rewrite gold SQL as a Chain of CTEs with the same result (and a chain-of-ctes@2 warm-up dataset)",
    load: () => import("./cocte.ts"),
  },
  logprobs: {
    summary: "per-token log-probabilities of token ids under a model (ort or webgpu engine)",
    gpu: true,
    load: () => import("./logprobs.ts"),
  },
  sample: {
    summary: "sample completions for prompts with the ONNX policy on WebGPU",
    gpu: true,
    load: () => import("./sample.ts"),
  },
  "lora-grad": {
    summary: "gradient of a policy-gradient loss with respect to a LoRA adapter",
    gpu: true,
    load: () => import("./lora-grad.ts"),
  },
  "train-tokenizer": {
    summary: "learn the demo model's byte-level BPE tokenizer from the pretraining corpus",
    load: () => import("./train-tokenizer.ts"),
  },
  pretrain: {
    summary: "pretrain the small demo SQL model from scratch on the GPU (full training, HF folder out)",
    gpu: true,
    load: () => import("./pretrain.ts"),
  },
  run: {
    summary: "run a notebook's cells in order headless (metrics, checkpoints, predictions, adapter)",
    gpu: true,
    load: () => import("./run.ts"),
  },
  "demo-evidence": {
    summary: "the demo's evidence figures (accuracy per split, prompt mode, stage and seed) from rlvr run folders",
    load: () => import("./demo-evidence.ts"),
  },
  export: {
    summary: "export a run: PEFT adapter, TRL GRPOConfig + LoraConfig, training prompts with gold SQL",
    load: () => import("./export.ts"),
  },
};
