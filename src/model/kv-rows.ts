// The policy's KV caches as tensors, and the row copies the sampler and the policy make of them:
// joining rows of several caches into one (repeating a prompt's rows, dropping finished samples,
// joining the runs of a cut prefill), buffer to buffer on the GPU, via the CPU on WASM; and the
// logits of consecutive row runs as one tensor.
import { ort } from "./onnx/ort.ts";

/** Per-layer key and value tensors (B, K, T, D) in layer order: key0, value0, key1, ... */
export interface KvCache {
  tensors: ort.Tensor[];
  batch: number;
  length: number;
}

/** GPUBufferUsage STORAGE | COPY_SRC | COPY_DST (the constants object is not in every runtime's globals). */
export const GPU_STORAGE_COPY = 0x0080 | 0x0004 | 0x0008;

/** Frees the GPU buffers of a cache that will not be fed again. */
export function releaseCache(cache: KvCache): void {
  for (const t of cache.tensors) if (t.location === "gpu-buffer") t.dispose();
}

/**
 * One cache of the chosen rows of each piece in turn (rows of equal length), the pieces' caches
 * released: GPU caches copied buffer to buffer on `device` (the session's: the caller's when it gave
 * one), one copy per run of consecutive rows; CPU caches (WASM) copied on the CPU.
 */
export async function joinCacheRows(
  device: GPUDevice | null,
  pieces: readonly { cache: KvCache; rows: readonly number[] }[],
): Promise<KvCache> {
  const batch = pieces.reduce((n, p) => n + p.rows.length, 0);
  const onGpu = pieces.some((p) => p.cache.tensors.some((t) => t.location === "gpu-buffer"));
  const gpu = onGpu ? device : null;
  const enc = gpu?.createCommandEncoder({ label: "kv-gather-rows" });
  const tensors: ort.Tensor[] = [];
  for (let j = 0; j < pieces[0].cache.tensors.length; j++) {
    const first = pieces[0].cache.tensors[j];
    const [, K, T, D] = first.dims;
    const dims = [batch, K, T, D];
    const elems = K * T * D;
    if (first.location === "gpu-buffer" && gpu && enc) {
      const rowBytes = elems * (first.type === "float16" ? 2 : 4);
      const buf = gpu.createBuffer({ label: "kv-rows", size: Math.max(4, batch * rowBytes), usage: GPU_STORAGE_COPY });
      let at = 0;
      for (const { cache, rows } of pieces) {
        const t = cache.tensors[j];
        // Runs of consecutive source rows are one copy (a repeat of 1, or keeping a contiguous block).
        for (let i = 0; i < rows.length;) {
          let k = i + 1;
          while (k < rows.length && rows[k] === rows[k - 1] + 1) k++;
          enc.copyBufferToBuffer(t.gpuBuffer, rows[i] * rowBytes, buf, (at + i) * rowBytes, (k - i) * rowBytes);
          i = k;
        }
        at += rows.length;
      }
      const dataType = first.type === "float16" ? "float16" : "float32";
      tensors.push(ort.Tensor.fromGpuBuffer(buf, { dataType, dims, dispose: () => buf.destroy() }));
    } else {
      const f32 = first.type === "float32";
      const dst = f32 ? new Float32Array(batch * elems) : new Uint16Array(batch * elems);
      let at = 0;
      for (const { cache, rows } of pieces) {
        const data = await cache.tensors[j].getData();
        if (!ArrayBuffer.isView(data)) throw new Error(`KV cache of type ${cache.tensors[j].type}`);
        // float16 comes back as Float16Array where the runtime has one (Deno does): take its bits.
        const src = data instanceof Float32Array
          ? data
          : new Uint16Array(data.buffer, data.byteOffset, data.byteLength / 2);
        rows.forEach((r, i) => dst.set(src.subarray(r * elems, (r + 1) * elems), (at + i) * elems));
        at += rows.length;
      }
      tensors.push(
        dst instanceof Float32Array ? new ort.Tensor("float32", dst, dims) : new ort.Tensor("float16", dst, dims),
      );
    }
  }
  if (gpu && enc) {
    gpu.queue.submit([enc.finish()]);
    // ORT may reuse the released buffers at once; let the copies finish first.
    await gpu.queue.onSubmittedWorkDone();
  }
  for (const p of pieces) releaseCache(p.cache);
  return { tensors, batch, length: pieces[0].cache.length };
}

/** The float32 data of a logits tensor (read back and freed when it is on the GPU). */
export async function logitsData(t: ort.Tensor): Promise<Float32Array> {
  const data = t.location === "gpu-buffer" ? await t.getData(true) : t.data;
  if (!(data instanceof Float32Array)) throw new Error("policy: logits are not float32");
  return data;
}

/** (rows, keep, V) logits of consecutive row runs as one tensor (GPU ones copied on `device`); the parts are freed. */
export async function concatLogits(device: GPUDevice | null, parts: readonly ort.Tensor[]): Promise<ort.Tensor> {
  const [, keep, V] = parts[0].dims;
  const rows = parts.reduce((n, p) => n + p.dims[0], 0);
  let logits: ort.Tensor;
  if (parts[0].location === "gpu-buffer" && device) {
    const buf = device.createBuffer({ label: "policy-logits", size: rows * keep * V * 4, usage: GPU_STORAGE_COPY });
    const enc = device.createCommandEncoder({ label: "policy-logits-concat" });
    let at = 0;
    for (const p of parts) {
      const bytes = p.dims[0] * keep * V * 4;
      enc.copyBufferToBuffer(p.gpuBuffer, 0, buf, at, bytes);
      at += bytes;
    }
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
    logits = ort.Tensor.fromGpuBuffer(buf, {
      dataType: "float32",
      dims: [rows, keep, V],
      dispose: () => buf.destroy(),
    });
  } else {
    const data = new Float32Array(rows * keep * V);
    let at = 0;
    for (const p of parts) {
      data.set(await logitsData(p), at);
      at += p.size;
    }
    logits = new ort.Tensor("float32", data, [rows, keep, V]);
  }
  for (const p of parts) p.dispose();
  return logits;
}
