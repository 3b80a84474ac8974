// onnxruntime-web set-up shared by every session: the WebGPU build, where its .wasm lives under
// Deno, and the provider choice with a visible fallback to WASM.
import * as ort from "onnxruntime-web/webgpu";

export { ort };

/** Execution providers a policy session can run on. */
export const PROVIDERS = ["webgpu", "wasm"] as const;
export type Provider = (typeof PROVIDERS)[number];

let configured = false;

/** Points ORT at its .wasm files under Deno (node_modules) and keeps it single-threaded there. */
export function configureOrt(): void {
  if (configured) return;
  configured = true;
  if ("Deno" in globalThis) {
    // Deno has no page origin to resolve the wasm URL against; the package folder is a file URL.
    // Through a variable, so bundlers (Vite's `new URL(literal, import.meta.url)` asset handling)
    // leave this Deno-only path alone.
    const dist = "../../../node_modules/onnxruntime-web/dist/";
    ort.env.wasm.wasmPaths = new URL(dist, import.meta.url).href;
    ort.env.wasm.numThreads = 1;
  }
  ort.env.logLevel = "error";
}

/** True when `navigator.gpu` exists (the WebGPU EP can be tried). */
export function hasWebGpu(): boolean {
  const nav = (globalThis as { navigator?: { gpu?: unknown } }).navigator;
  return !!nav?.gpu;
}

/**
 * Session options every session gets: onnxruntime's session logger defaults to warnings, which its wasm build prints
 * as console errors — two lines of VerifyEachNodeIsAssignedToAnEp per session (shape ops placed on the CPU on
 * purpose), about ten per model load in the page. Errors (3) and fatal errors still print.
 */
export const QUIET_SESSION = { logSeverityLevel: 3 } as const;

/**
 * Creates a session from model bytes on `preferred`; when WebGPU is missing or fails, falls back to
 * WASM and reports why through `onNote` (the caller prints it), returning the provider used.
 * `webgpuOpts` apply to the WebGPU session only (such as outputs kept in GPU buffers); `device`
 * makes the session run on that GPUDevice (shared with the trainer) instead of its own.
 */
export async function createSession(
  bytes: Uint8Array,
  preferred: Provider,
  onNote: (msg: string) => void,
  opts: Omit<ort.InferenceSession.SessionOptions, "executionProviders"> = {},
  webgpuOpts: Omit<ort.InferenceSession.SessionOptions, "executionProviders"> = {},
  device?: GPUDevice,
): Promise<{ session: ort.InferenceSession; provider: Provider }> {
  configureOrt();
  if (preferred === "webgpu") {
    if (!hasWebGpu()) {
      onNote("note: navigator.gpu is missing; the policy runs on onnxruntime-web's WASM (CPU) provider instead of WebGPU");
    } else {
      try {
        // onnxruntime-web reads `device` from the WebGPU provider option (not in its typings yet):
        // the session then shares the caller's GPUDevice and accepts its buffers as tensors.
        const ep: { name: string; device?: GPUDevice } = device ? { name: "webgpu", device } : { name: "webgpu" };
        return { session: await ort.InferenceSession.create(bytes, { ...QUIET_SESSION, ...opts, ...webgpuOpts, executionProviders: [ep] }), provider: "webgpu" };
      } catch (e) {
        onNote(`note: the WebGPU provider failed (${e instanceof Error ? e.message : String(e)}); falling back to WASM (CPU)`);
      }
    }
  }
  return { session: await ort.InferenceSession.create(bytes, { ...QUIET_SESSION, ...opts, executionProviders: ["wasm"] }), provider: "wasm" };
}
