// Wrapper of kv_load.wgsl: one per captured decoder (its K, T, D fixed); `setRows` writes a load's rows and
// prefill width, `encode` records the move of one cache tensor (a dispatch and a bind group per tensor).
import { bindGroupLayout, computePipeline } from "../device.ts";
import { packParams } from "./layer-common.ts";
import source from "./kv_load.wgsl" with { type: "text" };

const STORAGE = 0x0080, UNIFORM = 0x0040, COPY_DST = 0x0008;
const WG = 256;

/** The cache load of a captured decoder with `batch` rows, K heads, T columns and head dim D. */
export class KvLoad {
  private n = 0;
  private width = 0;

  private constructor(
    private device: GPUDevice,
    private pipeline: GPUComputePipeline,
    private rowsBuf: GPUBuffer,
    private params: GPUBuffer,
    readonly batch: number,
    private K: number,
    private T: number,
    private D: number,
  ) {}

  static async create(device: GPUDevice, dims: { batch: number; K: number; T: number; D: number }): Promise<KvLoad> {
    const pipeline = await computePipeline(device, "kv_load", source);
    const rowsBuf = device.createBuffer({
      label: "kv-load-rows",
      size: Math.max(16, 8 * dims.batch),
      usage: STORAGE | COPY_DST,
    });
    const params = device.createBuffer({ label: "kv-load-params", size: 32, usage: UNIFORM | COPY_DST });
    return new KvLoad(device, pipeline, rowsBuf, params, dims.batch, dims.K, dims.T, dims.D);
  }

  /**
   * The next load: decoding row r from prefill row src[r], its last lens[r] of P columns (`from0`: its
   * first lens[r]). Written with queue.writeBuffer: submit the encoder of this load's encode calls before
   * calling setRows again.
   */
  setRows(P: number, src: readonly number[], lens: readonly number[], from0 = false): void {
    if (src.length !== lens.length || src.length > this.batch) {
      throw new Error(`KvLoad: ${src.length} rows (${lens.length} lengths) for a batch of ${this.batch}`);
    }
    if (lens.some((l) => !(l >= 1 && l <= P && l <= this.T))) {
      throw new Error(`KvLoad: lengths must be 1..${Math.min(P, this.T)}`);
    }
    this.n = src.length;
    this.width = P;
    if (this.n === 0) return;
    this.device.queue.writeBuffer(this.rowsBuf, 0, Uint32Array.from(src.flatMap((s, r) => [s, lens[r]])));
    this.device.queue.writeBuffer(
      this.params,
      0,
      packParams("uuuuuuuu", [this.n, this.K, P, this.T, this.D, from0 ? 1 : 0, 0, 0]),
    );
  }

  /** Records the move from `src` (R, K, P, D) f32 into `dst` (batch, K, T, D) f32 for the rows of setRows. */
  encode(enc: GPUCommandEncoder, src: GPUBuffer, dst: GPUBuffer): void {
    if (this.n === 0) return;
    const bind = this.device.createBindGroup({
      label: "kv-load-bind",
      layout: bindGroupLayout(this.pipeline),
      entries: [src, dst, this.rowsBuf, this.params].map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
    const pass = enc.beginComputePass({ label: "kv_load" });
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, bind);
    pass.dispatchWorkgroups(Math.ceil((this.width * this.D) / WG), this.n * this.K);
    pass.end();
  }

  destroy(): void {
    this.rowsBuf.destroy();
    this.params.destroy();
  }
}
