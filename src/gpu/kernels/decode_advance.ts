// Wrapper of decode_advance.wgsl: bound once per captured decoder, one dispatch per decoding step.
import { bindGroupLayout, computePipeline } from "../device.ts";
import { packParams } from "./layer-common.ts";
import source from "./decode_advance.wgsl" with { type: "text" };

const UNIFORM = 0x0040, COPY_DST = 0x0008;

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
  private constructor(
    private pipeline: GPUComputePipeline,
    private bind: GPUBindGroup,
    private params: GPUBuffer,
    readonly rows: number,
  ) {}

  static async create(device: GPUDevice, buffers: AdvanceBuffers, rows: number): Promise<DecodeAdvance> {
    const pipeline = await computePipeline(device, "decode_advance", source);
    const params = device.createBuffer({ label: "decode-advance-params", size: 16, usage: UNIFORM | COPY_DST });
    device.queue.writeBuffer(params, 0, packParams("u", [rows]));
    const order = [buffers.chosen, buffers.ids, buffers.pos, buffers.seqlens, buffers.total, params];
    const bind = device.createBindGroup({
      label: "decode-advance-bind",
      layout: bindGroupLayout(pipeline),
      entries: order.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    return new DecodeAdvance(pipeline, bind, params, rows);
  }

  encode(enc: GPUCommandEncoder): void {
    const pass = enc.beginComputePass({ label: "decode_advance" });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bind);
    pass.dispatchWorkgroups(Math.ceil(this.rows / 64));
    pass.end();
  }

  destroy(): void {
    this.params.destroy();
  }
}
