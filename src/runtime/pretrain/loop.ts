// The pretraining loop: seeded epochs over the packed rows, one optimiser step per batch, a log
// record per step (loss, learning rate, gradient norm, tokens/s), periodic checkpoints, and a
// deadline so a run can stop cleanly inside a time limit and resume from its checkpoint.
import { Rng } from "../../core/rng.ts";
import { type Pretrainer, pretrainStep, type PretrainStepReport } from "./step.ts";

/** A sampler's position, for checkpoints. */
export interface SamplerState {
  rng: number[];
  order: number[];
  at: number;
  epoch: number;
}

/** Batches of row indices: every row once per epoch, each epoch in a new seeded order. */
export class BatchSampler {
  private order: number[] = [];
  private at = 0;
  private rng: Rng;
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

  /** Fractional epochs consumed. */
  progress(): number {
    return this.epoch + this.at / this.rows;
  }

  /** The position, to store in a checkpoint. */
  state(): SamplerState {
    return { rng: [...this.rng.state()], order: [...this.order], at: this.at, epoch: this.epoch };
  }

  /** Continues from a stored position; the row count must be the one the state was made with. */
  restore(s: SamplerState): void {
    if (s.order.length !== this.rows) {
      throw new Error(`BatchSampler: the checkpoint's order has ${s.order.length} rows, the corpus ${this.rows}`);
    }
    this.rng = new Rng(Uint32Array.from(s.rng));
    this.order = [...s.order];
    this.at = s.at;
    this.epoch = s.epoch;
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
  /** Applied optimiser steps to reach (the trainer may start past 0 when resumed). */
  steps: number;
  batch: number;
  sampler: BatchSampler;
  /** Checkpoint every this many applied steps (0: never); the final model is the caller's to write. */
  checkpointEvery: number;
  onStep?: (log: StepLog) => void | Promise<void>;
  onCheckpoint?: (step: number) => Promise<unknown>;
  /** No new step starts after this time (performance.now() milliseconds). */
  deadline?: number;
  /** Stops early between steps. */
  signal?: AbortSignal;
  /** Consecutive skipped (non-finite) steps before giving up (default 20). */
  maxSkips?: number;
}

/** Why runPretrain returned. */
export type StopReason = "done" | "deadline" | "aborted";

/** Runs steps over `rows` until the trainer has applied `o.steps`, or the deadline or signal stops it. */
export async function runPretrain(
  tr: Pretrainer,
  rows: readonly Uint32Array[],
  o: PretrainRunOptions,
): Promise<{ logs: StepLog[]; stopped: StopReason }> {
  const logs: StepLog[] = [];
  const t0 = performance.now();
  let skips = 0;
  while (tr.step < o.steps) {
    if (o.signal?.aborted) return { logs, stopped: "aborted" };
    if (o.deadline !== undefined && performance.now() >= o.deadline) return { logs, stopped: "deadline" };
    const batch = o.sampler.next().map((k) => rows[k]);
    const s0 = performance.now();
    const r = await pretrainStep(tr, batch);
    const now = performance.now();
    const log: StepLog = {
      ...r,
      epoch: o.sampler.progress(),
      tokensPerSec: r.tokens / ((now - s0) / 1000),
      elapsed: (now - t0) / 1000,
    };
    logs.push(log);
    await o.onStep?.(log);
    skips = r.skipped ? skips + 1 : 0;
    if (skips >= (o.maxSkips ?? 20)) {
      throw new Error(`pretraining: ${skips} consecutive steps had non-finite gradients (step ${r.step}); lower --lr`);
    }
    if (o.checkpointEvery > 0 && !r.skipped && r.step % o.checkpointEvery === 0 && r.step < o.steps) {
      await o.onCheckpoint?.(r.step);
    }
  }
  return { logs, stopped: "done" };
}
