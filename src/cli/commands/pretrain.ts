// `rlvr pretrain`: pretrains the demo model from random initialisation on the project's corpus with
// the WGSL trainer (every weight trained: AdamW, cosine learning rate, gradient clipping), logging
// every step as JSONL, checkpointing (resumable), and writing the result as a Hugging Face folder.
import { COUNT_MAX, int as intFlag, num, parseFlags, req, UsageError } from "../args.ts";
import type { FloatDtype } from "../../model/safetensors.ts";
import { DEFAULT_DEMO_ARCH } from "../../runtime/pretrain/model.ts";
import { DEFAULT_DEFINED_SHARE } from "../../runtime/pretrain/corpus.deno.ts";
import { runPretrainJob } from "../../runtime/pretrain/run.deno.ts";
import { DEFAULT_PRETRAIN_OPTIONS } from "../../runtime/pretrain/step.ts";
import type { Command } from "./index.ts";

const FLAGS = {
  out: { type: "string" },
  arch: { type: "string" },
  hidden: { type: "string" },
  layers: { type: "string" },
  heads: { type: "string" },
  "kv-heads": { type: "string" },
  intermediate: { type: "string" },
  "seq-len": { type: "string" },
  batch: { type: "string" },
  "micro-batch": { type: "string" },
  steps: { type: "string" },
  lr: { type: "string" },
  "min-lr-ratio": { type: "string" },
  warmup: { type: "string" },
  "weight-decay": { type: "string" },
  clip: { type: "string" },
  seed: { type: "string" },
  tokenizer: { type: "string" },
  vocab: { type: "string" },
  demo: { type: "string" },
  spider: { type: "string" },
  "spider-limit": { type: "string" },
  "spider-holdout": { type: "string" },
  "checkpoint-every": { type: "string" },
  "eval-rows": { type: "string" },
  dtype: { type: "string" },
  resume: { type: "string" },
  init: { type: "string" },
  "max-minutes": { type: "string" },
  recompute: { type: "boolean" },
  "chat-turns": { type: "string" },
  "chat-passes": { type: "string" },
  synthetic: { type: "string" },
  "defined-share": { type: "string" },
  "corpus-only": { type: "boolean" },
  "spider-syn": { type: "string" },
  surface: { type: "string" },
} as const;

function int(values: Record<string, unknown>, name: string, dflt: number, min = 1): number {
  return intFlag(values, name, dflt, min, COUNT_MAX);
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function share(values: Record<string, unknown>): number {
  return num(values, "defined-share", DEFAULT_DEFINED_SHARE, { min: 0, max: 1 });
}

export const command: Command = {
  name: "pretrain",
  summary: "pretrain the small demo SQL model from scratch on the GPU (full training, HF folder out)",
  usage: [
    "rlvr pretrain --out DIR [--arch qwen2|llama] [--hidden 384 --layers 8 --heads 6 --kv-heads 2 --intermediate 1024]",
    "              [--seq-len 1024 --batch 16 --micro-batch 4 --steps 2000 --lr 6e-4 --min-lr-ratio 0.1 --warmup 100]",
    "              [--weight-decay 0.1 --clip 1 --seed 1] [--tokenizer DIR | --vocab 8192] [--spider PATH] [--demo DIR] [--chat-turns N --chat-passes P] [--synthetic N [--defined-share F] [--surface F]]",
    "              [--spider-syn PATH] [--spider-limit N] [--spider-holdout DB,DB,...] [--checkpoint-every 500] [--eval-rows 32] [--dtype f16|f32] [--recompute]",
    "              [--resume DIR/checkpoint-N | --init MODEL_DIR] [--max-minutes M] [--corpus-only]",
    "",
    "  --tokenizer DIR   a folder from `rlvr train-tokenizer`; without it one of --vocab tokens is trained first",
    "  --spider PATH     Spider's training folder; without it the corpus is the demo's generic questions only",
    "  --dtype           dtype of the final model.safetensors (default f16; checkpoints are f32)",
    "  --resume DIR      continue from a checkpoint (weights, AdamW moments, sampler position); model flags are ignored",
    "  --init DIR        start from a finished model folder's weights, config and tokenizer (new optimizer, step 0,",
    "                    a new schedule); model flags and --tokenizer are ignored",
    "  --max-minutes M   start no step after M minutes; then write a checkpoint to resume from",
    "  --corpus-only     build the tokenizer (DIR/tokenizer/, unless --tokenizer) and the packed corpus, then stop (no GPU);",
    "                    a later run with the same flags and --out reads them (prepare the corpus on a CPU machine)",
    "  --chat-turns N    chain up to N questions of one database per chat document (schema once; default 1)",
    "  --chat-passes P   with --chat-turns > 1: chain Spider's questions P times in other orders (default 1)",
    "  --synthetic N     add N synthetic questions per Spider database (4N per demo database) made from its schema",
    "                    and values (count/filter/group/top/join patterns); any whose query shape is an evaluation",
    "                    question's is dropped (default 0)",
    "  --defined-share F with --synthetic: the share of synthetic questions that use made-up terms defined in the",
    `                    evidence (one or two terms, conjunctions, with filters; default ${DEFAULT_DEFINED_SHARE})`,
    '  --surface F       with --synthetic: the share of synthetic questions reworded as people write ("show me …",',
    "                    lower case, numbers in words, a filter said another way, a typo; default 0)",
    "  --spider-syn PATH Spider-Syn's folder (train.jsonl): Spider's questions rewritten by hand with synonyms, added",
    "                    beside Spider's own (needs --spider)",
    "Writes DIR/{config.json, model.safetensors, tokenizer.json, tokenizer_config.json, generation_config.json},",
    "DIR/train_log.jsonl (one line per step), DIR/corpus.json + corpus.bin (the packed corpus) and DIR/checkpoint-<step>/.",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, FLAGS);
    const arch = str(values.arch) ?? DEFAULT_DEMO_ARCH.arch;
    if (arch !== "qwen2" && arch !== "llama") throw new UsageError(`--arch must be qwen2 or llama, got ${arch}`);
    const dtypes: Record<string, FloatDtype> = { f16: "F16", f32: "F32" };
    const dtype = dtypes[str(values.dtype) ?? "f16"];
    if (!dtype) throw new UsageError(`--dtype must be f16 or f32, got ${str(values.dtype)}`);
    const steps = int(values, "steps", 2000);
    const maxMinutes = values["max-minutes"] === undefined
      ? undefined
      : num(values, "max-minutes", 0, { min: Number.MIN_VALUE, max: 1e6 });
    try {
      return await runPretrainJob({
        out: req(values, "out"),
        arch: {
          arch,
          seqLen: int(values, "seq-len", DEFAULT_DEMO_ARCH.seqLen, 2),
          hidden: int(values, "hidden", DEFAULT_DEMO_ARCH.hidden),
          layers: int(values, "layers", DEFAULT_DEMO_ARCH.layers),
          heads: int(values, "heads", DEFAULT_DEMO_ARCH.heads),
          kvHeads: int(values, "kv-heads", DEFAULT_DEMO_ARCH.kvHeads),
          intermediate: int(values, "intermediate", DEFAULT_DEMO_ARCH.intermediate),
          tieWordEmbeddings: DEFAULT_DEMO_ARCH.tieWordEmbeddings,
          ropeTheta: DEFAULT_DEMO_ARCH.ropeTheta,
        },
        steps,
        batch: int(values, "batch", 16),
        seed: int(values, "seed", 1, 0),
        evalRows: int(values, "eval-rows", 32, 0),
        checkpointEvery: int(values, "checkpoint-every", 500, 0),
        dtype,
        opts: {
          lr: {
            base: num(values, "lr", DEFAULT_PRETRAIN_OPTIONS.lr.base, { min: 0, max: 10 }),
            warmupSteps: int(values, "warmup", 100, 0),
            totalSteps: steps,
            decay: "cosine",
            minRatio: num(values, "min-lr-ratio", 0.1, { min: 0, max: 1 }),
          },
          weightDecay: num(values, "weight-decay", DEFAULT_PRETRAIN_OPTIONS.weightDecay, { min: 0, max: 10 }),
          maxGradNorm: num(values, "clip", DEFAULT_PRETRAIN_OPTIONS.maxGradNorm, { min: 0, max: 1e9 }),
          microBatch: int(values, "micro-batch", DEFAULT_PRETRAIN_OPTIONS.microBatch),
          recompute: values.recompute === true,
        },
        paths: {
          demoDir: str(values.demo) ?? "public/demo",
          spiderDir: str(values.spider),
          spiderLimit: values["spider-limit"] === undefined ? undefined : int(values, "spider-limit", 0, 0),
          spiderHoldout: str(values["spider-holdout"])?.split(",").map((s) => s.trim()).filter((s) => s.length > 0),
          synthetic: int(values, "synthetic", 0, 0),
          definedShare: share(values),
          spiderSynDir: str(values["spider-syn"]),
          surface: num(values, "surface", 0, { min: 0, max: 1 }),
        },
        corpusShape: { chatTurns: int(values, "chat-turns", 1, 1), chatPasses: int(values, "chat-passes", 1, 1) },
        tokenizerDir: str(values.tokenizer),
        vocab: int(values, "vocab", 8192, 300),
        resume: str(values.resume),
        init: str(values.init),
        maxMinutes,
        corpusOnly: values["corpus-only"] === true,
        log: (line) => console.error(line),
      });
    } catch (e) {
      // Shape errors of the requested architecture are the user's.
      if (e instanceof Error && /is not a multiple of|must be even/.test(e.message)) throw new UsageError(e.message);
      throw e;
    }
  },
};
