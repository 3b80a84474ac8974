// Wrapper of decode_advance.wgsl: bound once per captured decoder, one dispatch per decoding step.
import { BoundKernel } from "../device.ts";
import { packParams } from "./layer-common.ts";
import source from "./decode_advance.wgsl" with { type: "text" };

/** The buffers decode_advance.wgsl reads and writes (shapes in the .wgsl). */
export interface AdvanceBuffers {
  chosen: GPUBuffer;
  ids: GPUBuffer;
  pos: GPUBuffer;
  seqlens: GPUBuffer;
  total: GPUBuffer;
}

/** One bound advance for `rows` rows; `encode` records it. */
export class DecodeAdvance {
  private constructor(private kernel: BoundKernel, readonly rows: number) {}

  static async create(device: GPUDevice, buffers: AdvanceBuffers, rows: number): Promise<DecodeAdvance> {
    const order = [buffers.chosen, buffers.ids, buffers.pos, buffers.seqlens, buffers.total];
    const kernel = await BoundKernel.create(device, "decode_advance", source, order, packParams("u", [rows]));
    return new DecodeAdvance(kernel, rows);
  }

  encode(enc: GPUCommandEncoder): void {
    this.kernel.encode(enc, Math.ceil(this.rows / 64));
  }

  destroy(): void {
    this.kernel.destroy();
  }
}
