// A whole pretraining job on disk (Deno): tokenizer, packed corpus (cached in the output folder),
// model initialised or resumed from a checkpoint, the loop with its JSONL log and checkpoints,
// and the final Hugging Face folder. `rlvr pretrain` is this with flags.
import { requestGpu } from "../../gpu/device.ts";
import { addedId, bpeTokenizerFiles } from "../../model/bpe/files.ts";
import type { BpeModel } from "../../model/bpe/train.ts";
import type { FloatDtype } from "../../model/safetensors.ts";
import { corpusHash } from "./corpus.ts";
import { type CorpusPaths, DEFAULT_DEFINED_SHARE, demoFingerprint } from "./corpus.deno.ts";
import { PATTERNS } from "./synthetic.ts";
import {
  type Checkpoint,
  type InitModel,
  readCheckpoint,
  readCorpusCache,
  readInitModel,
  writeCheckpoint,
  writeCorpusCache,
} from "./checkpoint.deno.ts";
import { BatchSampler, runPretrain } from "./loop.ts";
import { type DemoArch, demoConfig, demoFolderFiles, initWeights, parameterCount } from "./model.ts";
import {
  type CorpusShape,
  corpusSources,
  packedCorpus,
  readTokenizerFolder,
  tokenizerDocuments,
  writeTokenizerFolder,
} from "./pipeline.deno.ts";
import {
  createPretrainer,
  destroyPretrainer,
  evalLoss,
  type PretrainOptions,
  readWeights,
  restoreOptimizer,
} from "./step.ts";
import { trainDemoTokenizer } from "./tokenizer.ts";

/** The corpus seed: documents, template draws and packing (fixed, so every run sees the same corpus). */
export const CORPUS_SEED = 20261129;

/** Everything a pretraining job needs. */
export interface PretrainJob {
  out: string;
  /** Sizes of a new model (ignored when resuming: the checkpoint's config is used). */
  arch: Omit<DemoArch, "vocabSize">;
  steps: number;
  batch: number;
  seed: number;
  evalRows: number;
  checkpointEvery: number;
  dtype: FloatDtype;
  opts: Partial<PretrainOptions>;
  paths: CorpusPaths;
  tokenizerDir?: string;
  /** Vocabulary of a tokenizer trained here when there is none. */
  vocab: number;
  /** Chat documents with several questions each (rlvr pretrain --chat-turns / --chat-passes); absent: one per question. */
  corpusShape?: CorpusShape;
  /** A checkpoint-<step> folder to continue from. */
  resume?: string;
  /**
   * A finished model folder whose weights, config and tokenizer a new run starts from (fresh AdamW moments,
   * step 0, a new learning-rate schedule); model flags and --tokenizer are ignored. Not with `resume`.
   */
  init?: string;
  /** Start no step after this many minutes; a checkpoint is written when stopped early. */
  maxMinutes?: number;
  /**
   * Only build the tokenizer (when none is given) and the packed corpus into `out`, then stop: no GPU.
   * A later run with the same settings and `out` (or a copy of its corpus.json, corpus.bin and
   * tokenizer) reads them instead of building them (the GPU machine gets them prepared).
   */
  corpusOnly?: boolean;
  log: (line: string) => void;
}

/**
 * The corpus sources of one set of paths, read once per process: training the tokenizer and packing the
 * corpus read the same sources, and reading them (synthetic questions over every schema) is most of a
 * corpus build's time.
 */
const sourceCache = new Map<string, ReturnType<typeof corpusSources>>();
function sourcesOf(paths: PretrainJob["paths"]): ReturnType<typeof corpusSources> {
  const k = JSON.stringify(paths);
  let p = sourceCache.get(k);
  if (!p) {
    sourceCache.set(k, p = corpusSources(paths));
    p.catch(() => sourceCache.delete(k));
  }
  return p;
}

function textHash(s: string): string {
  return corpusHash([Uint32Array.from(new TextEncoder().encode(s))]);
}

/** The corpus key's entries for a shape; none for one question per document, so older keys still match. */
function shapeKey(shape: CorpusShape | undefined): Record<string, number> {
  const turns = shape?.chatTurns ?? 1;
  return turns > 1 ? { chatTurns: turns, chatPasses: shape?.chatPasses ?? 1 } : {};
}

/** The packed rows, from `${out}/corpus.bin` when it was made with the same tokenizer and settings. */
async function corpusRows(
  job: PretrainJob,
  bpe: BpeModel,
  seqLen: number,
): Promise<{ rows: Uint32Array[]; info: Record<string, unknown> }> {
  const key = {
    tokenizer: textHash(JSON.stringify(bpe)),
    seqLen,
    demo: job.paths.demoDir,
    demoData: await demoFingerprint(job.paths.demoDir),
    spider: job.paths.spiderDir ?? null,
    spiderLimit: job.paths.spiderLimit ?? null,
    ...(job.paths.spiderHoldout?.length ? { spiderHoldout: job.paths.spiderHoldout } : {}),
    ...(job.paths.synthetic
      ? {
        synthetic: job.paths.synthetic,
        syntheticPatterns: PATTERNS.length,
        definedShare: job.paths.definedShare ?? DEFAULT_DEFINED_SHARE,
        ...(job.paths.surface ? { surface: job.paths.surface } : {}),
      }
      : {}),
    ...(job.paths.spiderSynDir ? { spiderSyn: job.paths.spiderSynDir } : {}),
    seed: CORPUS_SEED,
    ...shapeKey(job.corpusShape),
  };
  try {
    const info: unknown = JSON.parse(await Deno.readTextFile(`${job.out}/corpus.json`));
    if (
      typeof info === "object" && info !== null && "key" in info && JSON.stringify(info.key) === JSON.stringify(key)
    ) {
      const rows = await readCorpusCache(`${job.out}/corpus.bin`);
      if ("hash" in info && info.hash === corpusHash(rows)) {
        job.log(`corpus: ${rows.length} rows from ${job.out}/corpus.bin`);
        return { rows, info: { ...info } };
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound) && !(e instanceof SyntaxError)) throw e;
  }
  const src = await sourcesOf(job.paths);
  const c = packedCorpus(src, bpe, seqLen, CORPUS_SEED, job.corpusShape);
  const info = {
    key,
    tokens: c.tokens,
    rows: c.rows.length,
    seqLen,
    fill: c.fill,
    docs: c.docs,
    mix: c.mix,
    hash: c.hash,
    excluded: src.excluded,
  };
  await writeCorpusCache(`${job.out}/corpus.bin`, c.rows);
  await Deno.writeTextFile(`${job.out}/corpus.json`, JSON.stringify(info, null, 2) + "\n");
  job.log(
    `corpus: ${c.tokens} tokens in ${c.rows.length} rows of <= ${seqLen} (fill ${
      c.fill.toFixed(3)
    }), ${c.docs} documents, hash ${c.hash}`,
  );
  return { rows: c.rows, info };
}

/** Runs the job and returns the summary `rlvr pretrain` prints. */
export async function runPretrainJob(job: PretrainJob): Promise<Record<string, unknown>> {
  const started = performance.now();
  await Deno.mkdir(job.out, { recursive: true });
  if (job.resume && job.init) {
    throw new Error(
      "--resume and --init exclude each other: resume continues a run, init starts a new one from a model",
    );
  }
  const ckpt: Checkpoint | null = job.resume ? await readCheckpoint(job.resume) : null;
  const init: InitModel | null = job.init ? await readInitModel(job.init) : null;
  let bpe: BpeModel;
  if (ckpt) bpe = ckpt.bpe;
  else if (init) bpe = init.bpe;
  else if (job.tokenizerDir) bpe = await readTokenizerFolder(job.tokenizerDir);
  else {
    job.log(`training the tokenizer (${job.vocab} tokens)`);
    bpe = trainDemoTokenizer(tokenizerDocuments(await sourcesOf(job.paths), CORPUS_SEED), job.vocab);
  }
  if (job.corpusOnly) {
    const seqLen = init?.cfg.maxPositionEmbeddings ?? ckpt?.cfg.maxPositionEmbeddings ?? job.arch.seqLen;
    const files = await writeTokenizerFolder(`${job.out}/tokenizer`, bpe, seqLen);
    // The corpus key hashes the tokenizer as read back from its files, as a later run given --tokenizer computes it.
    const { rows, info } = await corpusRows(job, await readTokenizerFolder(`${job.out}/tokenizer`), seqLen);
    return {
      out: job.out,
      corpusOnly: true,
      tokenizer: files.map((f) => `tokenizer/${f}`),
      rows: rows.length,
      ...info,
    };
  }
  const cfg = ckpt?.cfg ?? init?.cfg ??
    demoConfig({ ...job.arch, vocabSize: Math.ceil(bpe.vocab.length / 64) * 64 }, [
      addedId(bpe, "<|im_end|>"),
      addedId(bpe, "<|endoftext|>"),
    ]);
  const seqLen = cfg.maxPositionEmbeddings;
  const { rows, info } = await corpusRows(job, bpe, seqLen);
  const hash = corpusHash(rows);
  if (ckpt && ckpt.state.corpusHash !== hash) {
    throw new Error(`resume: the checkpoint was trained on corpus ${ckpt.state.corpusHash}, this corpus is ${hash}`);
  }
  const evalSet = rows.slice(0, job.evalRows);
  const train = rows.slice(job.evalRows);
  if (train.length === 0) {
    throw new Error(`the corpus has ${rows.length} rows, none left after ${job.evalRows} evaluation rows`);
  }
  const params = parameterCount(cfg);
  job.log(
    `model: ${cfg.arch}, ${params} parameters (${
      ((params * (job.dtype === "F32" ? 4 : 2)) / 1e6).toFixed(1)
    } MB as ${job.dtype})`,
  );
  const gpu = await requestGpu();
  const tr = createPretrainer(gpu.device, cfg, ckpt?.weights ?? init?.weights ?? initWeights(cfg, job.seed), {
    ...job.opts,
    seqLen,
  });
  if (ckpt) restoreOptimizer(tr, ckpt.m, ckpt.v, ckpt.state.step);
  const seed = ckpt?.state.seed ?? job.seed;
  const sampler = new BatchSampler(train.length, job.batch, seed);
  if (ckpt) sampler.restore(ckpt.state.sampler);
  const tok = bpeTokenizerFiles(bpe, { modelMaxLength: seqLen });
  const log = await Deno.open(`${job.out}/train_log.jsonl`, {
    create: true,
    write: true,
    append: ckpt !== null,
    truncate: ckpt === null,
  });
  const enc = new TextEncoder();
  const writeLog = async (o: Record<string, unknown>) => void (await log.write(enc.encode(JSON.stringify(o) + "\n")));
  const evaluate = async () => (evalSet.length > 0 ? await evalLoss(tr, evalSet) : null);
  const checkpoint = async (step: number) => {
    const dir = `${job.out}/checkpoint-${step}`;
    const valLoss = await evaluate();
    await writeCheckpoint(dir, tr, tok, { step, sampler: sampler.state(), seed, corpusHash: hash, valLoss });
    await writeLog({ event: "checkpoint", step, dir, valLoss });
    job.log(`checkpoint ${dir}${valLoss === null ? "" : ` val loss ${valLoss.toFixed(4)}`}`);
    return valLoss;
  };
  try {
    await writeLog({
      event: ckpt ? "resume" : "start",
      from: job.resume ?? null,
      ...(job.init ? { init: job.init } : {}),
      step: tr.step,
      config: cfg,
      parameters: params,
      corpus: { tokens: info.tokens, rows: rows.length, hash },
      steps: job.steps,
      batch: job.batch,
      seed,
      opts: tr.opts,
      gpu: gpu.info.description || gpu.info.vendor,
    });
    const deadline = job.maxMinutes === undefined ? undefined : started + job.maxMinutes * 60_000;
    const { logs, stopped } = await runPretrain(tr, train, {
      steps: job.steps,
      batch: job.batch,
      sampler,
      checkpointEvery: job.checkpointEvery,
      deadline,
      onCheckpoint: checkpoint,
      onStep: async (l) => {
        await writeLog({ event: "step", ...l });
        if (l.step % 10 === 0 || l.step === 1 || l.skipped) {
          job.log(
            `step ${l.step}/${job.steps} loss ${l.loss.toFixed(4)} lr ${l.lr.toExponential(2)} |g| ${
              l.gradNorm.toFixed(3)
            } ${Math.round(l.tokensPerSec)} tok/s${l.skipped ? " SKIPPED" : ""}`,
          );
        }
      },
    });
    // Stopped early, the checkpoint has just evaluated these very weights: its loss is the final one.
    const valLoss = stopped !== "done" ? await checkpoint(tr.step) : await evaluate();
    const files = demoFolderFiles(cfg, await readWeights(tr), tok, { dtype: job.dtype });
    for (const [name, bytes] of files) await Deno.writeFile(`${job.out}/${name}`, bytes);
    const tail = logs.slice(-Math.min(20, logs.length));
    const result = {
      out: job.out,
      files: [...files.keys()],
      stopped,
      arch: cfg.arch,
      parameters: params,
      dtype: job.dtype,
      steps: tr.step,
      vocab: bpe.vocab.length,
      vocabSize: cfg.vocabSize,
      firstLoss: logs[0]?.loss ?? null,
      lastLoss: logs.at(-1)?.loss ?? null,
      valLoss,
      tokensPerSec: tail.reduce((s, l) => s + l.tokensPerSec, 0) / Math.max(1, tail.length),
      trainedTokens: logs.reduce((s, l) => s + l.tokens, 0),
      corpusTokens: info.tokens,
      corpusHash: hash,
    };
    await writeLog({ event: "end", ...result });
    return result;
  } finally {
    log.close();
    destroyPretrainer(tr);
  }
}
