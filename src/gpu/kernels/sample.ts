// Wrapper of sample.wgsl: token choice for B rows of logits on the GPU, bound once and encoded per
// decoding step, so a step's choice costs one dispatch and no upload; only (token, log-probability)
// pairs (B x 8 bytes) need to come back instead of the (B, V) logits.
import { BoundKernel } from "../device.ts";
import { packParams } from "./layer-common.ts";
import common from "./sample_common.wgsl" with { type: "text" };
import main from "./sample.wgsl" with { type: "text" };

const SOURCE = `${common}\n${main}`;

/** The filter part of the sampling settings (src/model/sampler.ts SamplingParams). */
export interface ChoiceParams {
  /** 0: greedy. */
  temperature: number;
  /** 0: off; 1: greedy. */
  topK: number;
  /** 1: off. */
  topP: number;
  /** 0: off. */
  minP: number;
}

/** The buffers a TokenChooser reads and writes. */
export interface ChoiceBuffers {
  /** (R, rowStride) f32 logits. */
  logits: GPUBuffer;
  /** (B) u32: the logits row of output row b. */
  src: GPUBuffer;
  /** (B) u32: each row's RNG seed. */
  seeds: GPUBuffer;
  /** (B) u32: draws made so far; the kernel adds one per call (greedy rows too). */
  counters: GPUBuffer;
  /** (B, 2) u32: token id and the bits of its f32 log-probability under softmax(logits). */
  out: GPUBuffer;
}

/** The Params words of sample.wgsl for these settings. */
export function choiceWords(V: number, rowStride: number, c: ChoiceParams): Uint32Array {
  const greedy = c.temperature === 0 || c.topK === 1 ? 1 : 0;
  return packParams("uuuuffff", [V, rowStride, greedy, c.topK, greedy ? 1 : c.temperature, c.topP, c.minP, 0]);
}

/** One bound token choice: `encode` records it (one pass, one dispatch) into a command encoder. */
export class TokenChooser {
  private constructor(private kernel: BoundKernel, readonly rows: number) {}

  /** Binds `buffers` for `rows` output rows over a vocabulary of V (logits rows `rowStride` floats apart). */
  static async create(
    device: GPUDevice,
    buffers: ChoiceBuffers,
    rows: number,
    V: number,
    rowStride: number,
    c: ChoiceParams,
  ): Promise<TokenChooser> {
    if (!(rows >= 1 && V >= 1 && rowStride >= V)) {
      throw new Error(`TokenChooser: rows ${rows}, V ${V}, rowStride ${rowStride}`);
    }
    const order = [buffers.logits, buffers.src, buffers.seeds, buffers.counters, buffers.out];
    return new TokenChooser(
      await BoundKernel.create(device, "sample", SOURCE, order, choiceWords(V, rowStride, c)),
      rows,
    );
  }

  /** Records the choice for every row. */
  encode(enc: GPUCommandEncoder): void {
    this.kernel.encode(enc, this.rows);
  }

  /** Frees the parameter buffer (the caller owns the others). */
  destroy(): void {
    this.kernel.destroy();
  }
}
