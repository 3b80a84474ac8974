// The policy's LoRA inputs: the graph's `lora.{layer}.{target}.A/B` (and `lora_scale`) feeds for an
// adapter given as tensors (PEFT names) or as GPU buffers of the policy's device (the trainer's), and,
// on WebGPU, CPU tensors uploaded once per adapter instead of on every run.
import type { ModelConfig } from "./config.ts";
import { type LoraAdapter, loraKey, type LoraTarget, targetDims, validateAdapter } from "./lora.ts";
import { shortTarget } from "./onnx/decoder.ts";
import { ort } from "./onnx/ort.ts";
import { GPU_STORAGE_COPY } from "./kv-rows.ts";

/** An adapter whose tensors live in GPU buffers of the policy's device (PEFT layout, f32, row-major). */
export interface GpuLoraAdapter {
  r: number;
  alpha: number;
  targets: readonly LoraTarget[];
  /** Keyed by PEFT names (`loraKey(layer, target, "A" | "B")`): A (r, in), B (out, r). */
  buffers: Map<string, GPUBuffer>;
}

/** The adapter feeds of one policy graph. */
export class AdapterFeeds {
  /** The feeds as set (CPU tensors, or GPU tensors over the caller's buffers). */
  private feeds: Record<string, ort.Tensor> = {};
  /** GPU copies of `feeds`' CPU tensors on WebGPU, made at the first run after each set. */
  private resident: { of: Record<string, ort.Tensor>; feeds: Record<string, ort.Tensor>; made: ort.Tensor[] } | null =
    null;
  /** Name of the adapter in use, or null. */
  name: string | null = null;

  constructor(private cfg: ModelConfig, private loraTargets: readonly LoraTarget[], private loraScale: number | null) {
    this.set(null);
  }

  /**
   * Uses `adapter` (PEFT names) from the next run on, or none. Targets the graph has no inputs for,
   * or mis-shaped tensors, throw and leave the current adapter in use.
   */
  set(adapter: LoraAdapter | null, name: string | null = null): void {
    if (adapter) {
      validateAdapter(this.cfg, adapter);
      this.checkTargets(adapter.targets);
      this.checkScale(adapter);
    }
    this.use(adapter, name, (key, dims) => {
      const t = adapter?.tensors.get(key);
      if (!t) throw new Error(`LoRA adapter: missing tensor ${key}`); // validateAdapter already checked
      return new ort.Tensor("float32", t.data.slice(), dims);
    });
  }

  /** Uses an adapter whose tensors are GPU buffers: no copy, later writes into them are seen by the next run. */
  setBuffers(adapter: GpuLoraAdapter, name: string | null = null): void {
    this.checkTargets(adapter.targets);
    this.checkScale(adapter);
    this.use(adapter, name, (key, dims) => {
      const buf = adapter.buffers.get(key);
      if (!buf) throw new Error(`LoRA adapter: missing buffer ${key}`);
      const bytes = dims[0] * dims[1] * 4;
      if (buf.size < bytes) {
        throw new Error(`LoRA adapter: buffer ${key} has ${buf.size} bytes, [${dims.join(", ")}] f32 needs ${bytes}`);
      }
      return ort.Tensor.fromGpuBuffer(buf, { dataType: "float32", dims });
    });
  }

  private checkScale(adapter: { r: number; alpha: number }): void {
    if (this.loraScale === null || !this.loraTargets.length) return;
    const s = adapter.alpha / adapter.r;
    if (!(Math.abs(s - this.loraScale) <= 1e-6 * this.loraScale)) {
      throw new Error(
        `LoRA adapter: alpha / r = ${adapter.alpha} / ${adapter.r} = ${s}, but this policy's graph fixes it at ${this.loraScale} (loraScale)`,
      );
    }
  }

  private checkTargets(targets: readonly LoraTarget[]): void {
    const missing = targets.filter((t) => !this.loraTargets.includes(t));
    if (missing.length) {
      throw new Error(
        `LoRA adapter targets ${missing.join(", ")} but this policy was built with LoRA inputs for [${
          this.loraTargets.join(", ")
        }]; create it with loraTargets covering the adapter`,
      );
    }
  }

  private use(
    adapter: { r: number; alpha: number; targets: readonly LoraTarget[] } | null,
    name: string | null,
    tensor: (key: string, dims: [number, number]) => ort.Tensor,
  ): void {
    const feeds: Record<string, ort.Tensor> = {};
    if (this.loraTargets.length && this.loraScale === null) {
      feeds.lora_scale = new ort.Tensor("float32", Float32Array.of(adapter ? adapter.alpha / adapter.r : 0), [1]);
    }
    for (let l = 0; l < this.cfg.numLayers; l++) {
      for (const t of this.loraTargets) {
        const [out, inp] = targetDims(this.cfg, t);
        const base = `lora.${l}.${shortTarget(t)}`;
        if (adapter && adapter.targets.includes(t)) {
          feeds[`${base}.A`] = tensor(loraKey(l, t, "A"), [adapter.r, inp]);
          feeds[`${base}.B`] = tensor(loraKey(l, t, "B"), [out, adapter.r]);
        } else {
          // A rank-1 zero adapter: the delta is exactly zero.
          feeds[`${base}.A`] = new ort.Tensor("float32", new Float32Array(inp), [1, inp]);
          feeds[`${base}.B`] = new ort.Tensor("float32", new Float32Array(out), [out, 1]);
        }
      }
    }
    this.feeds = feeds;
    this.name = adapter ? (name ?? "adapter") : null;
  }

  /**
   * The adapter inputs as fed: on WebGPU (`device` given), CPU tensors are uploaded once per adapter
   * into buffers of the session's device, so a run does not upload them again (they were ~110 inputs,
   * each its own upload and queue submit, per decoding step with LoRA on every target). Call it where
   * no run is using the copies it frees (inside the policy's queue).
   */
  inputs(device: GPUDevice | null): Record<string, ort.Tensor> {
    if (!device) return this.feeds;
    if (this.resident?.of === this.feeds) return this.resident.feeds;
    this.dispose();
    const feeds: Record<string, ort.Tensor> = {}, made: ort.Tensor[] = [];
    for (const [name, t] of Object.entries(this.feeds)) {
      const data = t.location === "cpu" ? t.data : null;
      if (!(data instanceof Float32Array)) {
        feeds[name] = t;
        continue;
      }
      // Sizes rounded up to 16 bytes as ORT's own buffers are: its kernels bind a 4-byte scalar as a vec4.
      const buf = device.createBuffer({
        label: `policy-${name}`,
        size: Math.ceil(Math.max(4, data.byteLength) / 16) * 16,
        usage: GPU_STORAGE_COPY,
      });
      device.queue.writeBuffer(buf, 0, data);
      const g = ort.Tensor.fromGpuBuffer(buf, { dataType: "float32", dims: t.dims, dispose: () => buf.destroy() });
      feeds[name] = g;
      made.push(g);
    }
    this.resident = { of: this.feeds, feeds, made };
    return feeds;
  }

  /** Frees the GPU copies. */
  dispose(): void {
    for (const t of this.resident?.made ?? []) t.dispose();
    this.resident = null;
  }
}
