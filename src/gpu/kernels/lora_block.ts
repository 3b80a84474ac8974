// Wrapper of lora_block.wgsl: a captured decoder's packed LoRA inputs (decoder.ts LoraStack), filled from the parts'
// A and B buffers on the GPU (model/captured.ts). One per captured session; a part's placement is fixed when the
// session is made (its uniform written once), `encode` records the moves of one adapter's parts in one pass.
import { bindGroupLayout, computePipeline } from "../device.ts";
import { packParams } from "./layer-common.ts";
import source from "./lora_block.wgsl" with { type: "text" };

const UNIFORM = 0x0040, COPY_DST = 0x0008;
const WG = 256, MAX_X = 65535;

/**
 * Where one part's (rows, cols) values go in a packed input: element (i, j) to base + i rowStride + j colStride
 * + t repStride for t < reps (lora_block.wgsl).
 */
export interface LoraBlockPlace {
  rows: number;
  cols: number;
  base: number;
  rowStride: number;
  colStride: number;
  reps: number;
  repStride: number;
}

/** The part moves of a captured session's packed LoRA inputs. */
export class LoraBlocks {
  private constructor(
    private device: GPUDevice,
    private pipeline: GPUComputePipeline,
    private places: LoraBlockPlace[],
    private params: GPUBuffer[],
  ) {}

  /** The moves for `places` (index i in encode's moves refers to places[i]). */
  static async create(device: GPUDevice, places: LoraBlockPlace[]): Promise<LoraBlocks> {
    const pipeline = await computePipeline(device, "lora_block", source);
    const params = places.map((p, i) => {
      const buf = device.createBuffer({ label: `lora-block-params-${i}`, size: 32, usage: UNIFORM | COPY_DST });
      device.queue.writeBuffer(
        buf,
        0,
        packParams("uuuuuuuu", [p.rows, p.cols, p.base, p.rowStride, p.colStride, p.reps, p.repStride, 0]),
      );
      return buf;
    });
    return new LoraBlocks(device, pipeline, places, params);
  }

  /** Records, in one compute pass, the move of each `src` (rows, cols) f32 into `dst` f32 at its place. */
  encode(enc: GPUCommandEncoder, moves: readonly { place: number; src: GPUBuffer; dst: GPUBuffer }[]): void {
    if (!moves.length) return;
    const layout = bindGroupLayout(this.pipeline);
    const pass = enc.beginComputePass({ label: "lora_block" });
    pass.setPipeline(this.pipeline);
    for (const m of moves) {
      const p = this.places[m.place];
      const groups = Math.ceil((p.rows * p.cols) / WG);
      pass.setBindGroup(
        0,
        this.device.createBindGroup({
          label: "lora-block-bind",
          layout,
          entries: [m.src, m.dst, this.params[m.place]].map((buffer, binding) => ({ binding, resource: { buffer } })),
        }),
      );
      pass.dispatchWorkgroups(Math.min(groups, MAX_X), Math.ceil(groups / MAX_X));
    }
    pass.end();
  }

  destroy(): void {
    for (const b of this.params) b.destroy();
  }
}
