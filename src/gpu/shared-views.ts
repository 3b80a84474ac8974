// dawn.node (the npm package `webgpu`, Chrome's engine outside Chrome) crashes on data that lives in
// a SharedArrayBuffer: GPUQueue.writeBuffer with a view of one kills Deno with a segmentation fault
// (Node: a segmentation fault or "Invalid argument"). onnxruntime-web's threaded WebAssembly heap is
// such a buffer, and ORT uploads every input and initializer from a view of it, so the policy died at
// its first session.run on Dawn. The WebGPU API's only calls that take caller memory are
// GPUQueue.writeBuffer and GPUQueue.writeTexture (AllowSharedBufferSource); this wraps both so a
// shared source is copied into a plain buffer first, with the same offset and size semantics.

/** The copy of `data` in a plain (non-shared) buffer when it is shared, else `data` itself. */
export function unshared<T>(data: T): T {
  if (typeof SharedArrayBuffer === "undefined") return data;
  if (data instanceof SharedArrayBuffer) {
    const out = new ArrayBuffer(data.byteLength);
    new Uint8Array(out).set(new Uint8Array(data));
    return out as T;
  }
  if (ArrayBuffer.isView(data) && data.buffer instanceof SharedArrayBuffer) {
    // A typed array keeps its type (writeBuffer counts dataOffset and size in its elements);
    // a DataView becomes bytes (it counts in bytes, as a Uint8Array does).
    if (data instanceof DataView) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength).slice() as T;
    return (data as unknown as { slice(): T }).slice();
  }
  return data;
}

const PATCHED = Symbol.for("rlvr.sharedViewCopy");

interface QueueProto {
  writeBuffer(buffer: GPUBuffer, offset: number, data: unknown, dataOffset?: number, size?: number): void;
  writeTexture(destination: unknown, data: unknown, layout: unknown, size: unknown): void;
  [PATCHED]?: boolean;
}

/**
 * Makes `queueProto` (an engine's GPUQueue.prototype) copy shared sources before writeBuffer and
 * writeTexture. Idempotent. Returns whether it patched now.
 */
export function copySharedViewsOn(queueProto: object): boolean {
  const q = queueProto as QueueProto;
  if (q[PATCHED]) return false;
  const writeBuffer = q.writeBuffer;
  const writeTexture = q.writeTexture;
  Object.defineProperty(q, "writeBuffer", {
    configurable: true,
    writable: true,
    value: function (this: GPUQueue, buffer: GPUBuffer, offset: number, data: unknown, ...rest: number[]) {
      return writeBuffer.call(this, buffer, offset, unshared(data), ...rest);
    },
  });
  if (typeof writeTexture === "function") {
    Object.defineProperty(q, "writeTexture", {
      configurable: true,
      writable: true,
      value: function (this: GPUQueue, destination: unknown, data: unknown, layout: unknown, size: unknown) {
        return writeTexture.call(this, destination, unshared(data), layout, size);
      },
    });
  }
  Object.defineProperty(q, PATCHED, { value: true });
  return true;
}
