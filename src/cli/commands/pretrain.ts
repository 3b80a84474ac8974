// `rlvr pretrain`: pretrains the demo model from random initialisation on the project's corpus with
// the WGSL trainer (every weight trained: AdamW, cosine learning rate, gradient clipping), logging
// every step as JSONL, checkpointing, and writing the result as a Hugging Face folder.
import { num, parseFlags, req, UsageError } from "../args.ts";
import { requestGpu } from "../../gpu/device.ts";
import { addedId, bpeTokenizerFiles } from "../../model/bpe/files.ts";
import type { BpeModel } from "../../model/bpe/train.ts";
import type { FloatDtype } from "../../model/safetensors.ts";
import { runPretrain } from "../../runtime/pretrain/loop.ts";
import { DEFAULT_DEMO_ARCH, type DemoArch, demoConfig, demoFolderFiles, initWeights, parameterCount } from "../../runtime/pretrain/model.ts";
import { corpusSources, packedCorpus, readTokenizerFolder, tokenizerDocuments } from "../../runtime/pretrain/pipeline.deno.ts";
import { createPretrainer, DEFAULT_PRETRAIN_OPTIONS, destroyPretrainer, evalLoss, type Pretrainer, readWeights } from "../../runtime/pretrain/step.ts";
import { trainDemoTokenizer } from "../../runtime/pretrain/tokenizer.ts";
import type { Command } from "./index.ts";

const FLAGS = {
  out: { type: "string" }, arch: { type: "string" }, hidden: { type: "string" }, layers: { type: "string" }, heads: { type: "string" },
  "kv-heads": { type: "string" }, intermediate: { type: "string" }, "seq-len": { type: "string" }, batch: { type: "string" },
  "micro-batch": { type: "string" }, steps: { type: "string" }, lr: { type: "string" }, "min-lr-ratio": { type: "string" },
  warmup: { type: "string" }, "weight-decay": { type: "string" }, clip: { type: "string" }, seed: { type: "string" },
  tokenizer: { type: "string" }, vocab: { type: "string" }, demo: { type: "string" }, spider: { type: "string" },
  "spider-limit": { type: "string" }, "checkpoint-every": { type: "string" }, "eval-rows": { type: "string" }, dtype: { type: "string" },
  recompute: { type: "boolean" },
} as const;

function int(values: Record<string, unknown>, name: string, dflt: number, min = 1): number {
  const n = num(values, name, dflt);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got ${n}`);
  return n;
}

async function writeFolder(dir: string, files: Map<string, Uint8Array>): Promise<string[]> {
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, bytes] of files) await Deno.writeFile(`${dir}/${name}`, bytes);
  return [...files.keys()];
}

export const command: Command = {
  name: "pretrain",
  summary: "pretrain the small demo SQL model from scratch on the GPU (full training, HF folder out)",
  usage: [
    "rlvr pretrain --out DIR [--arch qwen2|llama] [--hidden 384 --layers 8 --heads 6 --kv-heads 2 --intermediate 1024]",
    "              [--seq-len 1024 --batch 16 --micro-batch 4 --steps 2000 --lr 6e-4 --min-lr-ratio 0.1 --warmup 100]",
    "              [--weight-decay 0.1 --clip 1 --seed 1] [--tokenizer DIR | --vocab 8192] [--spider PATH] [--demo DIR]",
    "              [--spider-limit N] [--checkpoint-every 500] [--eval-rows 32] [--dtype f16|f32] [--recompute]",
    "",
    "  --tokenizer DIR   a folder from `rlvr train-tokenizer`; without it one of --vocab tokens is trained first",
    "  --spider PATH     Spider's training folder; without it the corpus is the demo train split only",
    "  --dtype           dtype of the final model.safetensors (default f16; checkpoints are f32)",
    "Writes DIR/{config.json, model.safetensors, tokenizer.json, tokenizer_config.json, generation_config.json},",
    "DIR/train_log.jsonl (one line per step), DIR/corpus.json and DIR/checkpoint-<step>/.",
  ].join("\n"),
  async run(argv) {
    const { values } = parseFlags(argv, FLAGS);
    const out = req(values, "out");
    const archName = typeof values.arch === "string" ? values.arch : DEFAULT_DEMO_ARCH.arch;
    if (archName !== "qwen2" && archName !== "llama") throw new UsageError(`--arch must be qwen2 or llama, got ${archName}`);
    const dtypeName = typeof values.dtype === "string" ? values.dtype : "f16";
    const dtypes: Record<string, FloatDtype> = { f16: "F16", f32: "F32" };
    const dtype = dtypes[dtypeName];
    if (!dtype) throw new UsageError(`--dtype must be f16 or f32, got ${dtypeName}`);
    const seed = int(values, "seed", 1, 0);
    const seqLen = int(values, "seq-len", DEFAULT_DEMO_ARCH.seqLen, 2);
    const steps = int(values, "steps", 2000);
    const batch = int(values, "batch", 16);
    const evalRows = int(values, "eval-rows", 32, 0);
    const checkpointEvery = int(values, "checkpoint-every", 500, 0);
    const corpusSeed = 20261129;
    const lr = num(values, "lr", DEFAULT_PRETRAIN_OPTIONS.lr.base);
    const src = await corpusSources({
      demoDir: typeof values.demo === "string" ? values.demo : "public/demo",
      spiderDir: typeof values.spider === "string" ? values.spider : undefined,
      spiderLimit: values["spider-limit"] === undefined ? undefined : int(values, "spider-limit", 0, 0),
    });
    let bpe: BpeModel;
    if (typeof values.tokenizer === "string") bpe = await readTokenizerFolder(values.tokenizer);
    else {
      console.error(`training the tokenizer (${int(values, "vocab", 8192, 300)} tokens)`);
      bpe = trainDemoTokenizer(tokenizerDocuments(src, corpusSeed), int(values, "vocab", 8192, 300));
    }
    const corpus = packedCorpus(src, bpe, seqLen, corpusSeed);
    const evalSet = corpus.rows.slice(0, evalRows);
    const train = corpus.rows.slice(evalRows);
    if (train.length === 0) throw new UsageError(`the corpus has ${corpus.rows.length} rows, none left after --eval-rows ${evalRows}`);
    const corpusInfo = { tokens: corpus.tokens, rows: corpus.rows.length, trainRows: train.length, evalRows: evalSet.length, seqLen, fill: corpus.fill, docs: corpus.docs, mix: corpus.mix, hash: corpus.hash, excluded: src.excluded };
    await Deno.mkdir(out, { recursive: true });
    await Deno.writeTextFile(`${out}/corpus.json`, JSON.stringify(corpusInfo, null, 2) + "\n");
    console.error(`corpus: ${corpus.tokens} tokens in ${corpus.rows.length} rows of <= ${seqLen} (fill ${corpus.fill.toFixed(3)}), ${corpus.docs} documents`);

    // The vocabulary matrix gets padding rows up to a multiple of 64, as published checkpoints do.
    const vocabSize = Math.ceil(bpe.vocab.length / 64) * 64;
    const a: DemoArch = {
      arch: archName, vocabSize, seqLen,
      hidden: int(values, "hidden", DEFAULT_DEMO_ARCH.hidden), layers: int(values, "layers", DEFAULT_DEMO_ARCH.layers),
      heads: int(values, "heads", DEFAULT_DEMO_ARCH.heads), kvHeads: int(values, "kv-heads", DEFAULT_DEMO_ARCH.kvHeads),
      intermediate: int(values, "intermediate", DEFAULT_DEMO_ARCH.intermediate),
      tieWordEmbeddings: DEFAULT_DEMO_ARCH.tieWordEmbeddings, ropeTheta: DEFAULT_DEMO_ARCH.ropeTheta,
    };
    let cfg;
    try {
      cfg = demoConfig(a, [addedId(bpe, "<|im_end|>"), addedId(bpe, "<|endoftext|>")]);
    } catch (e) {
      throw new UsageError(e instanceof Error ? e.message : String(e));
    }
    const params = parameterCount(cfg);
    console.error(`model: ${archName}, ${params} parameters (${(params * (dtype === "F16" ? 2 : 4) / 1e6).toFixed(1)} MB as ${dtypeName})`);
    const gpu = await requestGpu();
    const tr: Pretrainer = createPretrainer(gpu.device, cfg, initWeights(cfg, seed), {
      lr: { base: lr, warmupSteps: int(values, "warmup", 100, 0), totalSteps: steps, decay: "cosine", minRatio: num(values, "min-lr-ratio", 0.1) },
      weightDecay: num(values, "weight-decay", DEFAULT_PRETRAIN_OPTIONS.weightDecay),
      maxGradNorm: num(values, "clip", DEFAULT_PRETRAIN_OPTIONS.maxGradNorm),
      microBatch: int(values, "micro-batch", DEFAULT_PRETRAIN_OPTIONS.microBatch),
      seqLen,
      recompute: values.recompute === true,
    });
    const tok = bpeTokenizerFiles(bpe, { modelMaxLength: seqLen });
    const log = await Deno.open(`${out}/train_log.jsonl`, { create: true, write: true, truncate: true });
    const enc = new TextEncoder();
    const writeLog = async (o: Record<string, unknown>) => void (await log.write(enc.encode(JSON.stringify(o) + "\n")));
    const evaluate = async () => (evalSet.length > 0 ? await evalLoss(tr, evalSet) : null);
    const writeModel = async (dir: string, d: FloatDtype) => writeFolder(dir, demoFolderFiles(cfg, await readWeights(tr), tok, { dtype: d }));
    try {
      await writeLog({ event: "start", arch: a, parameters: params, corpus: { tokens: corpus.tokens, rows: corpus.rows.length, hash: corpus.hash }, steps, batch, seed, gpu: gpu.info.description || gpu.info.vendor });
      const logs = await runPretrain(tr, train, {
        steps, batch, seed, checkpointEvery,
        onStep: async (l) => {
          await writeLog({ event: "step", ...l });
          if (l.step % 10 === 0 || l.step === 1 || l.skipped) {
            console.error(`step ${l.step}/${steps} loss ${l.loss.toFixed(4)} lr ${l.lr.toExponential(2)} |g| ${l.gradNorm.toFixed(3)} ${Math.round(l.tokensPerSec)} tok/s${l.skipped ? " SKIPPED" : ""}`);
          }
        },
        onCheckpoint: async (step) => {
          const dir = `${out}/checkpoint-${step}`;
          await writeModel(dir, "F32");
          const val = await evaluate();
          await Deno.writeTextFile(`${dir}/trainer_state.json`, JSON.stringify({ step, valLoss: val, seed, corpusHash: corpus.hash }, null, 2) + "\n");
          await writeLog({ event: "checkpoint", step, dir, valLoss: val });
          console.error(`checkpoint ${dir}${val === null ? "" : ` val loss ${val.toFixed(4)}`}`);
        },
      });
      const valLoss = await evaluate();
      const files = await writeModel(out, dtype);
      const last = logs.at(-1);
      const tail = logs.slice(-Math.min(20, logs.length));
      const result = {
        out, files, arch: archName, parameters: params, dtype: dtypeName, steps: tr.step, vocab: bpe.vocab.length, vocabSize,
        firstLoss: logs[0]?.loss ?? null, lastLoss: last?.loss ?? null, valLoss,
        tokensPerSec: tail.reduce((s, l) => s + l.tokensPerSec, 0) / Math.max(1, tail.length),
        trainedTokens: logs.reduce((s, l) => s + l.tokens, 0), corpusTokens: corpus.tokens, corpusHash: corpus.hash,
      };
      await writeLog({ event: "end", ...result });
      return result;
    } finally {
      log.close();
      destroyPretrainer(tr);
    }
  },
};
