// The pretraining loop: seeded epochs over the packed rows, one optimiser step per batch, a log
// record per step (loss, learning rate, gradient norm, tokens/s) and periodic checkpoints.
import { Rng } from "../../core/rng.ts";
import { type Pretrainer, pretrainStep, type PretrainStepReport } from "./step.ts";

/** Batches of row indices: every row once per epoch, each epoch in a new seeded order. */
export class BatchSampler {
  private order: number[] = [];
  private at = 0;
  private readonly rng: Rng;
  /** Completed passes over the rows. */
  epoch = 0;

  constructor(readonly rows: number, readonly batch: number, seed: number) {
    if (rows < 1 || batch < 1) throw new Error(`BatchSampler: ${rows} rows, batch ${batch}`);
    this.rng = new Rng(seed);
    this.reshuffle();
  }

  private reshuffle(): void {
    this.order = this.rng.shuffle(Array.from({ length: this.rows }, (_, i) => i));
    this.at = 0;
  }

  /** The next batch's row indices (an epoch boundary falls inside a batch when rows % batch != 0). */
  next(): number[] {
    const out: number[] = [];
    while (out.length < this.batch) {
      if (this.at === this.order.length) {
        this.epoch++;
        this.reshuffle();
      }
      out.push(this.order[this.at++]);
    }
    return out;
  }
}

/** One line of the training log. */
export interface StepLog extends PretrainStepReport {
  /** Fractional epochs done after this step. */
  epoch: number;
  /** Predicted tokens per second of this step (forward, backward and update). */
  tokensPerSec: number;
  /** Seconds since the loop started. */
  elapsed: number;
}

/** Options of runPretrain. */
export interface PretrainRunOptions {
  steps: number;
  batch: number;
  seed: number;
  /** Checkpoint every this many applied steps (0: never); the final model is the caller's to write. */
  checkpointEvery: number;
  onStep?: (log: StepLog) => void | Promise<void>;
  onCheckpoint?: (step: number) => Promise<void>;
  /** Stops early between steps. */
  signal?: AbortSignal;
}

/** Runs `o.steps` steps over `rows` and returns the per-step log. */
export async function runPretrain(tr: Pretrainer, rows: readonly Uint32Array[], o: PretrainRunOptions): Promise<StepLog[]> {
  const sampler = new BatchSampler(rows.length, o.batch, o.seed);
  const logs: StepLog[] = [];
  const t0 = performance.now();
  for (let i = 0; i < o.steps; i++) {
    if (o.signal?.aborted) break;
    const batch = sampler.next().map((k) => rows[k]);
    const s0 = performance.now();
    const r = await pretrainStep(tr, batch);
    const now = performance.now();
    const log: StepLog = {
      ...r,
      epoch: ((i + 1) * o.batch) / rows.length,
      tokensPerSec: r.tokens / ((now - s0) / 1000),
      elapsed: (now - t0) / 1000,
    };
    logs.push(log);
    await o.onStep?.(log);
    if (o.checkpointEvery > 0 && !r.skipped && r.step % o.checkpointEvery === 0 && i + 1 < o.steps) await o.onCheckpoint?.(r.step);
  }
  return logs;
}
