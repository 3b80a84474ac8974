// Wrapper of sample.wgsl: token choice for B rows of logits on the GPU, bound once and encoded per
// decoding step, so a step's choice costs one dispatch and no upload; only (token, log-probability)
// pairs (B x 8 bytes) need to come back instead of the (B, V) logits.
import { bindGroupLayout, computePipeline } from "../device.ts";
import { packParams } from "./layer-common.ts";
import common from "./sample_common.wgsl" with { type: "text" };
import main from "./sample.wgsl" with { type: "text" };

const SOURCE = `${common}\n${main}`;
const UNIFORM = 0x0040, COPY_DST = 0x0008;

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
  private constructor(
    private pipeline: GPUComputePipeline,
    private bind: GPUBindGroup,
    private params: GPUBuffer,
    readonly rows: number,
  ) {}

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
    const pipeline = await computePipeline(device, "sample", SOURCE);
    const params = device.createBuffer({ label: "sample-params", size: 32, usage: UNIFORM | COPY_DST });
    device.queue.writeBuffer(params, 0, choiceWords(V, rowStride, c));
    const order = [buffers.logits, buffers.src, buffers.seeds, buffers.counters, buffers.out, params];
    const bind = device.createBindGroup({
      label: "sample-bind",
      layout: bindGroupLayout(pipeline),
      entries: order.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    return new TokenChooser(pipeline, bind, params, rows);
  }

  /** Records the choice for every row. */
  encode(enc: GPUCommandEncoder): void {
    const pass = enc.beginComputePass({ label: "sample" });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bind);
    pass.dispatchWorkgroups(this.rows);
    pass.end();
  }

  /** Frees the parameter buffer (the caller owns the others). */
  destroy(): void {
    this.params.destroy();
  }
}
